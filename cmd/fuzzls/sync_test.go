package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/internal/testws"
)

// TestSync runs three fuzzls processes with caches of their own on one
// workspace and one -sync directory. Only a's cache holds the entry that passes
// the gate: it finds the failure and reports it; b and c take the entry up from
// the directory (it joins their corpora), find the failure too, and do not report
// it. Then a is killed with SIGKILL while writing: every file in the directory is
// whole, none it had written is gone.
func TestSync(t *testing.T) {
	bin := buildFuzzls(t)
	ws := copyDir(t, "../../testdata/synced")
	gate := []byte("sixteen-byte-key") // the entry that passes the gate
	syncDir := t.TempDir()
	entry := fuzzrt.Marshal([]any{gate})
	name := fuzzrt.FileName(entry)
	caches := map[string]string{}
	outs := map[string]*testws.Buffer{}
	procs := map[string]*exec.Cmd{}
	for _, p := range []string{"a", "b", "c"} {
		caches[p] = t.TempDir()
	}
	corpus := func(p string) string { return filepath.Join(caches[p], "corpus", "example.com", "synced", "FuzzCheck") }
	os.MkdirAll(corpus("a"), 0o755)
	os.WriteFile(filepath.Join(corpus("a"), name), entry, 0o644)
	for _, p := range []string{"b", "c", "a"} {
		cmd := exec.Command(bin, "fuzz", "-keepfuzzing", "-parallel", "1", "-minimizetime", "5s", "-cachedir", caches[p],
			"-sync", syncDir, "-syncname", p, ".")
		cmd.Dir = ws
		outs[p] = &testws.Buffer{}
		cmd.Stdout, cmd.Stderr = outs[p], outs[p]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[p] = cmd
		defer cmd.Process.Kill()
	}
	const suppressed = "was recorded in the sync directory by another process"
	has := func(p, file string) bool { _, err := os.Stat(filepath.Join(corpus(p), file)); return err == nil }
	deadline := time.Now().Add(4 * time.Minute)
	for !(strings.Contains(outs["a"].String(), "--- FAIL: FuzzCheck") &&
		strings.Contains(outs["b"].String(), suppressed) && strings.Contains(outs["c"].String(), suppressed) &&
		has("b", name) && has("c", name)) {
		if time.Now().After(deadline) || strings.Contains(outs["a"].String(), "build of") {
			t.Fatalf("not synced in time:\n== a\n%s\n== b\n%s\n== c\n%s", outs["a"], outs["b"], outs["c"])
		}
		time.Sleep(500 * time.Millisecond)
	}
	// a is killed while it writes (its workers go on finding entries).
	before := listFiles(t, syncDir)
	procs["a"].Process.Signal(syscall.SIGKILL)
	procs["a"].Wait()
	for _, p := range []string{"b", "c"} {
		procs[p].Process.Signal(os.Interrupt)
	}
	for _, p := range []string{"b", "c"} {
		if err := procs[p].Wait(); err != nil {
			t.Errorf("%s: %v\n%s", p, err, outs[p])
		}
	}
	after := listFiles(t, syncDir)
	for f := range before {
		if !after[f] {
			t.Errorf("%s was lost", f)
		}
	}
	for f := range after {
		if strings.HasSuffix(f, ".tmp") {
			continue // a write cut short: never read (readers skip the suffix)
		}
		data, err := os.ReadFile(filepath.Join(syncDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fuzzrt.Unmarshal(data); err != nil {
			t.Errorf("%s is not a whole go test fuzz v1 file: %v\n%q", f, err, data)
		}
	}
	if !after[filepath.Join("a", "corpus", "example.com", "synced", "FuzzCheck", name)] {
		t.Errorf("a did not publish its entry: %v", after)
	}
	reports := 0
	for _, p := range []string{"a", "b", "c"} {
		reports += strings.Count(outs[p].String(), "found a failure")
	}
	if reports != 1 {
		t.Errorf("the failure was reported %d times, want once:\n== a\n%s\n== b\n%s\n== c\n%s", reports, outs["a"], outs["b"], outs["c"])
	}
}

// listFiles lists the files under dir, relative to it.
func listFiles(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			out[rel] = true
		}
		return nil
	})
	return out
}
