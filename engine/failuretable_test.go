package engine

import (
	"testing"

	"fuzzls.dev/fuzzls/engine/failure"
	"fuzzls.dev/fuzzls/protocol"
)

// TestFailureTable: a failure the same as one recorded (its kind and place)
// is a repeat, counted, also when a worker counts repeats by output key; a
// failure elsewhere is new, Known when its input is a testdata seed; a slow
// input is kept once a build, not a failure; a fixed one is forgotten; what
// callers get are copies.
func TestFailureTable(t *testing.T) {
	tab := newFailureTable()
	tab.newBuild(map[string]bool{"seed": true})
	at := func(line int) *failure.Failure {
		return &failure.Failure{Kind: protocol.KindPanic, File: "/m/a.go", Line: line, Output: "panic: boom"}
	}
	newCrash := func(id string) func() *Crash {
		return func() *Crash { return &Crash{ID: id, Kind: protocol.KindPanic, Count: 1} }
	}
	c1, isNew := tab.record(at(3), "k3", "in1", newCrash("c1"))
	if !isNew || c1.Known {
		t.Fatalf("first failure: new %v, known %v", isNew, c1.Known)
	}
	if c, isNew := tab.record(at(3), "k3b", "in2", newCrash("x")); isNew || c != c1 {
		t.Errorf("the same failure again is new")
	}
	tab.repeat("k3b", 5)
	tab.repeat("unknown key", 7)
	c2, isNew := tab.record(at(4), "k4", "seed", newCrash("c2"))
	if !isNew || !c2.Known {
		t.Errorf("a failure on another line: new %v; on a testdata seed: known %v", isNew, c2.Known)
	}
	if got := tab.update(c1, nil); got.Count != 7 {
		t.Errorf("count %d, want 7 (1, a repeat, 5 more by key)", got.Count)
	}
	if tab.first(c1) == nil || tab.first(c1).Line != 3 {
		t.Errorf("first failure of c1: %+v", tab.first(c1))
	}

	slow, isNew := tab.slowInput(func() *Crash { return &Crash{ID: "slow", Kind: protocol.KindSlow, Count: 1} })
	if !isNew {
		t.Errorf("the first slow input is not new")
	}
	if _, isNew := tab.slowInput(func() *Crash { t.Error("a second slow input made"); return nil }); isNew {
		t.Errorf("a second slow input is new")
	}
	snap := tab.snapshot()
	if tab.count() != 2 || len(snap) != 3 || snap[2].ID != "slow" || snap[2].Count != 2 {
		t.Errorf("count %d, snapshot %+v: want 2 failures, then the slow input seen twice", tab.count(), snap)
	}
	snap[0].Count = 100
	if tab.update(c1, nil).Count != 7 {
		t.Errorf("the snapshot shares the table's crashes")
	}

	tab.fixed(c1)
	tab.repeat("k3b", 1)
	if list := tab.list(); len(list) != 1 || list[0] != c2 || tab.first(c1) != nil {
		t.Errorf("after c1 is fixed: %v", list)
	}
	if c, isNew := tab.record(at(3), "k3", "in1", newCrash("c1 again")); !isNew || c.ID != "c1 again" {
		t.Errorf("a fixed failure found again is not new")
	}
	if gone := tab.newBuild(nil); gone != slow || len(tab.snapshot()) != 2 {
		t.Errorf("a new build keeps the slow input")
	}
}
