package engine

import (
	"runtime"
	"testing"
)

func TestHeapFloorMB(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	for _, c := range []struct{ rssLimitMB, workers, memMB, want int }{
		{2048, 2, 24 << 10, 128}, // the default limit on a development machine: the full floor
		{0, 2, 0, maxHeapFloorMB},
		{-1, 2, 0, maxHeapFloorMB},
		{512, 2, 0, 32}, // a tight limit keeps the floor's garbage a sixteenth of it
		{8, 2, 0, 0},
		{2048, 64, 16 << 10, 16}, // many workers share a sixteenth of the machine
		{2048, 0, 1 << 10, 64},
	} {
		if got := heapFloorMB(c.rssLimitMB, c.workers, c.memMB); got != c.want {
			t.Errorf("heapFloorMB(%d, %d, %d) = %d, want %d", c.rssLimitMB, c.workers, c.memMB, got, c.want)
		}
	}
	t.Setenv("GOGC", "200")
	if got := heapFloorMB(2048, 2, 0); got != 0 {
		t.Errorf("with GOGC set, heapFloorMB = %d, want 0: the user's setting wins", got)
	}
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "1GiB")
	if got := heapFloorMB(2048, 2, 0); got != 0 {
		t.Errorf("with GOMEMLIMIT set, heapFloorMB = %d, want 0", got)
	}
	t.Setenv("GOMEMLIMIT", "")
	if mb := physicalMemoryMB(); runtime.GOOS == "linux" && mb <= 0 {
		t.Errorf("physicalMemoryMB = %d on Linux", mb)
	}
}
