package fuzzrt

import (
	"fmt"
	"os"
)

// pipes returns the coordinator's two pipes, whose inherited handles EnvHandles
// names: its commands and our messages.
func pipes() (in, out *os.File, err error) {
	var hin, hout uintptr
	if _, err := fmt.Sscanf(os.Getenv(EnvHandles), "%x,%x", &hin, &hout); err != nil {
		return nil, nil, fmt.Errorf("%s=%q: %v", EnvHandles, os.Getenv(EnvHandles), err)
	}
	return os.NewFile(hin, "fuzzls-in"), os.NewFile(hout, "fuzzls-out"), nil
}
