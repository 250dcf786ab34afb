//go:build unix

package engines

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that signalGroup reaches
// what it started (both engines' workers).
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func signalGroup(p *os.Process, sig os.Signal) { syscall.Kill(-p.Pid, sig.(syscall.Signal)) }
