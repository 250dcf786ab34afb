package fuzzrt

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
)

// The memory limit, seen from inside. The coordinator's watchdog reads the
// worker's resident memory, which misses an allocation the target never touches:
// `make([]byte, n)` with n read from the input maps n bytes without faulting
// them in, and the execution can end before the pages are ever resident. On a
// worker whose heap already holds freed spans, the runtime clears reused memory
// and the same allocation is resident — so the same input was an oom on one
// worker and passed on another (reported flaky). libFuzzer has -malloc_limit_mb
// for this. Here, after each execution, the heap's growth over it (bytes in
// objects, live or not yet swept, per runtime/metrics) is compared with the
// limit: an input that grew the heap past it fails as an oom on every worker.
// The check costs 0.2–0.3 µs per execution (BenchmarkHeapRead).

// EnvMemLimit is the worker's memory limit in MiB, set by the coordinator.
const EnvMemLimit = "FUZZLS_MEMLIMIT"

// OOMPrefix starts the failure text of an input that grew the heap past the limit.
const OOMPrefix = "fuzzls: out of memory: "

// heapGrowth measures how much the heap grows over each execution, and keeps
// the runtime's allocation profile as of a collection before the running
// execution, so that an input found over the limit can be blamed on the
// allocation site that grew the most since then. Running the input again to
// find it would not do: its memory, reused, is cleared, hence resident, and the
// watchdog kills the worker.
type heapGrowth struct {
	limit  uint64           // bytes; 0 = off
	sample []metrics.Sample // heap bytes in objects, collections so far
	last   uint64           // heap bytes in objects at the last read
	cycles uint64           // collections when prof was taken
	prof   map[[32]uintptr]int64
	recs   []runtime.MemProfileRecord
}

func newHeapGrowth() *heapGrowth {
	mb, err := strconv.Atoi(os.Getenv(EnvMemLimit))
	if err != nil || mb <= 0 {
		return nil
	}
	g := &heapGrowth{limit: uint64(mb) << 20, sample: []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"},
	}}
	g.last, g.cycles = g.read()
	g.prof = g.profile(nil)
	return g
}

func (g *heapGrowth) read() (heap, cycles uint64) {
	metrics.Read(g.sample)
	return g.sample[0].Value.Uint64(), g.sample[1].Value.Uint64()
}

// reset makes now the start of the next execution's measurement.
func (g *heapGrowth) reset() {
	if g != nil {
		g.last, _ = g.read()
	}
}

// grewPast reports the heap's growth since the last read, and whether it passed
// the limit. A collection during the execution makes the growth look smaller,
// never larger: an input is never blamed for memory another one left behind.
// After a collection it takes a new profile snapshot, the baseline of the next
// report (a collection publishes the profile; it does not change in between).
func (g *heapGrowth) grewPast() (uint64, bool) {
	if g == nil {
		return 0, false
	}
	now, cycles := g.read()
	grew := uint64(0)
	if now > g.last {
		grew = now - g.last
	}
	g.last = now
	if grew > g.limit {
		return grew, true
	}
	if cycles != g.cycles {
		g.cycles = cycles
		g.prof = g.profile(g.prof)
	}
	return grew, false
}

// oomReport is the failure text of an input that grew the heap by grew bytes: the
// message, then the stack of the allocation site whose sampled bytes grew the
// most since the last snapshot, in the shape of a traceback so that the
// coordinator reads its frames as any other. The input's allocations dominate
// that growth: they are over the limit, the other executions' since the last
// collection are within the heap's floor.
func (g *heapGrowth) oomReport(grew uint64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%sthe input grew the heap by %d MiB, over the limit of %d MiB\n", OOMPrefix, grew>>20, g.limit>>20)
	runtime.GC() // publishes the profile up to now
	before := g.prof
	var best []uintptr
	var most int64
	for _, r := range g.records() {
		if d := r.AllocBytes - before[r.Stack0]; d > most {
			most, best = d, r.Stack()
		}
	}
	if len(best) > 0 {
		b.WriteString("\ngoroutine 1 [allocating]:\n")
		frames := runtime.CallersFrames(best)
		for {
			f, more := frames.Next()
			if !strings.HasPrefix(f.Function, "runtime.") {
				fmt.Fprintf(&b, "%s(...)\n\t%s:%d\n", f.Function, f.File, f.Line)
			}
			if !more {
				break
			}
		}
	}
	g.last, g.cycles = g.read()
	g.prof = g.profile(nil)
	return b.String()
}

// profile returns the sampled bytes allocated so far per stack, in m (cleared)
// or a new map.
func (g *heapGrowth) profile(m map[[32]uintptr]int64) map[[32]uintptr]int64 {
	recs := g.records()
	if m == nil {
		m = make(map[[32]uintptr]int64, len(recs))
	}
	clear(m)
	for _, r := range recs {
		m[r.Stack0] = r.AllocBytes
	}
	return m
}

// records reads the allocation profile into a buffer kept between calls.
func (g *heapGrowth) records() []runtime.MemProfileRecord {
	for {
		n, ok := runtime.MemProfile(g.recs, true)
		if ok {
			return g.recs[:n]
		}
		g.recs = make([]runtime.MemProfileRecord, n+n/4+16)
	}
}
