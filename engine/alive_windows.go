package engine

import "syscall"

// processAlive reports whether process pid is running. On Windows a process
// object outlives its process while anyone holds a handle to it (an antivirus,
// a parent that has not waited; Wine keeps it a while too), so opening it is no
// answer: its exit code is, STILL_ACTIVE while it runs (a process that exited
// with that very code passes for alive). A process this one may not open
// (another user's) is taken as alive: its directory stays.
func processAlive(pid int) bool {
	const (
		processQueryLimitedInformation = 0x1000 // not in package syscall
		stillActive                    = 259
	)
	h, err := syscall.OpenProcess(processQueryLimitedInformation, false, uint32(pid))
	if err != nil {
		return err == syscall.ERROR_ACCESS_DENIED
	}
	defer syscall.CloseHandle(h)
	var code uint32
	if err := syscall.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	return code == stillActive
}
