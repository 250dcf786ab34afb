//go:build unix

package engine

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, which killGroup kills with
// whatever it started; on Linux (unless built with fuzzls_portable) the kernel also
// kills it when we die, though a worker notices that itself through its pipe.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
}

func killGroup(p *os.Process) { syscall.Kill(-p.Pid, syscall.SIGKILL) }

// lowerPriority does nothing: a worker lowers its own threads' nice value
// (fuzzrt/priority.go).
func lowerPriority(*exec.Cmd, int) {}

// signalQuit sends SIGQUIT, which the Go runtime answers with every goroutine's
// stack; false where there is no such signal, or built with fuzzls_portable.
func signalQuit(p *os.Process) bool { return !portable && p.Signal(syscall.SIGQUIT) == nil }
