package engine

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
)

// TestCalc is the README's example: the calculator's division by zero is found,
// reported at the panic line, minimized, and the saved input makes go test fail.
func TestCalc(t *testing.T) {
	dir := copyTree(t, "../testdata/calc")
	before := treeHash(t, dir)
	s, rec := fuzzOnce(t, dir, "FuzzEval", Options{Parallel: 2})
	crashes := s.Crashes()
	if len(crashes) != 1 {
		t.Fatalf("got %d crashes, want 1; events: %v", len(crashes), rec.events)
	}
	c := crashes[0]
	if c.Kind != KindPanic {
		t.Errorf("kind = %q, want panic", c.Kind)
	}
	wantFile := filepath.Join(dir, "calc.go")
	if c.File != wantFile || c.Line != markerLine(t, wantFile, "// BUG") {
		t.Errorf("location = %s:%d, want %s:%d", c.File, c.Line, wantFile, markerLine(t, wantFile, "// BUG"))
	}
	if !c.Minimized {
		t.Errorf("not minimized")
	}
	vals, err := fuzzrt.Unmarshal([]byte(c.Input))
	if err != nil {
		t.Fatalf("input %q: %v", c.Input, err)
	}
	if got := vals[0].(string); len(got) > 4 {
		t.Errorf("minimized input %q is longer than needed (\"0/0\" fails)", got)
	}
	if after := treeHash(t, dir); after != before {
		t.Errorf("the run changed the user's tree")
	}
	// The saved input, as a seed in a scratch copy, makes go test fail.
	seedDir := filepath.Join(dir, "testdata", "fuzz", "FuzzEval")
	os.MkdirAll(seedDir, 0o755)
	if err := os.WriteFile(filepath.Join(seedDir, fuzzrt.FileName([]byte(c.Input))), []byte(c.Input), 0o644); err != nil {
		t.Fatal(err)
	}
	if failed, out := goTestFails(t, dir, "FuzzEval"); !failed {
		t.Errorf("go test passed on the minimized input:\n%s", out)
	}
	_ = time.Second
}
