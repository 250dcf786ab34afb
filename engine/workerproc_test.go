package engine

import "testing"

func TestHeapFloorMB(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	for _, c := range []struct{ rssLimitMB, want int }{
		{2048, 128}, // the default limit: the full floor
		{0, maxHeapFloorMB},
		{-1, maxHeapFloorMB},
		{512, 32}, // a tight limit keeps the floor's garbage a sixteenth of it
		{8, 0},
	} {
		if got := heapFloorMB(c.rssLimitMB); got != c.want {
			t.Errorf("heapFloorMB(%d) = %d, want %d", c.rssLimitMB, got, c.want)
		}
	}
	t.Setenv("GOGC", "200")
	if got := heapFloorMB(2048); got != 0 {
		t.Errorf("with GOGC set, heapFloorMB = %d, want 0: the user's setting wins", got)
	}
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "1GiB")
	if got := heapFloorMB(2048); got != 0 {
		t.Errorf("with GOMEMLIMIT set, heapFloorMB = %d, want 0", got)
	}
}
