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
	// growthBytes is how much an execution grows the worker's memory before it
	// is left to the memory or stack limit, up to growthCap.
	growthBytes = 64 << 20
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

// The watchdog's verdict. Every 50 ms a worker's watchdog (workerProc.watch)
// takes a probe — the execution counters from shared memory, the worker's memory
// and CPU time (per OS: /proc, or the worker's own figures) and the session's hang
// limit — and judge.next says what it means. Nothing here reads a clock or the
// worker: the verdict is a function of the probes alone, so unit tests feed it
// probes (hang_test.go). Where a hang or an oom is located, from the worker's stack
// samples, is crash.go's sampledFrames, a function of the samples alone likewise.

// probe is one reading of a worker.
type probe struct {
	wall              time.Duration // since the watchdog started
	started, finished uint64        // executions started and returned (shared memory)
	busy              bool          // the worker was asked to execute inputs
	mem               int64         // resident bytes
	cpu               time.Duration // CPU time the worker has used
	limit             time.Duration // the session's hang limit now (hangLimit.after)
	fixed             bool          // the limit is -timeout's, wall time
}

// verdict is what a probe means.
type verdict int

const (
	verdictNone    verdict = iota
	verdictSuspect         // an execution ran past the adaptive limit: read its input now
	verdictSlow            // the suspected execution returned: a slow input, no hang
	verdictOOM             // the worker's memory passed the limit
	verdictHang            // an execution ran past the limit (hangAt says which)
)

// judge is one worker's watchdog rule, with what it remembers between probes.
type judge struct {
	rssLimit int64 // bytes; 0 = none
	quick    bool  // see hangWatch

	last       uint64        // the running execution's number
	since      time.Duration // when it was first seen; -1 = none running
	memAtStart int64         // memory then
	cpuAtStart time.Duration // CPU time then
	recent     [4]int64      // memory at the last probes (a ring)
	probes     int
	grew       bool          // the running execution has grown memory by 64 MiB
	lastGrowth time.Duration // when it was last seen growing memory; -1 = never
	suspect    uint64        // the execution past the adaptive limit, still running; 0 = none
	hangAt     time.Duration // with verdictHang: the limit the execution ran past
}

func newJudge(rssLimit int64, quick bool) *judge {
	return &judge{rssLimit: rssLimit, quick: quick, since: -1, lastGrowth: -1}
}

// next judges one probe.
func (j *judge) next(p probe) verdict {
	before := j.recent[j.probes%len(j.recent)]
	j.recent[j.probes%len(j.recent)] = p.mem
	j.probes++
	if j.rssLimit > 0 && p.mem > j.rssLimit {
		return verdictOOM
	}
	res := verdictNone
	if j.suspect != 0 && (p.started != j.suspect || p.finished >= j.suspect) {
		// The suspected execution returned, and another runs or none.
		j.suspect = 0
		res = verdictSlow
	}
	if !p.busy || p.started == p.finished {
		j.since = -1
		return res
	}
	if p.started != j.last || j.since < 0 {
		j.last, j.since, j.memAtStart, j.cpuAtStart = p.started, p.wall, p.mem, p.cpu
		j.grew, j.lastGrowth = false, -1
		return res
	}
	// An execution that has grown the worker's memory by 64 MiB, or grew it in
	// the last second (2 MiB over 200 ms), is a deep recursion or an unbounded
	// allocation: it is left to the memory limit or the stack's, up to
	// growthCap, and ends as a stack overflow or oom, the more useful report.
	// The second rule matters on a loaded machine, where a recursion grows its
	// stack a few MiB per tick and stalls while the runtime copies it. A loop
	// that allocates nothing or only garbage stays flat. An explicit -timeout
	// is taken at its word.
	if p.mem-j.memAtStart >= growthBytes {
		j.grew = true
	}
	if before > 0 && p.mem-before >= 2<<20 {
		j.lastGrowth = p.wall
	}
	after := p.limit
	if !p.fixed && (j.grew || (j.lastGrowth >= 0 && p.wall-j.lastGrowth < time.Second)) {
		after = growthCap
	}
	running := p.wall - j.since
	if running <= after || starved(running, p.cpu-j.cpuAtStart, after, p.fixed) {
		return verdictNone
	}
	if !j.quick && !p.fixed && after < hangCap {
		// Suspected: it is a hang only if it is still running at go test's
		// bound, wall time as go test's.
		if running <= hangCap {
			if j.suspect == 0 {
				j.suspect = p.started
				return verdictSuspect
			}
			return verdictNone
		}
		after = hangCap
	}
	j.hangAt = after
	return verdictHang
}

// starved reports whether an execution past its adaptive hang limit after has
// had too little of the CPU for that to mean much: less than half the limit in
// CPU time (cpu) over less than three times it in wall time (wall). On a machine
// busy with other work (a build, the editor; more so with the worker's priority
// lowered) an input that normally takes a tenth of the limit can take all of it
// without being any slower. A hang that spins has its CPU time; one that blocks
// has none and is reported at three times the limit. An explicit -timeout is
// wall time, as go test's.
func starved(wall, cpu, after time.Duration, fixed bool) bool {
	return !fixed && cpu < after/2 && wall < 3*after
}
