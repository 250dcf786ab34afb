package fuzzrt

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// PassPipes hands the test binary cmd runs its two pipe ends, the coordinator's
// commands (in) and its messages (out), as inherited handles that EnvHandles names:
// Windows passes no file descriptors beyond the standard three. As internal/fuzz's
// sys_windows.go.
func PassPipes(cmd *exec.Cmd, in, out *os.File) {
	syscall.SetHandleInformation(syscall.Handle(in.Fd()), syscall.HANDLE_FLAG_INHERIT, 1)
	syscall.SetHandleInformation(syscall.Handle(out.Fd()), syscall.HANDLE_FLAG_INHERIT, 1)
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%x,%x", EnvHandles, in.Fd(), out.Fd()))
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.AdditionalInheritedHandles = []syscall.Handle{syscall.Handle(in.Fd()), syscall.Handle(out.Fd())}
}
