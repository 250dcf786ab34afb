package engine

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup does nothing: Windows has no process groups to kill (a job object
// would be one); a worker notices our death through its pipe.
func ownGroup(*exec.Cmd) {}

func killGroup(p *os.Process) { p.Kill() }

// lowerPriority starts a worker asked for a nice value in the below-normal
// priority class, Windows's nearest.
func lowerPriority(cmd *exec.Cmd, nice int) {
	if nice <= 0 {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	const belowNormalPriorityClass = 0x00004000
	cmd.SysProcAttr.CreationFlags |= belowNormalPriorityClass
}

// signalQuit is false: Windows has no SIGQUIT.
func signalQuit(*os.Process) bool { return false }
