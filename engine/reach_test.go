package engine

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fuzzls.dev/fuzzls/internal/testws"
)

// TestGoEthereum: go-ethereum's own main fuzz target, core/types's FuzzRLP, at
// a pinned version fetched through the module proxy, builds and fuzzes. Its
// external test package links golang.org/x/sys/unix (through tklauser/numcpus),
// a package of a module instrumented in a copy that the package's own test does
// not import: the copy holds it (it did not: "no required module provides
// package golang.org/x/sys/unix"). Skipped only when the module proxy is
// unreachable.
func TestGoEthereum(t *testing.T) {
	if testing.Short() {
		t.Skip("builds go-ethereum's core/types")
	}
	dir := testws.Module(t, "github.com/ethereum/go-ethereum", "v1.17.10")
	s, _ := fuzzOnce(t, filepath.Join(dir, "core", "types"), "FuzzRLP", Options{Parallel: 1, FuzzExecs: 10000, FuzzTime: 2 * time.Minute})
	if st := s.Stats(); st.Execs < 10000 {
		t.Fatalf("%d executions, want 10000: %+v", st.Execs, st)
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	modCache := strings.TrimSpace(string(out))
	// covered blocks by go-ethereum's directory, or by dependency module (its
	// blocks are named by the module cache's files, not its copy's)
	covered := map[string]int{}
	blocks, hit := s.Coverage()
	for i, b := range blocks {
		if !hit[i] {
			continue
		}
		key, err := filepath.Rel(dir, filepath.Dir(b.File))
		if mod, err2 := filepath.Rel(modCache, b.File); err2 == nil && !strings.HasPrefix(mod, "..") {
			key, _, _ = strings.Cut(filepath.ToSlash(mod), "@")
		} else if err != nil || strings.HasPrefix(key, "..") {
			t.Errorf("covered block outside go-ethereum and the module cache: %+v", b)
		}
		covered[filepath.ToSlash(key)]++
	}
	if covered["rlp"] < 20 {
		t.Errorf("%d covered blocks in go-ethereum's rlp, want 20 or more (covered: %v)", covered["rlp"], covered)
	}
	if covered["golang.org/x/sys"] == 0 {
		t.Errorf("no covered block of golang.org/x/sys, instrumented in its copy (covered: %v)", covered)
	}
}

// TestStdTargets: standard library targets run in GOROOT/src, each fuzzed
// briefly, reaching its package's code. encoding/json's FuzzUnmarshalJSON,
// whose package fuzzls's runtime imported (an import cycle: the harness, in
// encoding/json's internal test package, imported the runtime, which imported
// encoding/json); bytes's FuzzReplace, a package testing itself links, kept
// without comparison hooks; internal/runtime/cgroup's FuzzLineReader, a package
// the Go runtime is built from (instrumented, it made the test binary fault
// before its first line), of which only the tests are instrumented; net/netip's
// FuzzParse, whose external tests call internal test helpers. Each build
// says what it left out; GOROOT is left as it was.
func TestStdTargets(t *testing.T) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	for _, c := range []struct {
		pkg, target string
		tests       bool   // the blocks counted are of its test files, else of its other files
		min         int    // the fuzzing reaches this many of them at least
		warning     string // what the build says it left out; "" for nothing
	}{
		// Go 1.27's encoding/json is a thin layer over encoding/json/v2, a
		// package of its own, not instrumented.
		{"encoding/json", "FuzzUnmarshalJSON", false, 8, ""},
		{"bytes", "FuzzReplace", false, 20, "no comparison hooks"},
		{"internal/runtime/cgroup", "FuzzLineReader", true, 8, "not instrumented, only its tests"},
		// Its external tests import it with a dot and call what export_test.go
		// declares for them (MkAddr): the tests' pruning keeps that.
		{"net/netip", "FuzzParse", false, 20, ""},
	} {
		t.Run(c.pkg, func(t *testing.T) {
			dir := filepath.Join(src, filepath.FromSlash(c.pkg))
			before := treeHash(t, dir)
			s, rec := fuzzOnce(t, dir, c.target, Options{Parallel: 1, FuzzExecs: 5000, FuzzTime: 2 * time.Minute})
			if st := s.Stats(); st.Execs < 5000 {
				t.Fatalf("%d executions, want 5000: %+v", st.Execs, st)
			}
			blocks, hit := s.Coverage()
			covered := 0
			for i, b := range blocks {
				if hit[i] && filepath.Dir(b.File) == dir && strings.HasSuffix(b.File, "_test.go") == c.tests {
					covered++
				}
			}
			if covered < c.min {
				t.Errorf("%d covered blocks in %s's files (tests: %v), want %d or more", covered, c.pkg, c.tests, c.min)
			}
			var warnings []string
			rec.mu.Lock()
			for _, e := range rec.events {
				if b, ok := e.(*BuildEvent); ok {
					warnings = append(warnings, b.Warnings...)
				}
			}
			rec.mu.Unlock()
			if said := strings.Join(warnings, "\n"); c.warning == "" && said != "" || !strings.Contains(said, c.warning) {
				t.Errorf("build warnings %q, want %q", warnings, c.warning)
			}
			if treeHash(t, dir) != before {
				t.Errorf("the run changed GOROOT/src/%s", c.pkg)
			}
		})
	}
}
