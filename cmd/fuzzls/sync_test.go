package main

import (
	"encoding/json"
	"fmt"
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
// the directory (it joins their corpora) and the failure, which fails there too:
// each reports it once, as a failure of its own run. Then a is killed with
// SIGKILL while writing: every file in the directory is whole, none it had
// written is gone.
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
	const failed = "--- FAIL: FuzzCheck"
	has := func(p, file string) bool { _, err := os.Stat(filepath.Join(corpus(p), file)); return err == nil }
	deadline := time.Now().Add(4 * time.Minute)
	for !(strings.Contains(outs["a"].String(), failed) &&
		strings.Contains(outs["b"].String(), failed) && strings.Contains(outs["c"].String(), failed) &&
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
		if code := exitCode(procs[p].Wait()); code != 1 { // interrupted, having found a failure
			t.Errorf("%s: exit status %d, want 1\n%s", p, code, outs[p])
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
	for _, p := range []string{"a", "b", "c"} {
		if n := strings.Count(outs[p].String(), "found a failure"); n != 1 {
			t.Errorf("%s reported the failure %d times, want once:\n%s", p, n, outs[p])
		}
	}
}

// TestSyncRerun: CI whose sync directory is restored from its last run, with a
// fresh cache each time and the same -syncname. Run 1 finds the failure (its
// cache holds the input past the gate) and exits 1; run 2, whose cache holds
// nothing, exits 1 too with the failure in its SARIF: it still fails, though
// run 1 found it first. fuzzls report over the directory says so (status 1, one
// result); once the bug is fixed, status 0 and no result.
func TestSyncRerun(t *testing.T) {
	bin := buildFuzzls(t)
	ws := copyDir(t, "../../testdata/synced")
	syncDir := t.TempDir()
	first := t.TempDir()
	entry := fuzzrt.Marshal([]any{[]byte("sixteen-byte-keyx")})
	corpus := filepath.Join(first, "corpus", "example.com", "synced", "FuzzCheck")
	os.MkdirAll(corpus, 0o755)
	os.WriteFile(filepath.Join(corpus, fuzzrt.FileName(entry)), entry, 0o644)
	run := func(what string, wantCode, wantResults int, args ...string) {
		t.Helper()
		sarif := filepath.Join(t.TempDir(), "out.sarif")
		cmd := exec.Command(bin, append(args, "-sarif", sarif, ".")...)
		cmd.Dir = ws
		out, err := cmd.CombinedOutput()
		var log struct {
			Runs []struct{ Results []struct{ RuleID string } }
		}
		data, _ := os.ReadFile(sarif)
		json.Unmarshal(data, &log)
		results := -1
		if len(log.Runs) == 1 {
			results = len(log.Runs[0].Results)
		}
		if code := exitCode(err); code != wantCode || results != wantResults {
			t.Errorf("%s: exit status %d and %d SARIF results, want %d and %d\n%s", what, code, results, wantCode, wantResults, out)
		}
	}
	for i, cache := range []string{first, t.TempDir()} {
		run(fmt.Sprintf("run %d", i+1), 1, 1, "fuzz", "-budget", "2m", "-parallel", "1", "-minimizetime", "5s",
			"-cachedir", cache, "-sync", syncDir, "-syncname", "ci")
	}
	run("report", 1, 1, "report", "-sync", syncDir, "-cachedir", t.TempDir())
	file := filepath.Join(ws, "synced_test.go")
	src, _ := os.ReadFile(file)
	os.WriteFile(file, []byte(strings.Replace(string(src), `panic("past the gate")`, `t.Log("past the gate")`, 1)), 0o644)
	run("report once fixed", 0, 0, "report", "-sync", syncDir, "-cachedir", t.TempDir())
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
