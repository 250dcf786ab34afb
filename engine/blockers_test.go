package engine

import (
	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/instrument"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBlockers: fuzzing reaches a hash compared with a constant and never takes
// the branch; Blockers names the comparison there, the constant, a nearest value
// that differs from it, and the uncovered blocks behind it.
func TestBlockers(t *testing.T) {
	dir := copyTree(t, "../testdata/blockers")
	s, _ := fuzzOnce(t, dir, "FuzzCheck", Options{Parallel: 1, FuzzTime: 4 * time.Second})
	file := filepath.Join(dir, "magic.go")
	gate := markerLine(t, file, "MARK:gate")
	bs := s.Blockers()
	var found *Blocker
	for i, b := range bs {
		if b.File == file && b.Line == gate {
			found = &bs[i]
		}
	}
	if found == nil {
		t.Fatalf("no blocker at magic.go:%d; blockers: %+v", gate, bs)
	}
	b := *found
	t.Logf("%s:%d: %s (behind: %d)", filepath.Base(b.File), b.Line, b.Message(), b.Behind)
	if b.Want != "0x89504e47" || !strings.Contains(b.Expr, "== 0x89504e47") {
		t.Errorf("expr %q, want %q: want the comparison and its constant", b.Expr, b.Want)
	}
	if !strings.HasPrefix(b.Nearest, "0x") || b.Nearest == "0x89504e47" {
		t.Errorf("nearest %q, want a value other than the constant", b.Nearest)
	}
	if b.Block.StartLine != gate || b.Count == 0 {
		t.Errorf("block %+v, count %d: want the gate's body, recorded", b.Block, b.Count)
	}
	// The body's blocks: the loop, its if, the n > 3 branch and the returns.
	if b.Behind < 4 {
		t.Errorf("behind %d, want the uncovered blocks of Check after the gate (4 or more)", b.Behind)
	}
	if !strings.Contains(b.Message(), "compared `binary.BigEndian.Uint32(h[:4]) == 0x89504e47`: nearest 0x") {
		t.Errorf("message %q", b.Message())
	}
}

// TestBlockerState: a build's comparison summaries are merged per site; a
// worker of another build starts the table again, and asking for a build that
// is not the table's gets nothing.
func TestBlockerState(t *testing.T) {
	a := &instrument.Binary{CmpSites: make([]instrument.CmpSite, 3)}
	b := &instrument.Binary{CmpSites: make([]instrument.CmpSite, 3)}
	var st blockerState
	st.merge(a, []fuzzrt.CmpSummary{{Site: 1, Count: 2, Vals: []fuzzrt.CmpValue{{A: "1", B: "2", Count: 2, Dist: 1}}}})
	st.merge(a, []fuzzrt.CmpSummary{{Site: 1, Count: 3, Vals: []fuzzrt.CmpValue{{A: "1", B: "2", Count: 3, Dist: 1}}}})
	got := st.summaries(a)
	if len(got) != 1 || got[0].site != 1 || got[0].sum.Count != 5 {
		t.Errorf("summaries of a: %+v, want site 1 seen 5 times", got)
	}
	if st.summaries(b) != nil || st.summaries(nil) != nil {
		t.Errorf("summaries of another build")
	}
	st.merge(b, []fuzzrt.CmpSummary{{Site: 2, Count: 1, Vals: []fuzzrt.CmpValue{{A: "x", B: "y", Count: 1, Dist: 3}}}})
	if st.summaries(a) != nil {
		t.Errorf("a's summaries kept after b's worker reported")
	}
	if got := st.summaries(b); len(got) != 1 || got[0].site != 2 {
		t.Errorf("summaries of b: %+v", got)
	}
}

// TestBlockerSolutions: an input found for a site stands for its build; none
// found stands until the corpus has grown and solveAgainAfter has passed; a
// worker of another build forgets both.
func TestBlockerSolutions(t *testing.T) {
	a := &instrument.Binary{CmpSites: make([]instrument.CmpSite, 3)}
	b := &instrument.Binary{CmpSites: make([]instrument.CmpSite, 3)}
	var st blockerState
	st.merge(a, nil)
	t0 := time.Now()
	if _, ok := st.known(a, 1, 5, t0); ok {
		t.Fatal("an answer before any search")
	}
	st.setSolution(a, 1, solution{corpus: 5, at: t0})
	st.setSolution(a, 2, solution{input: "go test fuzz v1\n[]byte(\"x\")\n", corpus: 5, at: t0})
	for _, tc := range []struct {
		site, corpus int
		after        time.Duration
		want         bool
	}{
		{1, 5, time.Hour, true},        // same corpus: nothing new to search from
		{1, 9, time.Second, true},      // grown, but searched a moment ago
		{1, 9, solveAgainAfter, false}, // grown, and long enough ago
		{2, 900, time.Hour, true},      // an input found stands
		{0, 5, 0, false},               // never searched
	} {
		if _, ok := st.known(a, tc.site, tc.corpus, t0.Add(tc.after)); ok != tc.want {
			t.Errorf("site %d, corpus %d, %v later: known %v, want %v", tc.site, tc.corpus, tc.after, ok, tc.want)
		}
	}
	if in, _ := st.known(a, 2, 5, t0); in == "" {
		t.Error("the input found is not returned")
	}
	if _, ok := st.known(b, 2, 5, t0); ok {
		t.Error("another build's answer")
	}
	st.merge(b, nil)
	if _, ok := st.known(a, 2, 5, t0); ok {
		t.Error("answers kept after another build's worker reported")
	}
}
