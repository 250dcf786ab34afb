package engine

import (
	"embed"
	"io/fs"
)

// runtimeSources are fuzzrt's files, which every build copies into the user's module
// (instrument.BuildOptions.Runtime). Tests are filtered out at copy time.
//
//go:embed fuzzrt/*.go
var runtimeSources embed.FS

func runtimeFS() fs.FS {
	sub, err := fs.Sub(runtimeSources, "fuzzrt")
	if err != nil {
		panic(err) // the embed pattern above guarantees the directory
	}
	return sub
}
