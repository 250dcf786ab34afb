package fuzzrt

import (
	"syscall"
	"time"
)

// cpuTime is the user and kernel CPU time this process has used.
func cpuTime() time.Duration {
	var creation, exit, kernel, user syscall.Filetime
	self, _ := syscall.GetCurrentProcess()
	if syscall.GetProcessTimes(self, &creation, &exit, &kernel, &user) != nil {
		return 0
	}
	// Durations in Filetimes count 100 ns intervals.
	ticks := func(f syscall.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration((ticks(kernel) + ticks(user)) * 100)
}
