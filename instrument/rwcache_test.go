package instrument

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"fuzzls.dev/fuzzls/internal/testws"
)

// TestRewriteReused: a build whose units are as before takes their rewrite
// from the build directory (rwcache.go) and gives the same Binary; an edited
// file's unit alone is rewritten; an instrumented file removed from the cache
// is written again, and the build still compiles.
func TestRewriteReused(t *testing.T) {
	dir := testws.Txtar(t, dotImportModule)
	cache := t.TempDir()
	build := func() *Binary {
		t.Helper()
		pkgs, err := new(Loader).Load(t.Context(), filepath.Join(dir, "b"), ".")
		if err != nil || len(pkgs) != 1 {
			t.Fatalf("load: %v (%d packages)", err, len(pkgs))
		}
		bin, err := Build(t.Context(), pkgs[0], BuildOptions{CacheDir: cache, Runtime: os.DirFS("../engine/fuzzrt")})
		if err != nil {
			t.Fatalf("build: %v", err)
		}
		return bin
	}
	// records maps each unit record to its modification time.
	records := func() map[string]time.Time {
		t.Helper()
		paths, _ := filepath.Glob(filepath.Join(cache, "build", "*", "rw", "*.gob"))
		out := map[string]time.Time{}
		for _, p := range paths {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			out[p] = fi.ModTime()
		}
		return out
	}
	same := func(a, b *Binary) {
		t.Helper()
		if !reflect.DeepEqual(a.Files, b.Files) || !reflect.DeepEqual(a.Blocks, b.Blocks) ||
			!reflect.DeepEqual(a.CmpSites, b.CmpSites) || a.CmpCounters != b.CmpCounters ||
			!reflect.DeepEqual(a.Dict, b.Dict) || !reflect.DeepEqual(a.Inputs, b.Inputs) {
			t.Errorf("the reused build differs:\n%+v\n%+v", a, b)
		}
	}

	first := build()
	before := records()
	if len(before) < 2 {
		t.Fatalf("unit records: %v, want one per unit (b, a)", before)
	}
	time.Sleep(20 * time.Millisecond) // a record written again would have a later time
	second := build()
	same(first, second)
	if after := records(); !reflect.DeepEqual(before, after) {
		t.Errorf("records rewritten by a build of unchanged files:\n%v\n%v", before, after)
	}

	// An edit of a: its unit alone is rewritten, and its new block is there.
	aFile := filepath.Join(dir, "a", "a.go")
	src, err := os.ReadFile(aFile)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(src), "return false\n}", "if len(b) > 9 {\n\t\treturn true\n\t}\n\treturn false\n}", 1)
	if err := os.WriteFile(aFile, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	third := build()
	if len(third.Blocks) <= len(second.Blocks) {
		t.Errorf("blocks after the edit: %d, before %d: the edited file was not rewritten", len(third.Blocks), len(second.Blocks))
	}
	changed := 0
	for p, mt := range records() {
		if !mt.Equal(before[p]) {
			changed++
		}
	}
	if changed != 1 {
		t.Errorf("%d unit records rewritten after an edit of one package's file, want 1", changed)
	}

	// An instrumented file gone from the cache: written again, and it builds.
	backing, _ := filepath.Glob(filepath.Join(cache, "build", "*", "src", "*_b.go"))
	if len(backing) != 1 {
		t.Fatalf("instrumented copies of b.go: %v", backing)
	}
	if err := os.Remove(backing[0]); err != nil {
		t.Fatal(err)
	}
	same(third, build())
	if _, err := os.Stat(backing[0]); err != nil {
		t.Errorf("the removed instrumented file was not written again: %v", err)
	}
}
