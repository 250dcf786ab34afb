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
