package fuzzrt

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestMatchString: the patterns the coordinator gives match as regexp matches
// them; one that needs a regular expression is an error, which testing reports
// as an invalid pattern.
func TestMatchString(t *testing.T) {
	names := []string{"", "FuzzX", "FuzzXY", "AFuzzX", "FuzzA", "FuzzB", "FuzzÜber"}
	for _, pat := range []string{"^$", "^FuzzX$", "FuzzX", "^Fuzz", "X$", "^FuzzA$|^FuzzB$", "", "^FuzzÜber$"} {
		for _, name := range names {
			got, err := deps{}.MatchString(pat, name)
			want := regexp.MustCompile(pat).MatchString(name)
			if err != nil || got != want {
				t.Errorf("MatchString(%q, %q) = %v, %v; regexp says %v", pat, name, got, err, want)
			}
		}
	}
	for _, pat := range []string{"Fuzz.*", "^Fuzz[AB]$", `^Fuzz\$`, "(FuzzX)", "Fuzz+"} {
		if _, err := (deps{}).MatchString(pat, "FuzzX"); err == nil {
			t.Errorf("MatchString(%q) took a regular expression", pat)
		}
	}
}

// machineryImports are the packages the runtime may import beyond what testing
// links. None has fuzz targets of its own; a package added here must not
// either, or that target's package could not be fuzzed (instrument/std.go).
var machineryImports = []string{"encoding/binary", "os/signal", "runtime/metrics"}

// TestRuntimeImports: what the runtime links, in a user's test binary (its
// sources but the coordinator*.go files), beyond what testing links, is
// machineryImports and what they link.
func TestRuntimeImports(t *testing.T) {
	gobin := goTool(t)
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string]bool{}
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || strings.HasPrefix(n, "coordinator") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), n, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			imports[p] = true
		}
	}
	deps := func(pkgs ...string) map[string]bool {
		out, err := exec.Command(gobin, append([]string{"list", "-deps"}, pkgs...)...).Output()
		if err != nil {
			t.Fatalf("go list -deps %v: %v", pkgs, err)
		}
		set := map[string]bool{}
		for _, p := range strings.Fields(string(out)) {
			set[p] = true
		}
		return set
	}
	allowed := deps(append([]string{"testing"}, machineryImports...)...)
	var extra []string
	for p := range imports {
		if !allowed[p] {
			extra = append(extra, p)
		}
	}
	slices.Sort(extra)
	if len(extra) > 0 {
		t.Errorf("the runtime imports %v, which testing does not link: a standard library target in what they link could not be fuzzed", extra)
	}
}
