//go:build unix

package fuzzrt

import (
	"os"
	"os/exec"
)

// PassPipes hands the test binary cmd runs its two pipe ends: the coordinator's
// commands as its fd 3 (in), its messages as fd 4 (out).
func PassPipes(cmd *exec.Cmd, in, out *os.File) {
	cmd.ExtraFiles = []*os.File{in, out}
}
