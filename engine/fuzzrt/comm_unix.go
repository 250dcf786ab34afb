//go:build unix

package fuzzrt

import (
	"fmt"
	"os"
)

// pipes returns the coordinator's two pipes: its commands (fd 3) and our
// messages (fd 4).
func pipes() (in, out *os.File, err error) {
	in, out = os.NewFile(3, "fuzzls-in"), os.NewFile(4, "fuzzls-out")
	if in == nil || out == nil {
		return nil, nil, fmt.Errorf("file descriptors 3 and 4 are not open")
	}
	return in, out, nil
}
