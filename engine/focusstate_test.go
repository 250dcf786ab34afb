package engine

import (
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestFocusState: after an edit the changed blocks are those the previous
// build did not have; the focus sent is the unreached changed blocks with the
// reached blocks of their function (and their callers farther), nothing new on
// a tick, and the changed code alone (nearer) once every changed block is
// reached, until focusIdle (TestFocusStateIdle); building the same
// code again keeps the changed blocks; with NoFocus they are counted, not
// sent. Blocks come from the real rewriter on a file, no build.
func TestFocusState(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.go")
	v1 := blocksOf(t, file, focusV1)
	f := &focusState{}
	f.set(v1, 0)
	if len(f.changedBlocks()) != 0 || f.frontier(&coverageMap{}) != nil {
		t.Fatalf("a first build without Options.Focus: changed %v", f.changedBlocks())
	}

	v2 := blocksOf(t, file, focusV2)
	f.set(v2, len(v1.Blocks))
	changed := f.changedBlocks()
	if len(changed) == 0 {
		t.Fatal("no changed block after the edit")
	}
	var cov coverageMap
	cov.reset(v2, changed)
	// Reach every block but the changed ones.
	var all []uint32
	for i := range v2.Blocks {
		if !slices.Contains(changed, i) {
			all = append(all, uint32(i)<<8|1)
		}
	}
	cov.merge(all)
	focus := f.frontier(&cov)
	if focus == nil || len(focus.Callers) == 0 {
		t.Fatalf("focus %+v: want the changed blocks, and callers", focus)
	}
	for _, c := range changed {
		if !slices.Contains(focus.Counters, uint32(c)) {
			t.Errorf("unreached changed block %d is not in the frontier %v", c, focus.Counters)
		}
	}
	if got := f.update(false, &cov); got != nil {
		t.Errorf("a tick with a changed block unreached sent %+v", got)
	}
	if n := f.changedReached(&cov); n != 0 {
		t.Errorf("%d changed blocks reached, want 0", n)
	}

	var reach []uint32
	for _, c := range changed {
		reach = append(reach, uint32(c)<<8|1)
	}
	if _, newly := cov.merge(reach); !newly {
		t.Fatal("reaching the changed blocks is not newly reaching them")
	}
	got := f.update(true, &cov)
	if got == nil || len(got.Counters) != 0 {
		t.Fatalf("every changed block reached: sent %+v, want the changed code nearer and no frontier", got)
	}
	for _, c := range changed {
		if !slices.Contains(got.Near, uint32(c)) {
			t.Errorf("every changed block reached: changed block %d is not nearer %v: the focus must stay on the changed code", c, got.Near)
		}
	}
	if got := f.update(false, &cov); got != nil || f.frontier(&cov) == nil {
		t.Errorf("a tick with every changed block reached sent %+v, or the focus for new workers is gone", got)
	}

	f.set(v2, len(v2.Blocks)) // the same code built again
	if !slices.Equal(f.changedBlocks(), changed) {
		t.Errorf("building the same code again changed the changed blocks: %v, were %v", f.changedBlocks(), changed)
	}

	nf := &focusState{noFocus: true}
	nf.set(v1, 0)
	nf.set(v2, len(v1.Blocks))
	if len(nf.changedBlocks()) == 0 || nf.frontier(&cov) != nil {
		t.Errorf("NoFocus: changed %v, focus %+v; want counted, not sent", nf.changedBlocks(), nf.frontier(&cov))
	}
}

// TestFocusStateIdle: a focus no changed block was newly reached under for
// focusIdle is cleared on the next tick.
func TestFocusStateIdle(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.go")
	v1 := blocksOf(t, file, focusV1)
	f := &focusState{}
	f.set(v1, 0)
	v2 := blocksOf(t, file, focusV2)
	f.set(v2, len(v1.Blocks))
	var cov coverageMap
	cov.reset(v2, nil)
	f.mu.Lock()
	f.gained = time.Now().Add(-focusIdle - time.Second)
	f.mu.Unlock()
	if got := f.update(false, &cov); got == nil || !slices.Equal(got.Counters, []uint32(nil)) {
		t.Errorf("an idle focus: sent %+v, want an empty focus", got)
	}
	if f.frontier(&cov) != nil {
		t.Errorf("an idle focus is still sent to new workers")
	}
}
