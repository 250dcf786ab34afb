//go:build unix

package fuzzrt

import "syscall"

// setNice sets the nice value of thread tid (0: the calling thread, or the
// process where nice values are per process).
func setNice(tid, nice int) { syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice) }
