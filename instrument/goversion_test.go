package instrument

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/internal/testws"
)

func TestWithGoVersion(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"package p\n", "//go:build go1.26\n\npackage p\n"},
		{"// Package p is p.\npackage p\n", "//go:build go1.26\n\n// Package p is p.\npackage p\n"},
		{"//go:build linux || darwin\n\npackage p\n", "//go:build (linux || darwin) && go1.26\n\npackage p\n"},
		{"// Copyright.\n\n//go:build go1.26 && !go1.27\n\npackage p\n", "// Copyright.\n\n//go:build go1.26 && !go1.27 && go1.26\n\npackage p\n"},
		// A //go:build in the body is not a constraint.
		{"package p\n\n//go:build linux\n", "//go:build go1.26\n\npackage p\n\n//go:build linux\n"},
	} {
		if got := string(withGoVersion([]byte(c.src), "go1.26", "")); got != c.want {
			t.Errorf("withGoVersion(%q) = %q, want %q", c.src, got, c.want)
		}
	}
	// A user's file keeps its line numbers; old-style constraints are kept in force.
	for _, c := range []struct{ src, want string }{
		{"package p\n", "//go:build go1.21\n\n//line /w/p.go:1\npackage p\n"},
		{"// +build linux darwin\n// +build !cgo\n\npackage p\n", "//go:build (linux || darwin) && !cgo && go1.21\n\n//line /w/p.go:1\n// +build linux darwin\n// +build !cgo\n\npackage p\n"},
		{"//go:build linux\n// +build linux\n\npackage p\n", "//go:build linux && go1.21\n// +build linux\n\npackage p\n"},
	} {
		if got := string(withGoVersion([]byte(c.src), "go1.21", "/w/p.go")); got != c.want {
			t.Errorf("withGoVersion(%q, /w/p.go) = %q, want %q", c.src, got, c.want)
		}
	}
}

