package instrument

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/internal/testws"
)

// TestBuildDropsRejectedVarHooks: a hook of two typed operands that cannot be
// typed without type information (an interface against a concrete value, in
// testdata/strength's sameValue) fails the build on its line; the retry leaves
// that line alone and keeps every other hook, the two-operand checksum
// comparison among them, and later builds skip the line from the start. So
// too with a cache directory whose path starts with the module's (the go
// command prints /w/m-cache/… as ..-cache/… from the package /w/m/p: the line
// was not found, and the package lost all its hooks).
func TestBuildDropsRejectedVarHooks(t *testing.T) {
	for _, place := range []string{"apart", "prefixed"} {
		t.Run(place, func(t *testing.T) { testBuildDropsRejectedVarHooks(t, place) })
	}
}

func testBuildDropsRejectedVarHooks(t *testing.T, place string) {
	dir := testws.Copy(t, "../testdata/strength")
	pkgs, err := new(Loader).Load(t.Context(), dir, ".")
	if err != nil || len(pkgs) != 1 {
		t.Fatalf("load: %v (%d packages)", err, len(pkgs))
	}
	cache := t.TempDir()
	if place == "prefixed" {
		cache = filepath.Dir(dir) + "-cache"
		t.Cleanup(func() { os.RemoveAll(cache) })
	}
	build := func(noCmp bool) *Binary {
		bin, err := Build(t.Context(), pkgs[0], BuildOptions{CacheDir: cache, Runtime: os.DirFS("../engine/fuzzrt"), NoCmp: noCmp})
		if err != nil {
			t.Fatalf("build: %v", err)
		}
		return bin
	}
	bin := build(false)
	if len(bin.Warnings) > 0 {
		t.Errorf("warnings: %q, want none", bin.Warnings)
	}
	// Its steps say where the time went: the failed attempt, then the retry.
	var names []string
	for _, st := range bin.Steps {
		names = append(names, st.Name)
	}
	wantSteps := []string{"checks", "plan", "instrument", "overlay", "go test -c failed", "plan", "instrument", "overlay", "go test -c"}
	if !slices.Equal(names, wantSteps) {
		t.Errorf("steps = %q, want %q", names, wantSteps)
	}
	src := filepath.Join(dir, "strength.go")
	out := instrumentedFile(t, cache, src)
	for _, c := range []struct {
		line   string // a text on the line
		hooked bool
	}{
		{"func sameValue(", false}, // v == n
		{"if sum := fnv32(", true}, // h.sum == sum
	} {
		line := lineWith(t, out, c.line)
		if hooked := strings.Contains(line, "FuzzlsEq_"); hooked != c.hooked {
			t.Errorf("line of %q hooked = %v, want %v:\n%s", c.line, hooked, c.hooked, line)
		}
	}
	if bin.CmpCounters == 0 {
		t.Errorf("no comparison sites left")
	}
	// The rejected line is remembered by its text, so the next build of the
	// package does not fail on it again.
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	vh := loadVarHooks(buildDir(BuildOptions{CacheDir: cache}, pkgs[0]))
	want := strings.Count(string(data[:strings.Index(string(data), "func sameValue(")]), "\n") + 1
	if got := vh.skipped(src, data); len(got) != 1 || !got[want] {
		t.Errorf("lines the next build skips = %v, want line %d", got, want)
	}
	if plain := build(true); plain.CmpCounters != 0 {
		t.Errorf("NoCmp build has %d comparison sites", plain.CmpCounters)
	}
}

// instrumentedFile returns the instrumented copy of the user's file src
// that the last build under cache compiled.
func instrumentedFile(t *testing.T, cache, src string) string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(cache, "build", "*", "src", "*_"+filepath.Base(src)))
	if len(matches) != 1 {
		t.Fatalf("instrumented copies of %s: %v", src, matches)
	}
	data, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// lineWith returns the line of text that holds s.
