package fuzzrt

import (
	"strings"
	"testing"
)

var sink [][]byte

//go:noinline
func allocUntouched(n int) { sink = append(sink, make([]byte, n)) }

//go:noinline
func allocSmall(n, times int) {
	for range times {
		sink = append(sink[:0], make([]byte, n))
	}
}

// TestHeapGrowth: an execution that allocates past the limit, untouched, is
// caught and blamed on its allocation; one that allocates as much in small
// garbage spread over collections, the ones after the oom, and one after memory
// allocated outside any execution, are not.
func TestHeapGrowth(t *testing.T) {
	t.Setenv(EnvMemLimit, "64")
	g := newHeapGrowth()
	if g == nil {
		t.Fatal("no heap check with a limit set")
	}
	sink = nil
	allocSmall(64<<10, 4096) // 256 MiB in all, 64 KiB live at a time
	if grew, over := g.grewPast(); over {
		t.Fatalf("small garbage: grew %d MiB, reported over the limit", grew>>20)
	}
	allocUntouched(100 << 20)
	grew, over := g.grewPast()
	if !over {
		t.Fatalf("100 MiB allocation: grew %d MiB, over = %v", grew>>20, over)
	}
	report := g.oomReport(grew)
	if !strings.HasPrefix(report, OOMPrefix) || !strings.Contains(report, "over the limit of 64 MiB") {
		t.Errorf("report does not start with the message:\n%s", report)
	}
	if !strings.Contains(report, "fuzzrt.allocUntouched(...)\n\t") || !strings.Contains(report, "memlimit_test.go:") {
		t.Errorf("report does not blame allocUntouched:\n%s", report)
	}
	sink = nil
	allocSmall(64<<10, 16)
	if grew, over := g.grewPast(); over {
		t.Errorf("after the oom: grew %d MiB, reported over the limit", grew>>20)
	}
	// Memory allocated between executions (a TestMain's data, a request) is
	// left out once the worker resets the measurement before executing.
	allocUntouched(100 << 20)
	g.reset()
	allocSmall(64<<10, 16)
	if grew, over := g.grewPast(); over {
		t.Errorf("after a reset: grew %d MiB, reported over the limit", grew>>20)
	}
	sink = nil
	t.Setenv(EnvMemLimit, "")
	if newHeapGrowth() != nil {
		t.Error("a heap check with no limit set")
	}
}

// BenchmarkHeapRead is the check's cost per execution.
func BenchmarkHeapRead(b *testing.B) {
	b.Setenv(EnvMemLimit, "2048")
	g := newHeapGrowth()
	b.ReportAllocs()
	for b.Loop() {
		g.grewPast()
	}
}
