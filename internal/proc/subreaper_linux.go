package proc

import "syscall"

// BecomeSubreaper makes the calling process the child subreaper of its
// descendants (prctl PR_SET_CHILD_SUBREAPER): a process orphaned below it, such
// as a worker or a compiler left by a daemon killed with SIGKILL, is adopted by
// it rather than by init, so Descendants(os.Getpid()) still lists it.
func BecomeSubreaper() error {
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return errno
	}
	return nil
}
