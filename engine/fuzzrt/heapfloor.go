package fuzzrt

import (
	"os"
	"strconv"
)

// The heap floor. The garbage collector starts a cycle when the heap has grown by
// GOGC% of what is live, and a fuzz target keeps little alive between executions:
// a parser that allocates a 4 MiB buffer per input then collects on nearly every
// execution, and each cycle hands the freed pages back to the kernel only to fault
// them in again. Keeping a large never-written allocation alive (a ballast) makes
// a cycle start once per floor's worth of allocation instead. Its pages are never
// touched, so it costs address space, not memory; the garbage it lets pile up
// between cycles is bounded by the floor, which the coordinator sizes against the
// worker's memory limit.

// EnvHeapFloor is the floor in MiB, set by the coordinator unless the user chose
// the collector's settings (GOGC, GOMEMLIMIT) themselves.
const EnvHeapFloor = "FUZZLS_HEAPFLOOR"

var ballast []byte

// setHeapFloor allocates the ballast the coordinator asked for, if any.
func setHeapFloor() {
	mb, err := strconv.Atoi(os.Getenv(EnvHeapFloor))
	if err != nil || mb <= 0 {
		return
	}
	ballast = make([]byte, mb<<20)
}