func lineWith(t *testing.T, text, s string) string {
	t.Helper()
	for l := range strings.SplitSeq(text, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	t.Fatalf("no line holds %q", s)
	return ""
}

// dotImportModule: package b dot-imports package a, as expr-lang/expr's checker
// does; both are instrumented.
const dotImportModule = "testdata/dotimport.txtar"

// TestDotImport: the names instrumentation declares cannot clash through a dot
// import (they did: FuzzlsCounters_0 in both packages).
func TestDotImport(t *testing.T) {
	dir := testws.Txtar(t, dotImportModule)
	pkgs, err := new(Loader).Load(t.Context(), filepath.Join(dir, "b"), ".")
	if err != nil || len(pkgs) != 1 {
		t.Fatalf("load: %v (%d packages)", err, len(pkgs))
	}
	for _, noCmp := range []bool{false, true} {
		bin, err := Build(t.Context(), pkgs[0], BuildOptions{CacheDir: t.TempDir(), Runtime: os.DirFS("../engine/fuzzrt"), NoCmp: noCmp})
		if err != nil {
			t.Fatalf("build (noCmp %v): %v", noCmp, err)
		}
		if len(bin.Warnings) > 0 {
			t.Errorf("warnings: %q", bin.Warnings)
		}
		files := map[string]bool{}
		for _, f := range bin.Files {
			files[filepath.Base(filepath.Dir(f))] = true
		}
		if !files["a"] || !files["b"] {
			t.Errorf("instrumented files %q, want both packages'", bin.Files)
		}
	}
}

// TestGeneratedCodeError: a compiler message about code fuzzls added is never
// placed in the user's file (at a line past its end, as it was), nor split at the
// compiler's "[physical position]": here a user identifier is made to clash with
// a declaration the instrumentation adds.
func TestGeneratedCodeError(t *testing.T) {
	dir := testws.Txtar(t, dotImportModule)
	clash := "package b\n\nvar " + counterVar(newFileID("example.com/m/b", 0)) + " int\n"
	if err := os.WriteFile(filepath.Join(dir, "b", "clash.go"), []byte(clash), 0o644); err != nil {
		t.Fatal(err)
	}
	pkgs, err := new(Loader).Load(t.Context(), filepath.Join(dir, "b"), ".")
	if err != nil || len(pkgs) != 1 {
		t.Fatalf("load: %v (%d packages)", err, len(pkgs))
	}
	_, err = Build(t.Context(), pkgs[0], BuildOptions{CacheDir: t.TempDir(), Runtime: os.DirFS("../engine/fuzzrt"), NoCmp: true})
	var be *BuildError
	if !errors.As(err, &be) {
		t.Fatalf("build: %v, want a BuildError", err)
	}
	generated := 0
	for _, d := range be.Diagnostics {
		if d.File == "" {
			if strings.Contains(d.Message, "fuzzls's generated code") {
				generated++
			}
			continue
		}
		if strings.Contains(d.File, "zz_fuzzls") || strings.Contains(d.File, "[") {
			t.Errorf("diagnostic names generated code as the user's: %+v", d)
		}
		data, err := os.ReadFile(d.File)
		if err != nil {
			t.Errorf("diagnostic in a file that does not exist: %+v", d)
			continue
		}
		if lines := strings.Count(string(data), "\n"); d.Line > lines {
			t.Errorf("diagnostic past the end of %s (%d lines): %+v", d.File, lines, d)
		}
	}
	if generated == 0 {
		t.Errorf("no diagnostic says the generated code is at fault: %+v", be.Diagnostics)
	}
}

// TestCopyHoldsLinkedPackages: a dependency module instrumented in a copy is
// replaced by it for every import in the test binary, so the copy holds the
// packages of that module that only the external test package's imports reach
// (through a module that is not instrumented), as golang.org/x/sys/unix is reached
// in go-ethereum's core/types test; those are copied, not instrumented.
func TestCopyHoldsLinkedPackages(t *testing.T) {
	dir, bin := buildArchive(t, "testdata/xtestdeps.txtar")
	pkgsOf := map[string]bool{}
	for _, f := range bin.Files {
		rel, _ := filepath.Rel(dir, filepath.Dir(f))
		pkgsOf[filepath.ToSlash(rel)] = true
	}
	if !pkgsOf["lib/a"] || pkgsOf["lib/b"] || pkgsOf["other"] {
		t.Errorf("instrumented packages %v, want lib/a's and not lib/b's or other's", pkgsOf)
	}
}

// TestCopyHoldsCgoFiles: a dependency module instrumented in a copy holds what
// its cgo package's C compiler reads outside the package's directory (a header
// its #cgo CFLAGS name by ${SRCDIR}/..), as supranational/blst's bindings, which
// go-ethereum's tests/fuzzers/bls12381 reaches, read theirs.
func TestCopyHoldsCgoFiles(t *testing.T) {
	if out, err := exec.Command("go", "env", "CGO_ENABLED").Output(); err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Skipf("cgo is off here (go env CGO_ENABLED: %s %v)", out, err)
	}
	dir, bin := buildArchive(t, "testdata/cgodep.txtar")
	if !slices.Contains(bin.Files, filepath.Join(dir, "lib", "c", "even.go")) {
		t.Errorf("instrumented files %q, want lib/c/even.go", bin.Files)
	}
}

// buildArchive builds, without comparison hooks, the package at the root of the
// workspace of the txtar archive at path, which it returns with the binary.
func buildArchive(t *testing.T, path string) (string, *Binary) {
	t.Helper()
	dir := testws.Txtar(t, path)
	pkgs, err := new(Loader).Load(t.Context(), dir, ".")
	if err != nil || len(pkgs) != 1 {
		t.Fatalf("load: %v (%d packages)", err, len(pkgs))
	}
	bin, err := Build(t.Context(), pkgs[0], BuildOptions{CacheDir: t.TempDir(), Runtime: os.DirFS("../engine/fuzzrt"), NoCmp: true})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return dir, bin
}

// TestVarSkipShared: a dependency's line whose hook the compiler rejects fails
// the first build that links it, and no other package's: what a build learns
// is kept beside all build directories (the first build of each of
// go-ethereum's 49 targets failed on the same lines of common/hexutil).
func TestVarSkipShared(t *testing.T) {
	dir := testws.Txtar(t, "testdata/sharedskip.txtar")
	cache := t.TempDir()
	failed := func(sub string) int {
		t.Helper()
		pkgs, err := new(Loader).Load(t.Context(), filepath.Join(dir, sub), ".")
		if err != nil || len(pkgs) != 1 {
			t.Fatalf("load %s: %v (%d packages)", sub, err, len(pkgs))
		}
		bin, err := Build(t.Context(), pkgs[0], BuildOptions{CacheDir: cache, Runtime: os.DirFS("../engine/fuzzrt")})
		if err != nil {
			t.Fatalf("build %s: %v", sub, err)
		}
		if len(bin.Warnings) > 0 {
			t.Errorf("%s: warnings %q, want none", sub, bin.Warnings)
		}
		n := 0
		for _, st := range bin.Steps {
			if st.Name == "go test -c failed" {
				n++
			}
		}
		return n
	}
	if n := failed("b"); n != 1 {
		t.Errorf("b's first build: %d failed attempts, want 1 (the rejected line of a)", n)
	}
	if n := failed("c"); n != 0 {
		t.Errorf("c's first build: %d failed attempts, want 0 (b's build learned a's line)", n)
	}
}
