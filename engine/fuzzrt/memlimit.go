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
// for this. Here, after each execution, the bytes it allocated (a cumulative
// counter of runtime/metrics, which the collector's progress does not move) are
// compared with the limit; past it, the allocation profile must show one site
// that allocated more than the limit, which is then the failure's location, and
// the heap must hold more than half the limit in objects when the execution
// ends: the memory was wanted at once. So an input that asks for more than the
// limit fails as an oom on every worker, and one that churns through garbage,
// in small objects or large ones, does not: the profile alone cannot tell one
// 4 GiB buffer from a thousand 4 MiB ones, but the collector frees the
// thousand as they go, and the 4 GiB buffer, live at the collection its
// allocation starts, stays counted until the next one, which a heap that size
// puts gigabytes of allocation away. A collector starved of CPU (a loaded
// machine) frees the thousand late, so the site must also have asked in big
// pieces: its objects since the snapshot average at least 1/minPiece of
// the limit (one buffer, or a slice grown past the limit by append, whose steps
// grow by a quarter). A site whose objects average more than the limit asked
// for more at once whatever the heap holds by now.
// The check costs 0.2–0.3 µs per execution (BenchmarkHeapCheck).

// minPiece: an oom's site allocated objects of at least limit/minPiece on
// average. Garbage in 4 MiB buffers under a 300 MiB limit stays below it (a
// real worker's default limit is 2 GiB).
const minPiece = 8

// EnvMemLimit is the worker's memory limit in MiB, set by the coordinator.
const EnvMemLimit = "FUZZLS_MEMLIMIT"

// OOMPrefix starts the failure text of an input that allocated past the limit.
const OOMPrefix = "fuzzls: out of memory: "

// heapCheck measures what each execution allocates, and keeps the runtime's
// allocation profile as of a collection before the running execution, so that
// an input found over the limit can be blamed on the allocation site that
// allocated the most since then. Running the input again to find the site
// would not do: its memory, reused, is cleared, hence resident, and the
// watchdog kills the worker.
type heapCheck struct {
	limit  uint64           // bytes; 0 = off
	sample []metrics.Sample // bytes allocated so far, collections so far
	last   uint64           // bytes allocated at the last read
	cycles uint64           // collections when prof was taken
	prof   map[[32]uintptr]siteAllocs
	recs   []runtime.MemProfileRecord
	// objects reads the bytes of the heap's objects: those live at the last
	// collection or allocated since, dead or not (the next collection frees the
	// dead). Apart from sample, which every execution reads.
	objects []metrics.Sample
}

func newHeapCheck() *heapCheck {
	mb, err := strconv.Atoi(os.Getenv(EnvMemLimit))
	if err != nil || mb <= 0 {
		return nil
	}
	g := &heapCheck{limit: uint64(mb) << 20, sample: []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"},
	}, objects: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}}
	// A collection first, so that the baseline profile holds everything
	// allocated so far (a collection publishes it), not as of the last one.
	runtime.GC()
	g.last, g.cycles = g.read()
	g.prof = g.profile(nil)
	return g
}

// siteAllocs is what one allocation site allocated so far (sampled, scaled).
type siteAllocs struct{ bytes, objects int64 }

func (g *heapCheck) read() (allocated, cycles uint64) {
	metrics.Read(g.sample)
	return g.sample[0].Value.Uint64(), g.sample[1].Value.Uint64()
}

// reset makes now the start of the next execution's measurement.
func (g *heapCheck) reset() {
	if g != nil {
		g.last, _ = g.read()
	}
}

// check measures what the execution that just ended allocated and returns the
// failure text when it asked for more than the limit, "" otherwise. After a
// collection it takes a new profile snapshot, the baseline of the next report:
// a collection publishes the profile, which does not change in between.
func (g *heapCheck) check() string {
	if g == nil {
		return ""
	}
	now, cycles := g.read()
	allocated := now - g.last
	g.last = now
	if allocated > g.limit {
		return g.confirm()
	}
	if cycles != g.cycles {
		g.cycles = cycles
		g.prof = g.profile(g.prof)
	}
	return ""
}

// confirm looks for the allocation site behind an execution that allocated
// more than the limit: the one whose sampled bytes grew the most since the
// last snapshot. If that is more than the limit (small objects are sampled, a
// large one counts in full, so garbage churned through in small objects does
// not get there) and the heap holds more than half the limit (garbage in large
// objects does not get there; a slice grown by doubling past the limit does),
// and the site asked in big pieces (minPiece), the result is the failure
// text: the message, then the site's stack in the shape of a traceback, so
// that the coordinator reads its frames as any other.
func (g *heapCheck) confirm() string {
	metrics.Read(g.objects)
	held := g.objects[0].Value.Uint64()
	// The profile may be two collections old: two publish it up to now, so
	// that this site's last allocations are not blamed on the next input.
	runtime.GC()
	runtime.GC()
	before, now := g.prof, g.profile(nil)
	var best [32]uintptr
	var most, objects int64
	for stk, a := range now {
		if d := a.bytes - before[stk].bytes; d > most {
			most, best, objects = d, stk, a.objects-before[stk].objects
		}
	}
	g.last, g.cycles = g.read()
	g.prof = now
	avg := most
	if objects > 0 {
		avg = most / objects
	}
	switch {
	case most <= int64(g.limit), avg < int64(g.limit/minPiece):
		return "" // within the limit, or churned through in small pieces
	case held <= g.limit/2 && avg <= int64(g.limit):
		// Freed already: garbage, unless one piece alone was over the limit
		// (a collection the allocation started may have ended before this
		// check, freeing the buffer, on a loaded machine).
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%sthe input allocated %d MiB at one place, over the limit of %d MiB\n", OOMPrefix, most>>20, g.limit>>20)
	b.WriteString("\ngoroutine 1 [allocating]:\n")
	n := 0
	for n < len(best) && best[n] != 0 {
		n++
	}
	frames := runtime.CallersFrames(best[:n])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "runtime.") {
			fmt.Fprintf(&b, "%s(...)\n\t%s:%d\n", f.Function, f.File, f.Line)
		}
		if !more {
			break
		}
	}
	return b.String()
}

// profile returns what each stack allocated so far, in m (cleared) or a new
// map. Records can share a stack (two allocations on one line, as append's
// make and growth, seen so): they are summed.
func (g *heapCheck) profile(m map[[32]uintptr]siteAllocs) map[[32]uintptr]siteAllocs {
	recs := g.records()
	if m == nil {
		m = make(map[[32]uintptr]siteAllocs, len(recs))
	}
	clear(m)
	for _, r := range recs {
		a := m[r.Stack0]
		m[r.Stack0] = siteAllocs{a.bytes + r.AllocBytes, a.objects + r.AllocObjects}
	}
	return m
}

// records reads the allocation profile into a buffer kept between calls.
func (g *heapCheck) records() []runtime.MemProfileRecord {
	for {
		n, ok := runtime.MemProfile(g.recs, true)
		if ok {
			return g.recs[:n]
		}
		g.recs = make([]runtime.MemProfileRecord, n+n/4+16)
	}
}
