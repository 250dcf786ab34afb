package daemon

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.lsp.dev/uri"

	fproto "fuzzls.dev/fuzzls/protocol"
)

// TestStartAfterFailedBuild: a build that failed for a cause outside the
// workspace (here the cache's build directory is a file; a full disk is
// another) leaves the session in error; once the cause is gone, fuzzls.start
// builds again and the target fuzzes, with no file of the target saved.
func TestStartAfterFailedBuild(t *testing.T) {
	requireEngine(t)
	dir := copyDir(t, "../testdata/crashers")
	cache := t.TempDir()
	blocker := filepath.Join(cache, "build")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p := startInProcess(t, Options{BatchDelay: 100 * time.Millisecond})
	p.initialize(dir, map[string]any{"parallel": 1, "cacheDir": cache})
	arg := fproto.TargetArgs{URI: string(uri.File(filepath.Join(dir, "crashers_test.go"))), Target: "FuzzNoBug"}
	state := func(want string) func() bool {
		return func() bool {
			st := p.status()
			return len(st.Sessions) == 1 && st.Sessions[0].State == want
		}
	}
	if _, err := p.Command(fproto.CommandStart, arg); err != nil {
		t.Fatal(err)
	}
	poll(t, "the build to fail", 2*time.Minute, state(fproto.StateError))
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Command(fproto.CommandStart, arg); err != nil {
		t.Fatal(err)
	}
	poll(t, "fuzzing after start", 2*time.Minute, state(fproto.StateFuzzing))
}

// poll calls cond every 100 ms until it holds.
func poll(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
	}
}
