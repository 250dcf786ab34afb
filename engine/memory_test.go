package engine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/instrument"
	"fuzzls.dev/fuzzls/internal/testws"
)

// TestSessionsShareBuild: the sessions of two targets of one package hold one
// copy of the build's blocks, comparison sites, files and dictionary (a
// daemon fuzzing every target of a repository holds one per package, not one
// per target); a target of another package has its own.
func TestSessionsShareBuild(t *testing.T) {
	dir := testws.Write(t, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"a/a.go": `package a

import "strings"

// Parse counts the fields of s, a "key=value;" list.
func Parse(s string) int {
	n := 0
	for _, f := range strings.Split(s, ";") {
		if k, _, ok := strings.Cut(f, "="); ok && k == "magic" {
			n += 10
		} else if ok {
			n++
		}
	}
	return n
}
`,
		"a/a_test.go": `package a

import "testing"

func FuzzParse(f *testing.F) {
	f.Add("a=1;b=2")
	f.Fuzz(func(t *testing.T, s string) { Parse(s) })
}

func FuzzParseBytes(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) { Parse(string(b)) })
}
`,
		"b/b_test.go": `package b

import (
	"testing"

	"example.com/m/a"
)

func FuzzB(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		if a.Parse(s) > 20 {
			t.Skip()
		}
	})
}
`,
	})
	e := New(Options{CacheDir: t.TempDir()}, nil)
	t.Cleanup(e.Close)
	targets, err := e.Targets(t.Context(), dir, "./...")
	if err != nil {
		t.Fatal(err)
	}
	built := map[string]*instrument.Binary{}
	sessions := map[string]*Session{}
	for _, tg := range targets {
		s, err := e.prepared(tg)
		if err != nil {
			t.Fatalf("%s: %v", tg.Name, err)
		}
		built[tg.Name], sessions[tg.Name] = s.bin, s
	}
	p1, p2, b := built["FuzzParse"], built["FuzzParseBytes"], built["FuzzB"]
	if p1 == nil || p2 == nil || b == nil {
		t.Fatalf("built %v, want FuzzParse, FuzzParseBytes and FuzzB", built)
	}
	if len(p1.Blocks) == 0 || len(p1.CmpSites) == 0 || len(p1.Dict) == 0 {
		t.Fatalf("package a's build has %d blocks, %d comparison sites, %d literals: too few to test", len(p1.Blocks), len(p1.CmpSites), len(p1.Dict))
	}
	if &p1.Blocks[0] != &p2.Blocks[0] || &p1.CmpSites[0] != &p2.CmpSites[0] || &p1.Files[0] != &p2.Files[0] || &p1.Dict[0] != &p2.Dict[0] {
		t.Errorf("the two targets of package a hold two copies of its build's blocks, sites, files or literals")
	}
	// What the changed code is compared with at the next build: the same too.
	texts := func(name string) uintptr { return reflect.ValueOf(sessions[name].focus.texts).Pointer() }
	if texts("FuzzParse") != texts("FuzzParseBytes") {
		t.Errorf("the two targets of package a hold two copies of its build's texts")
	}
	if &b.Blocks[0] == &p1.Blocks[0] {
		t.Errorf("package b's build shares package a's blocks")
	}
}

// TestSessionRetainedPerBlock: what a session keeps of a build beside the
// build itself (its coverage, the changed code's texts) is a few bytes a
// block, whatever the code: a daemon fuzzing many targets of a big repository
// holds it for every block of every target's build; sessions of one build
// share what they can. Measured on eight sessions installing a build of the
// standard library's go/... sources (real code, no compile), the same one or
// one each, with the heap after a collection.
func TestSessionRetainedPerBlock(t *testing.T) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, pkg := range []string{"types", "parser", "printer", "ast", "doc"} {
		more, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "src", "go", pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, more...)
	}
	bin := &instrument.Binary{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, blocks, err := instrument.RewriteFile(f, src, "0")
		if err != nil {
			continue // a file of another build tag's that does not parse alone
		}
		for _, b := range blocks {
			bin.Blocks = append(bin.Blocks, instrument.Block{File: len(bin.Files), CoverBlock: b})
		}
		bin.Files = append(bin.Files, f)
	}
	if len(bin.Blocks) < 5000 {
		t.Fatalf("%d blocks in go/...: too few to measure", len(bin.Blocks))
	}
	const sessions = 8
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	// perBlock installs a build in each of eight sessions: bins gives session
	// i's (the same one: targets of one package; copies: of eight packages).
	perBlock := func(bins func(i int) *instrument.Binary) float64 {
		e := New(Options{CacheDir: t.TempDir()}, nil)
		defer e.Close()
		var copies []*instrument.Binary
		for i := range sessions {
			copies = append(copies, bins(i))
		}
		before := heap()
		var ss []*Session
		for i := range sessions {
			s := newSession(e, Target{Name: fmt.Sprintf("Fuzz%d", i), Package: "go/types", File: files[0]})
			s.install(copies[i], &seedSet{}, nil, nil)
			ss = append(ss, s)
		}
		after := heap()
		runtime.KeepAlive(ss)
		return float64(after-before) / sessions / float64(len(bin.Blocks))
	}
	bin.Path = "/build/types.test"
	one := perBlock(func(int) *instrument.Binary { return bin })
	eight := perBlock(func(i int) *instrument.Binary {
		c := *bin
		c.Path = fmt.Sprintf("/build/%d/types.test", i)
		return &c
	})
	t.Logf("%d blocks in %d files: a session retains %.1f bytes a block of a build it shares, %.1f of its own", len(bin.Blocks), len(bin.Files), one, eight)
	// Its own: a coverage byte and a text key of 8 bytes a block, and a few
	// kilobytes a session; of a shared build, the coverage byte.
	if eight > 16 {
		t.Errorf("a session retains %.1f bytes a block of its own build, want at most 16", eight)
	}
	if one > 4 {
		t.Errorf("a session retains %.1f bytes a block of a build it shares with 7 others, want at most 4", one)
	}
}
