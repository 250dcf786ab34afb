package fuzzrt

import (
	"runtime"
	"testing"
)

// allocSink keeps the compiler from proving the buffers dead and eliding them.
var allocSink []byte

// gcsDuring counts the collections started while allocating n buffers of 4 MiB,
// the way a parser with a large scratch buffer allocates once per execution.
func gcsDuring(n int) uint32 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		allocSink = make([]byte, 4<<20)
	}
	runtime.ReadMemStats(&after)
	return after.NumGC - before.NumGC
}

func TestHeapFloorSpacesCollections(t *testing.T) {
	defer func() { ballast = nil }()
	ballast = nil
	without := gcsDuring(200)

	t.Setenv(EnvHeapFloor, "128")
	setHeapFloor()
	if len(ballast) != 128<<20 {
		t.Fatalf("ballast is %d bytes, want 128 MiB", len(ballast))
	}
	with := gcsDuring(200)
	t.Logf("collections over 200 allocations of 4 MiB: %d without a floor, %d with 128 MiB", without, with)
	if with*4 > without {
		t.Errorf("a 128 MiB floor should cut collections at least fourfold: %d without, %d with", without, with)
	}
}

func TestHeapFloorIgnoresBadSetting(t *testing.T) {
	defer func() { ballast = nil }()
	for _, v := range []string{"", "0", "-5", "lots"} {
		ballast = nil
		t.Setenv(EnvHeapFloor, v)
		setHeapFloor()
		if ballast != nil {
			t.Errorf("%s=%q allocated a %d-byte floor", EnvHeapFloor, v, len(ballast))
		}
	}
}
