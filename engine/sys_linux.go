//go:build linux

package engine

import "syscall"

// dieWithParent has the kernel kill the child when this process dies
// (Pdeathsig), a Linux extra: the child's own check is EOF on its command pipe.
func dieWithParent(a *syscall.SysProcAttr) {
	if !portable {
		a.Pdeathsig = syscall.SIGKILL
	}
}
