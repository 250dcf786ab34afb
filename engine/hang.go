package engine

import (
	"sync/atomic"
	"time"
)

// Hang limits when -timeout is not set. A target's inputs usually run in
// microseconds; one still running after half a second is a suspected hang. A target
// whose inputs are slow by nature gets room in proportion: ten times its slowest
// input so far. A suspected hang is one only if it is still running at go test's
// bound, hangCap; one that finishes first was a slow input, which go test passes,
// and is said as a warning (see hangWatch).
const (
	hangFloor   = 500 * time.Millisecond
	hangCap     = 10 * time.Second // go test's bound; also the limit before any input has returned
	hangSlowest = 10               // times the slowest execution that returned

	// growthCap is the limit for an execution that is growing the worker's memory
	// (see workerProc.watch): a 1 GB stack takes seconds to overflow, many more on
	// a loaded machine, and ends as a stack overflow or oom, the better report.
	growthCap = 30 * time.Second
)

// hangLimit is one session's rule for when a running execution is a hang: fixed
// (the -timeout option) or adaptive, from the slowest execution any of the
// session's workers has reported through shared memory. It is shared by the
// session's watchdogs; reset when a new binary is in place.
type hangLimit struct {
	fixed   time.Duration
	slowest atomic.Int64 // nanoseconds; 0 = no execution has returned yet
}

// after is how long an execution may run before it is a hang (-timeout), or a
// suspected one (adaptive; see hangWatch).
func (h *hangLimit) after() time.Duration {
	if h.fixed > 0 {
		return h.fixed
	}
	s := time.Duration(h.slowest.Load())
	if s == 0 {
		return hangCap
	}
	return min(max(hangSlowest*s, hangFloor), hangCap)
}

// observe records a worker's slowest execution.
func (h *hangLimit) observe(d time.Duration) {
	for {
		cur := h.slowest.Load()
		if int64(d) <= cur || h.slowest.CompareAndSwap(cur, int64(d)) {
			return
		}
	}
}

// reset forgets what was observed: a new binary may be slower.
func (h *hangLimit) reset() { h.slowest.Store(0) }
