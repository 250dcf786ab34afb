package engine

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
)

// passPipes hands a test binary its two pipe ends as inherited handles named by
// fuzzrt.EnvHandles (Windows passes no file descriptors beyond the standard three),
// as internal/fuzz's sys_windows.go does.
func passPipes(cmd *exec.Cmd, in, out *os.File) {
	syscall.SetHandleInformation(syscall.Handle(in.Fd()), syscall.HANDLE_FLAG_INHERIT, 1)
	syscall.SetHandleInformation(syscall.Handle(out.Fd()), syscall.HANDLE_FLAG_INHERIT, 1)
	cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%x,%x", fuzzrt.EnvHandles, in.Fd(), out.Fd()))
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.AdditionalInheritedHandles = []syscall.Handle{syscall.Handle(in.Fd()), syscall.Handle(out.Fd())}
}

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
