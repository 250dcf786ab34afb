package engines

import (
	"os"
	"os/exec"
)

// ownGroup does nothing: Windows has no process groups to signal.
func ownGroup(*exec.Cmd) {}

// signalGroup kills the process: Windows cannot interrupt another.
func signalGroup(p *os.Process, _ os.Signal) { p.Kill() }
