package engine

import (
	"slices"
	"testing"

	"fuzzls.dev/fuzzls/instrument"
)

// TestCoverageMap: a build's coverage starts empty; a worker's baseline counts
// blocks only; an input's coverage grows it when it brings a bucket not seen
// (a block's or a comparison site's), says when it newly reaches a changed
// block, and ignores counters past the build's.
func TestCoverageMap(t *testing.T) {
	var m coverageMap
	bin := &instrument.Binary{Files: []string{"a.go"}, CmpCounters: 2, // two comparison sites
		Blocks: []instrument.Block{{CoverBlock: instrument.CoverBlock{StartLine: 1}}, {CoverBlock: instrument.CoverBlock{StartLine: 2}}, {CoverBlock: instrument.CoverBlock{StartLine: 3}}}}
	m.reset(bin, []int{1})
	if c, n := m.counts(); c != 0 || n != 3 {
		t.Fatalf("new build: %d of %d reached, want 0 of 3", c, n)
	}
	cov := func(counter int, bucket uint8) uint32 { return uint32(counter)<<8 | uint32(bucket) }

	m.mergeBaseline([]uint32{cov(0, 1), cov(3, 1)}) // block 0, and a site: not a block
	if c, _ := m.counts(); c != 1 {
		t.Errorf("baseline: %d blocks reached, want 1", c)
	}
	if grew, changed := m.merge([]uint32{cov(0, 1)}); grew || changed {
		t.Errorf("a bucket reached already: grew %v, changed %v", grew, changed)
	}
	if grew, changed := m.merge([]uint32{cov(0, 2)}); !grew || changed {
		t.Errorf("a new bucket of a reached block: grew %v, changed %v, want grew", grew, changed)
	}
	if grew, changed := m.merge([]uint32{cov(4, 1)}); !grew || changed {
		t.Errorf("a comparison site: grew %v, changed %v, want grew", grew, changed)
	}
	if grew, changed := m.merge([]uint32{cov(1, 1), cov(99, 1)}); !grew || !changed {
		t.Errorf("the changed block (and a counter past the build's): grew %v, changed %v, want both", grew, changed)
	}
	if c, n := m.counts(); c != 2 || n != 3 {
		t.Errorf("%d of %d blocks reached, want 2 of 3", c, n)
	}
	got, hit := m.snapshot()
	if !slices.Equal(hit, []bool{true, true, false}) || len(got) != 3 || !got[1].Changed || got[0].Changed || got[2].File != "a.go" || got[2].StartLine != 3 {
		t.Errorf("snapshot %v %v", got, hit)
	}
	got[0].File = "changed by the caller"
	if b, _ := m.snapshot(); b[0].File != "a.go" {
		t.Errorf("the snapshot shares the map's blocks")
	}
	if n := m.countReached([]int{1, 2, 4, 99, -1}); n != 2 {
		t.Errorf("countReached = %d, want 2 (block 1 and site 4)", n)
	}
	m.reset(&instrument.Binary{Files: bin.Files, Blocks: bin.Blocks[:2]}, nil)
	if c, n := m.counts(); c != 0 || n != 2 || slices.Contains(m.hit(), true) {
		t.Errorf("after reset: %d of %d, hit %v", c, n, m.hit())
	}
}
