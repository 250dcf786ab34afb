package engine

import (
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