func TestPredatesHooks(t *testing.T) {
	for v, want := range map[string]bool{"": false, "1.16": true, "1.17": true, "1.12": true, "1.18": true, "1.20.5": true, "1.21.0": false, "1.26": false, "2.0": false} {
		if got := predatesHooks(v); got != want {
			t.Errorf("predatesHooks(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestOldGoLine builds a target, comparison hooks and all, in modules whose
// go.mod names language versions older than the one the runtime's sources are
// written in (they are compiled as a package of the user's module), and, with
// go 1.16, older than generics, which the hooks' helpers are.
func TestOldGoLine(t *testing.T) {
	for _, v := range []string{"1.16", "1.18", "1.20", "1.22"} {
		t.Run("go"+v, func(t *testing.T) {
			dir := testws.Txtar(t, "testdata/oldgo.txtar")
			setGoLine(t, filepath.Join(dir, "go.mod"), v)
			bin := buildOne(t, dir)
			if bin.CmpCounters == 0 {
				t.Errorf("no comparison sites: b[0] == 0x42 was not hooked")
			}
			if len(bin.Warnings) > 0 {
				t.Errorf("warnings: %q", bin.Warnings)
			}
		})
	}
}

// setGoLine sets the go line of the go.mod file at path to v.
func setGoLine(t *testing.T, path, v string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^go .*$`)
	if !re.Match(data) {
		t.Fatalf("%s has no go line", path)
	}
	if err := os.WriteFile(path, re.ReplaceAll(data, []byte("go "+v)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDependencyGoLines: dependencies whose go.mod names go 1.18 (generics, but
// an interface type does not satisfy comparable before go 1.20) or no go line at
// all (go 1.16 to the toolchain, as gopkg.in/yaml.v3's) get their hooks too. The
// build used to fail with them and fall back, silently, to no comparison hooks
// in any package.
func TestDependencyGoLines(t *testing.T) {
	dir := testws.Txtar(t, "testdata/deplines.txtar")
	bin := buildOne(t, dir)
	if len(bin.Warnings) > 0 {
		t.Errorf("warnings: %q", bin.Warnings)
	}
	if bin.CmpCounters < 4 {
		t.Errorf("%d comparison sites, want the two of each dependency", bin.CmpCounters)
	}
}

// TestBlamePackages: a package whose hooked build fails on something leaving
// out lines does not mend is built without hooks, the others keep theirs, and
// the build says so. The output is the go command's, as it was for
// gopkg.in/yaml.v3 before its missing go line was read as go 1.16; a user's
// own error is not blamed on the hooks.
func TestBlamePackages(t *testing.T) {
	vh := loadVarHooks(t.TempDir())
	vh.hookedPkgs = map[string]string{"gopkg.in/yaml.v3": "gopkg.in/yaml.v3@v3.0.1", "example.com/app": "", "example.com/lib": ""}
	out := "# gopkg.in/yaml.v3\n" +
		"../../.cache/fuzzls/build/app-0123456789ab/mods/gopkg.in_yaml.v3_v3.0.1/zz_fuzzls_instrumentation.go:9: type parameter requires go1.18 or later (-lang was set to go1.16; check go.mod)\n" +
		"# example.com/app [example.com/app.test]\n" +
		"./app.go:12:2: undefined: frobnicate\n"
	if !vh.blamePackages(&BuildError{Output: out}) {
		t.Fatal("nothing blamed")
	}
	if vh.plain["gopkg.in/yaml.v3"] == "" || vh.plain["example.com/app"] != "" || vh.plain["example.com/lib"] != "" {
		t.Errorf("plain = %q, want yaml.v3 only", vh.plain)
	}
	if w := vh.warnings(); len(w) != 1 || !strings.Contains(w[0], "gopkg.in/yaml.v3") || !strings.Contains(w[0], "-lang was set to go1.16") ||
		!strings.Contains(w[0], ": zz_fuzzls_instrumentation.go:9: ") || strings.Contains(w[0], "/mods/") {
		t.Errorf("warnings = %q", w)
	}
	if vh.blamePackages(&BuildError{Output: out}) {
		t.Error("blamed again: a package already plain cannot be the cause")
	}
}

// TestPlainPackagesKept: that a package of the module cache cannot take hooks
// is kept for later builds of that module version (its files never change); a
// workspace package's is not (the user may mend it).
func TestPlainPackagesKept(t *testing.T) {
	dir := t.TempDir()
	vh := loadVarHooks(dir)
	vh.hookedPkgs = map[string]string{"gopkg.in/yaml.v3": "gopkg.in/yaml.v3@v3.0.1", "example.com/lib": ""}
	out := "# gopkg.in/yaml.v3\n" +
		"zz_fuzzls_instrumentation.go:9: type parameter requires go1.18 or later (-lang was set to go1.16; check go.mod)\n" +
		"# example.com/lib\n" +
		"zz_fuzzls_instrumentation.go:4: cannot use FuzzlsCmpU8 (value of type func) as int value\n"
	if !vh.blamePackages(&BuildError{Output: out}) || len(vh.plain) != 2 {
		t.Fatalf("plain = %q, want both", vh.plain)
	}
	vh.save()
	for _, tc := range []struct {
		importPath, modVersion string
		plain                  bool
	}{
		{"gopkg.in/yaml.v3", "gopkg.in/yaml.v3@v3.0.1", true},
		{"gopkg.in/yaml.v3", "gopkg.in/yaml.v3@v3.0.2", false},
		{"example.com/lib", "", false},
	} {
		later := loadVarHooks(dir)
		later.knownPlain(tc.importPath, tc.modVersion)
		if got := later.plain[tc.importPath] != ""; got != tc.plain {
			t.Errorf("%s (%q): plain in a later build = %v, want %v", tc.importPath, tc.modVersion, got, tc.plain)
		}
	}
}

// buildOne loads the package in dir and builds it, comparison hooks and all.
func buildOne(t *testing.T, dir string) *Binary {
	t.Helper()
	pkgs, err := new(Loader).Load(t.Context(), dir, ".")
	if err != nil || len(pkgs) != 1 {
		t.Fatalf("load: %v (%d packages)", err, len(pkgs))
	}
	bin, err := Build(t.Context(), pkgs[0], BuildOptions{CacheDir: t.TempDir(), Runtime: os.DirFS("../engine/fuzzrt")})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return bin
}
