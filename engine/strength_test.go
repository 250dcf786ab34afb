package engine

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fuzzls.dev/fuzzls/internal/testws"
)

// TestComparisonFeedback: each comparison form hides a bug that blind mutation does
// not find in the budget; with comparison feedback alone (the dictionary of the
// code's literals, which finds many of them too, is turned off) each is found, and
// reported at its MARK line.
func TestComparisonFeedback(t *testing.T) {
	if testing.Short() {
		t.Skip("fuzzes 18 targets")
	}
	dir := copyTree(t, "../testdata/strength")
	e := New(Options{CacheDir: t.TempDir()}, nil)
	targets, err := e.Targets(t.Context(), dir, ".")
	e.Close()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "strength.go")
	for _, tg := range targets {
		t.Run(tg.Name, func(t *testing.T) {
			s, _ := fuzzOnce(t, dir, tg.Name, Options{Parallel: 2, FuzzTime: 30 * time.Second, MinimizeTime: 2 * time.Second, NoLiteralDict: true})
			cs := s.Crashes()
			if len(cs) != 1 {
				t.Fatalf("not found in 30 s (%d execs)", s.Stats().Execs)
			}
			want := markerLine(t, file, "MARK:"+tg.Name)
			if c := cs[0]; c.File != file || c.Line != want {
				t.Errorf("found at %s:%d, want line %d: %s", c.File, c.Line, want, strings.TrimSpace(c.Message))
			}
			t.Logf("found after %d execs", s.Stats().Execs)
		})
	}
}

// TestBlindMutationFails is the control for TestComparisonFeedback: without
// comparison feedback and without the literal dictionary, a 32-bit magic number
// stays hidden in a budget where the feedback finds it in about a second.
func TestBlindMutationFails(t *testing.T) {
	if testing.Short() {
		t.Skip("fuzzes for 10 s")
	}
	dir := copyTree(t, "../testdata/strength")
	s, _ := fuzzOnce(t, dir, "FuzzMagic32", Options{Parallel: 2, FuzzTime: 10 * time.Second, NoCmp: true, NoLiteralDict: true})
	if n := len(s.Crashes()); n != 0 {
		t.Errorf("blind mutation found the magic number: the target does not test the feedback")
	}
}

// TestOldGoLineMagic: in a module whose go.mod predates generics (go 1.16), the
// instrumented files get a //go:build go1.21 line so the comparison hooks'
// generic helpers compile (instrument's TestOldGoLine); the magic number's panic,
// in a file whose old-style // +build line makes that line a new one, is still
// reported at its own line.
func TestOldGoLineMagic(t *testing.T) {
	dir := testws.Txtar(t, "testdata/oldgo.txtar")
	s, _ := fuzzOnce(t, dir, "FuzzMagic", Options{Parallel: 2, FuzzTime: 30 * time.Second})
	cs := s.Crashes()
	if len(cs) != 1 {
		t.Fatalf("crashes = %+v, want the magic number's panic", cs)
	}
	if want := markerLine(t, filepath.Join(dir, "old.go"), "MARK:magic"); cs[0].File != filepath.Join(dir, "old.go") || cs[0].Line != want {
		t.Errorf("crash at %s:%d, want old.go:%d", cs[0].File, cs[0].Line, want)
	}
}
