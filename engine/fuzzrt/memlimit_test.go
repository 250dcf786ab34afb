package fuzzrt

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

var sink [][]byte

//go:noinline
func allocUntouched(n int) { sink = append(sink, make([]byte, n)) }

//go:noinline
func allocGrown(n int) {
	var b []byte
	for len(b) < n {
		b = append(b, make([]byte, 1<<20)...)
	}
	sink = append(sink, b)
}

//go:noinline
func allocSmall(n, times int) {
	for range times {
		sink = append(sink[:0], make([]byte, n))
	}
}

// TestHeapCheck: an execution that allocates past the limit, untouched, is
// caught and blamed on its allocation; one that allocates four times as much in
// small garbage (which a starved collector lets pile up past the limit), one
// that churns through as much in large objects at one place, even with the
// collector starved (on a loaded machine), the ones after the oom (the first
// churning large garbage again), and one after memory allocated outside any
// execution, are not; a slice grown past the limit by append is.
func TestHeapCheck(t *testing.T) {
	t.Setenv(EnvMemLimit, "64")
	g := newHeapCheck()
	if g == nil {
		t.Fatal("no heap check with a limit set")
	}
	sink = nil
	allocSmall(64<<10, 4096) // 256 MiB in all, 64 KiB live at a time
	if oom := g.check(); oom != "" {
		t.Fatalf("small garbage reported:\n%s", oom)
	}
	allocSmall(4<<20, 64) // 256 MiB in all, 4 MiB live at a time
	if oom := g.check(); oom != "" {
		t.Fatalf("large garbage reported:\n%s", oom)
	}
	// A starved collector: none runs while the garbage piles up, so the heap
	// holds all 256 MiB when the execution ends (TestGarbageIsNoOOM at load 19).
	gc := debug.SetGCPercent(-1)
	allocSmall(4<<20, 64)
	oom := g.check()
	debug.SetGCPercent(gc)
	if oom != "" {
		t.Fatalf("large garbage with the collector starved reported:\n%s", oom)
	}
	allocGrown(100 << 20)
	sink = nil
	if oom := g.check(); !strings.Contains(oom, "fuzzrt.allocGrown(...)\n\t") {
		t.Fatalf("a slice grown to 100 MiB by append not blamed on allocGrown:\n%s", oom)
	}
	allocUntouched(100 << 20)
	sink = nil // garbage once the execution is over, as in a worker
	oom = g.check()
	if !strings.HasPrefix(oom, OOMPrefix) || !strings.Contains(oom, "over the limit of 64 MiB") {
		t.Fatalf("100 MiB allocation: report does not start with the message:\n%s", oom)
	}
	if !strings.Contains(oom, "fuzzrt.allocUntouched(...)\n\t") || !strings.Contains(oom, "memlimit_test.go:") {
		t.Errorf("report does not blame allocUntouched:\n%s", oom)
	}
	allocSmall(4<<20, 64)
	if oom := g.check(); oom != "" {
		t.Errorf("after the oom:\n%s", oom)
	}
	// A collection the allocation started ended before the check (a loaded
	// machine: TestOOMOnEveryWorker's replay passed so): the buffer is freed,
	// but no garbage comes in a piece over the limit.
	allocUntouched(100 << 20)
	sink = nil
	runtime.GC()
	if oom := g.check(); !strings.Contains(oom, "fuzzrt.allocUntouched(...)\n\t") {
		t.Errorf("100 MiB allocation collected before the check not blamed on allocUntouched:\n%s", oom)
	}
	allocUntouched(100 << 20)
	g.reset()
	allocSmall(64<<10, 16)
	if oom := g.check(); oom != "" {
		t.Errorf("after a reset:\n%s", oom)
	}
	sink = nil
	t.Setenv(EnvMemLimit, "")
	if newHeapCheck() != nil {
		t.Error("a heap check with no limit set")
	}
}

// BenchmarkHeapCheck is the check's cost per execution.
func BenchmarkHeapCheck(b *testing.B) {
	b.Setenv(EnvMemLimit, "2048")
	g := newHeapCheck()
	b.ReportAllocs()
	for b.Loop() {
		g.check()
	}
}
