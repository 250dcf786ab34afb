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

// TestCrashKinds checks that each kind of failure is caught, classified and located
// at the line marked "MARK:<kind>" in testdata/crashers.
func TestCrashKinds(t *testing.T) {
	dir := copyTree(t, "../testdata/crashers")
	tests := []struct {
		desc, target, kind, marker, file string
	}{
		{"panic in the fuzz function's goroutine", "FuzzPanic", KindPanic, "MARK:panic", "crashers.go"},
		{"t.Fatalf", "FuzzError", KindError, "MARK:error", "crashers_test.go"},
		{"panic in a goroutine the target started", "FuzzGoroutinePanic", KindGoroutinePanic, "MARK:goroutine-panic", "crashers.go"},
		{"stack overflow", "FuzzFatal", KindFatal, "MARK:fatal", "crashers.go"},
		{"os.Exit", "FuzzExit", KindExit, "MARK:exit", "crashers.go"},
		{"log.Fatalf", "FuzzLogFatal", KindExit, "MARK:logfatal", "crashers.go"},
		{"hang", "FuzzHang", KindHang, "MARK:hang", "crashers.go"},
	}
	for _, tc := range tests {
		t.Run(tc.target, func(t *testing.T) {
			timeout := 10 * time.Second // a 1 GB stack takes seconds to overflow
			if tc.kind == KindHang {
				timeout = 2 * time.Second
			}
			s, _ := fuzzOnce(t, dir, tc.target, Options{Parallel: 1, Timeout: timeout, MinimizeTime: 5 * time.Second})
			cs := s.Crashes()
			if len(cs) != 1 {
				t.Fatalf("%s: got %d crashes, want 1", tc.desc, len(cs))
			}
			c := cs[0]
			file := filepath.Join(dir, tc.file)
			line := markerLine(t, file, tc.marker)
			if c.Kind != tc.kind || c.File != file || (c.Line != line && !(tc.kind == KindHang && c.Line >= line && c.Line <= line+2)) {
				t.Errorf("%s: got %s at %s:%d, want %s at %s:%d\nmessage: %s\noutput:\n%s", tc.desc, c.Kind, c.File, c.Line, tc.kind, file, line, c.Message, truncate(c.Output, 3000))
			}
			vals, err := fuzzrt.Unmarshal([]byte(c.Input))
			if err != nil || len(vals) != 1 || len(vals[0].(string)) < 4 || vals[0].(string)[:4] != "boom" {
				t.Errorf("%s: input %q does not trigger the bug (%v)", tc.desc, c.Input, err)
			}
		})
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
