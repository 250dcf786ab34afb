package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
)

func inputs(ents []entry) []string {
	var out []string
	for _, e := range ents {
		out = append(out, e.input)
	}
	return out
}

// TestCorpusStoreEntries: a build's corpus is its inputs once each, then the
// previous build's entries, none with coverage; an input that adds coverage
// joins it once, later reports update its coverage; one that failed leaves it
// and does not come back until the next build.
func TestCorpusStoreEntries(t *testing.T) {
	c := newCorpusStore(t.TempDir(), "FuzzX", &strings.Builder{})
	c.reset([]string{"a", "b", "a"})
	if got := inputs(c.list()); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("entries %q, want a b", got)
	}
	if !c.add("c", []uint32{1}) || c.add("c", []uint32{2}) || c.add("a", []uint32{3}) {
		t.Errorf("add: c is new once, a is there")
	}
	c.drop("b")
	if c.add("b", []uint32{4}) || !c.has("b") || c.size() != 2 {
		t.Errorf("a failing input came back: %q", inputs(c.list()))
	}
	ents := c.list()
	if !slices.Equal(inputs(ents), []string{"a", "c"}) {
		t.Errorf("entries %q, want a c", inputs(ents))
	}
	if !slices.Equal(ents[1].cov, []uint32{2}) || !slices.Equal(ents[0].cov, []uint32{3}) {
		t.Errorf("coverage not updated: %+v", ents)
	}
	ents[0].input = "changed by the caller"
	c.reset([]string{"d", "c"})
	got := c.list()
	if !slices.Equal(inputs(got), []string{"d", "c", "a"}) || got[1].cov != nil || got[2].cov != nil {
		t.Errorf("next build: %+v, want d c a without coverage", got)
	}
	if c.has("b") {
		t.Errorf("an input that failed on the last build is still out")
	}
}

// TestCorpusStoreMinimize: minimizing keeps the smallest entries that reach the
// coverage of all and those whose coverage is not known, deletes the others'
// files (matched by content), and raises the size of the next minimization.
func TestCorpusStoreMinimize(t *testing.T) {
	dir := t.TempDir()
	c := newCorpusStore(dir, "FuzzX", &strings.Builder{})
	c.reset([]string{"unknown"})
	c.add("long one", []uint32{1, 2})
	c.add("ab", []uint32{1})
	c.add("c", []uint32{2})
	c.add("dup", []uint32{1})
	for _, e := range c.list() {
		if _, err := WriteCorpusFile(dir, e.input); err != nil {
			t.Fatal(err)
		}
	}
	if c.minimizeDue() {
		t.Errorf("minimization due at 5 entries")
	}
	if cands := c.seedCandidates(); !slices.Equal(cands, []string{"c", "ab"}) {
		t.Errorf("seed candidates %q, want c ab", cands)
	}
	before, after := c.minimize()
	if got := inputs(c.list()); before != 5 || after != 3 || !slices.Equal(got, []string{"unknown", "ab", "c"}) {
		t.Errorf("minimized %d → %d: %q, want 5 → 3: unknown ab c", before, after, got)
	}
	files, _ := os.ReadDir(dir)
	var left []string
	for _, f := range files {
		data, _ := os.ReadFile(filepath.Join(dir, f.Name()))
		left = append(left, string(data))
	}
	slices.Sort(left)
	if !slices.Equal(left, []string{"ab", "c", "unknown"}) {
		t.Errorf("files left %q, want those of ab c unknown", left)
	}
	if c.cminAt != cminFirst {
		t.Errorf("next minimization at %d, want %d", c.cminAt, cminFirst)
	}
}

// TestCorpusStoreSaveWaits: an entry that cannot be written (its directory
// cannot be made: a file stands in its way, as a full disk stops a write)
// waits in memory, said once; it is written with the next one once the
// directory can be made, and that is said too.
func TestCorpusStoreSaveWaits(t *testing.T) {
	root := t.TempDir()
	blocker := filepath.Join(root, "corpus")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	c := newCorpusStore(filepath.Join(blocker, "FuzzX"), "FuzzX", &log)
	a, b := "go test fuzz v1\nint(1)\n", "go test fuzz v1\nint(2)\n"
	c.save(a)
	c.save("")
	if n := strings.Count(log.String(), "kept in memory"); n != 1 {
		t.Errorf("said %d times that entries wait, want once:\n%s", n, log.String())
	}
	os.Remove(blocker)
	c.save(b)
	for _, in := range []string{a, b} {
		if _, err := os.Stat(filepath.Join(c.dir, fuzzrt.FileName([]byte(in)))); err != nil {
			t.Errorf("not saved: %v", err)
		}
	}
	if !strings.Contains(log.String(), "saved again (2 had waited)") {
		t.Errorf("the log does not say saving works again:\n%s", log.String())
	}
}
