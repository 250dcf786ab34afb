package fuzzrt

import (
	"os"
	"strconv"
)

// Worker priority. In the editor, workers on every core compete with what the
// user is waiting for: the editor itself, gopls, and the build of the file just
// saved. A worker asked to (the daemon's do) lowers its scheduling priority, so
// that it gets the cores only when nothing else wants them. On Linux the nice value
// belongs to each thread, not to the process, and a new thread inherits its
// creator's: setting it on every thread there is when the worker starts covers the
// threads the runtime starts later too. On macOS it is the process's (thread 0 is
// the process). Windows has no nice value: the coordinator starts the worker in a
// lower priority class instead (engine/sys_windows.go), and setNice does nothing.

// EnvNice is the nice value a worker sets on its threads (1 to 19; unset or 0:
// unchanged).
const EnvNice = "FUZZLS_NICE"

// lowerPriority applies EnvNice, if set, to every thread of the process. The
// threads are listed twice: one could be started by a thread not yet lowered
// while the first pass runs.
func lowerPriority() {
	nice, err := strconv.Atoi(os.Getenv(EnvNice))
	if err != nil || nice <= 0 {
		return
	}
	nice = min(nice, 19)
	for range 2 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			// Not Linux, or no /proc: the calling thread at least.
			setNice(0, nice)
			return
		}
		for _, t := range tasks {
			if tid, err := strconv.Atoi(t.Name()); err == nil {
				setNice(tid, nice)
			}
		}
	}
}
