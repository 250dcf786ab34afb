package instrument

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/internal/testws"
)

const pruneModule = "testdata/prune.txtar"

// TestPruneTests: of testdata/prune's test files, the test, the benchmark, the
// example, the helper only they call and the imports only they use go; init,
// TestMain, the target and what it calls, what a table and a method name stay;
// every kept line stays on its line, as it was; and the package, pruned,
// compiles with the real toolchain and lists the target only.
func TestPruneTests(t *testing.T) {
	dir := testws.Txtar(t, pruneModule)
	pkg := loadOne(t, dir)
	names := append(append([]string(nil), pkg.TestFiles...), pkg.XTestFiles...)
	srcs := make([][]byte, len(names))
	for i, name := range names {
		var err error
		if srcs[i], err = os.ReadFile(name); err != nil {
			t.Fatal(err)
		}
	}
	// Each package on its own, as the build's units are.
	internal := pruneTests(names[:len(pkg.TestFiles)], srcs[:len(pkg.TestFiles)], pkg.ImportNames, identsOf(pkg.XTestFiles))
	external := pruneTests(names[len(pkg.TestFiles):], srcs[len(pkg.TestFiles):], pkg.ImportNames, nil)
	if internal == nil || external == nil {
		t.Fatalf("nothing pruned: internal %v, external %v", internal != nil, external != nil)
	}
	out := map[string]string{}
	for i, b := range append(internal, external...) {
		if b == nil {
			b = srcs[i]
		}
		out[filepath.Base(names[i])] = string(b)
		// Every line of the output is the input's line or blank, but imports.
		in, got := strings.Split(string(srcs[i]), "\n"), strings.Split(string(b), "\n")
		if len(in) != len(got) {
			t.Fatalf("%s: %d lines, want %d", names[i], len(got), len(in))
		}
		for l := range in {
			if got[l] != in[l] && strings.TrimSpace(got[l]) != "" && !strings.Contains(got[l], `_ "`) && !strings.HasPrefix(strings.TrimSpace(got[l]), "_") {
				t.Errorf("%s:%d = %q, want %q or blank", filepath.Base(names[i]), l+1, got[l], in[l])
			}
		}
	}
	in := out["prune_test.go"]
	for _, gone := range []string{"func TestParse", "func onlyTests", "func BenchmarkParse", "func ExampleParse", "// Output:", "// TestParse is a test", "\t\"sort\"", `tt "text/template"`} {
		if strings.Contains(in, gone) {
			t.Errorf("prune_test.go still holds %q", gone)
		}
	}
	for _, kept := range []string{"func init()", "func TestMain(", "func FuzzParse(", "func checked(", "func fromTable(", "func (s shape) describe(", "func describedBy(", `_ "sort"`, "\t\"strings\"", `_  "text/template"`, `"unicode/utf8"`, `"os"`} {
		if !strings.Contains(in, kept) {
			t.Errorf("prune_test.go lost %q:\n%s", kept, in)
		}
	}
	if !strings.Contains(out["export_test.go"], "func ParseForTests(") {
		t.Errorf("export_test.go lost what the external tests call:\n%s", out["export_test.go"])
	}
	if !strings.Contains(out["prune_ext_test.go"], `_ "encoding/json"`) || strings.Contains(out["prune_ext_test.go"], "func TestExternal") {
		t.Errorf("prune_ext_test.go not pruned:\n%s", out["prune_ext_test.go"])
	}
	// The pruned package compiles, and its binary has the target only.
	for name, text := range out {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := testList(t, dir, ""); !slices.Equal(got, []string{"FuzzParse"}) {
		t.Errorf("pruned package's tests = %q, want [FuzzParse]", got)
	}
}

// TestBuildPrunesTests: a build compiles the package's tests pruned (its binary
// lists the target alone); one whose pruned files do not compile (here a
// package name the load did not give, so an import only a test used stays) is
// built again whole, and the package is then never pruned again.
func TestBuildPrunesTests(t *testing.T) {
	dir := testws.Txtar(t, pruneModule)
	pkg := loadOne(t, dir)
	cache := t.TempDir()
	build := func() *Binary {
		t.Helper()
		bin, err := Build(t.Context(), pkg, BuildOptions{CacheDir: cache, Runtime: os.DirFS("../engine/fuzzrt")})
		if err != nil {
			t.Fatalf("build: %v", err)
		}
		return bin
	}
	bin := build()
	if got := testList(t, "", bin.Path); !slices.Equal(got, []string{"FuzzParse"}) {
		t.Errorf("binary's tests = %q, want [FuzzParse]", got)
	}
	noPrune := filepath.Join(buildDir(BuildOptions{CacheDir: cache}, pkg), noPruneFile)
	if fileExists(noPrune) {
		t.Fatalf("%s written after a build that compiled pruned", noPrune)
	}

	// An external test that comes to call an internal test helper (a save of
	// that file alone) gets it: the internal tests' reused rewrite follows the
	// external tests' text.
	ext := filepath.Join(dir, "prune_ext_test.go")
	data, err := os.ReadFile(ext)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ext, []byte(strings.ReplaceAll(string(data), "prune.ParseForTests", "prune.LaterForTests")), 0o644); err != nil {
		t.Fatal(err)
	}
	build()
	if fileExists(noPrune) {
		t.Fatalf("built whole after the external tests came to name a dropped helper")
	}

	delete(pkg.ImportNames, "sort")
	bin = build()
	if got := testList(t, "", bin.Path); !slices.Contains(got, "TestParse") || !slices.Contains(got, "FuzzParse") {
		t.Errorf("binary's tests after the fallback = %q, want the whole package's", got)
	}
	data, err = os.ReadFile(noPrune)
	if err != nil || !strings.Contains(string(data), "sort") {
		t.Errorf("%s: %q, %v; want the pruned build's message", noPrune, data, err)
	}
}

// loadOne loads the package in dir, which must be the only one.
func loadOne(t *testing.T, dir string) *Package {
	t.Helper()
	pkgs, err := new(Loader).Load(t.Context(), dir, ".")
	if err != nil || len(pkgs) != 1 {
		t.Fatalf("load: %v (%d packages)", err, len(pkgs))
	}
	return pkgs[0]
}

// TestBuildPrunesExportedHelpers: a function of an internal test file that
// only the external tests call, through a dot import (net/netip's MkAddr), is
// kept: the build compiles pruned.
func TestBuildPrunesExportedHelpers(t *testing.T) {
	dir := testws.Txtar(t, "testdata/prunedot.txtar")
	pkg := loadOne(t, dir)
	cache := t.TempDir()
	bin, err := Build(t.Context(), pkg, BuildOptions{CacheDir: cache, Runtime: os.DirFS("../engine/fuzzrt")})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	if got := testList(t, "", bin.Path); !slices.Equal(got, []string{"FuzzD"}) {
		t.Errorf("binary's tests = %q, want [FuzzD]", got)
	}
	if noPrune := filepath.Join(buildDir(BuildOptions{CacheDir: cache}, pkg), noPruneFile); fileExists(noPrune) {
		t.Errorf("built unpruned (%s)", noPrune)
	}
}

// testList lists the tests, fuzz targets and examples of the test binary path,
// or, when path is "", of the package in dir built by go test -c.
func testList(t *testing.T, dir, path string) []string {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "p.test")
		cmd := exec.Command("go", "test", "-c", "-o", path, ".")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go test -c: %v\n%s", err, out)
		}
	}
	out, err := exec.Command(path, "-test.list", ".").Output()
	if err != nil {
		t.Fatalf("%s -test.list: %v", path, err)
	}
	return strings.Fields(string(out))
}
