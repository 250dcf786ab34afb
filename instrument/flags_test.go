package instrument

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fuzzls.dev/fuzzls/internal/testws"
)

func TestParseBuildFlags(t *testing.T) {
	for _, tc := range []struct {
		desc string
		args []string
		want BuildFlags
		bad  string // in the error; "" for none
	}{
		{desc: "none", args: nil},
		{desc: "tags=", args: []string{"-tags=integration"}, want: BuildFlags{Tags: "integration"}},
		{desc: "tags value, space-separated, sorted", args: []string{"--tags", "b a,b"}, want: BuildFlags{Tags: "a,b"}},
		{desc: "race", args: []string{"-race"}, want: BuildFlags{Race: true}},
		{desc: "race=false", args: []string{"-race", "-race=false"}},
		{desc: "ldflags and gcflags", args: []string{"-ldflags=-X main.v=1", "-gcflags", "all=-N -l"},
			want: BuildFlags{LDFlags: "-X main.v=1", GCFlags: "all=-N -l"}},
		{desc: "unknown, the rest kept", args: []string{"-mod=vendor", "-race", "x"}, want: BuildFlags{Race: true}, bad: "unsupported build flags -mod=vendor x"},
		{desc: "no value", args: []string{"-tags"}, bad: "-tags needs a value"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			got, err := ParseBuildFlags(tc.args)
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if tc.bad == "" && err != nil || tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)) {
				t.Errorf("error %v, want one with %q", err, tc.bad)
			}
		})
	}
	f := BuildFlags{Tags: "b,a", Race: true, LDFlags: "-s -w", GCFlags: "-N"}
	if got, want := f.Args(), []string{"-tags=a,b", "-race", "-ldflags=-s -w", "-gcflags=-N"}; !slices.Equal(got, want) {
		t.Errorf("Args() = %q, want %q", got, want)
	}
}

// Builds with different flags go to different directories, so that a -race
// build does not overwrite the plain one; tags in another order are the same.
func TestBuildDirPerFlags(t *testing.T) {
	pkg := &Package{ImportPath: "example.com/m", Name: "m", Dir: "/src/m"}
	dir := func(f BuildFlags) string { return buildDir(BuildOptions{CacheDir: "/cache", Flags: f}, pkg) }
	plain := dir(BuildFlags{})
	seen := map[string]bool{plain: true}
	for _, f := range []BuildFlags{{Race: true}, {Tags: "integration"}, {LDFlags: "-s"}, {GCFlags: "-N"}} {
		d := dir(f)
		if seen[d] {
			t.Errorf("%+v builds into %s, as another set of flags does", f, d)
		}
		seen[d] = true
	}
	if dir(BuildFlags{Tags: "b,a"}) != dir(BuildFlags{Tags: "a b"}) {
		t.Error("the same tags in another order build elsewhere")
	}
}

// A -race build where the race detector cannot work says why in one sentence,
// not go's "-race requires cgo; enable cgo by setting CGO_ENABLED=1" when the
// cause is a missing C compiler.
func TestRaceNeedsCgo(t *testing.T) {
	dir := testws.Copy(t, "../testdata/flags")
	pkgs, err := (&Loader{Flags: BuildFlags{Race: true}}).Load(t.Context(), dir, "./racy")
	if err != nil || len(pkgs) != 1 {
		t.Fatalf("load: %v (%d packages)", err, len(pkgs))
	}
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"CGO_ENABLED=0"}, "-race needs cgo, which is off here (CGO_ENABLED=0); set CGO_ENABLED=1"},
		{[]string{"CC=fuzzls-no-such-cc"}, "-race needs cgo, and cgo needs a C compiler: fuzzls-no-such-cc is not found on PATH"},
	} {
		t.Run(tc.env[0], func(t *testing.T) {
			for _, kv := range tc.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			_, err := Build(t.Context(), pkgs[0], BuildOptions{CacheDir: t.TempDir(), Runtime: os.DirFS("../engine/fuzzrt"), Flags: BuildFlags{Race: true}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("build: %v, want %q", err, tc.want)
			}
		})
	}
}

// A cached load stays good while a file the build constraints leave out is
// there unchanged; an edit to it (its constraint may have changed) loads again.
// With -tags the file is in the package.
func TestIgnoredFileReload(t *testing.T) {
	dir := testws.Copy(t, "../testdata/flags")
	tagged := filepath.Join(dir, "racy", "racy_integration.go")
	if err := os.WriteFile(tagged, []byte("//go:build integration\n\npackage racy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var l Loader
	load := func() *Package {
		t.Helper()
		pkgs, err := l.Load(t.Context(), filepath.Join(dir, "racy"), ".")
		if err != nil || len(pkgs) != 1 {
			t.Fatalf("load: %v %v", pkgs, err)
		}
		return pkgs[0]
	}
	first := load()
	if !slices.Contains(first.IgnoredFiles, tagged) || slices.Contains(first.GoFiles, tagged) {
		t.Fatalf("ignored %v, files %v: want %s ignored", first.IgnoredFiles, first.GoFiles, tagged)
	}
	if load() != first {
		t.Error("a file left out by its constraint made a new load")
	}
	if err := os.WriteFile(tagged, []byte("package racy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Second)
	os.Chtimes(tagged, later, later)
	if p := load(); p == first || !slices.Contains(p.GoFiles, tagged) {
		t.Errorf("after its constraint went: files %v, want %s in", p.GoFiles, tagged)
	}

	pkgs, err := (&Loader{Flags: BuildFlags{Tags: "integration"}}).Load(t.Context(), filepath.Join(dir, "tagged"), ".")
	if err != nil || len(pkgs) != 1 || len(pkgs[0].Targets) != 1 || pkgs[0].Targets[0].Name != "FuzzTagged" {
		t.Errorf("with -tags integration: %v %v, want FuzzTagged", pkgs, err)
	}
}
