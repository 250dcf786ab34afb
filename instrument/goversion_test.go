package instrument

import (
	"fmt"
	"os"
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

func TestNeedsGenericsUpgrade(t *testing.T) {
	for v, want := range map[string]bool{"": false, "1.16": true, "1.17": true, "1.12": true, "1.18": false, "1.21.0": false, "1.26": false, "2.0": false} {
		if got := needsGenericsUpgrade(v); got != want {
			t.Errorf("needsGenericsUpgrade(%q) = %v, want %v", v, got, want)
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
			dir := testws.Write(t, map[string]string{
				"go.mod":      fmt.Sprintf("module example.com/old\n\ngo %s\n", v),
				"old.go":      "package old\n\n// Magic reports whether b starts with a magic byte.\nfunc Magic(b []byte) bool {\n\treturn len(b) > 3 && b[0] == 0x42\n}\n",
				"old_test.go": "package old\n\nimport \"testing\"\n\nfunc FuzzMagic(f *testing.F) {\n\tf.Add([]byte(\"zz\"))\n\tf.Fuzz(func(t *testing.T, b []byte) { Magic(b) })\n}\n",
			})
			pkgs, err := new(Loader).Load(t.Context(), dir, ".")
			if err != nil || len(pkgs) != 1 {
				t.Fatalf("load: %v (%d packages)", err, len(pkgs))
			}
			bin, err := Build(t.Context(), pkgs[0], BuildOptions{CacheDir: t.TempDir(), Runtime: os.DirFS("../engine/fuzzrt")})
			if err != nil {
				t.Fatalf("build with go %s in go.mod: %v", v, err)
			}
			if bin.CmpCounters == 0 {
				t.Errorf("no comparison sites: b[0] == 0x42 was not hooked")
			}
		})
	}
}
