// Command testmain runs daemon.Serve on standard input and output, as
// `fuzzls serve` will; the daemon's tests build it to test the real process
// (exit on end of input, no leftover processes) until cmd/fuzzls has serve.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"fuzzls.dev/fuzzls/daemon"
)

func main() {
	err := daemon.Serve(context.Background(), os.Stdin, os.Stdout, daemon.Options{
		Log:                os.Stderr,
		EnableTestCommands: os.Getenv("FUZZLS_TESTMAIN_TESTCOMMANDS") == "1",
	})
	switch {
	case err == nil:
	case errors.Is(err, daemon.ErrNoShutdown):
		os.Exit(1)
	default:
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
