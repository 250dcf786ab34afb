package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// collector records the batcher's flushes.
type collector struct {
	mu      sync.Mutex
	batches [][]string
}

func (c *collector) flush(paths []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batches = append(c.batches, paths)
}

func (c *collector) snapshot() [][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.batches)
}

func (c *collector) all() []string {
	var out []string
	for _, b := range c.snapshot() {
		out = append(out, b...)
	}
	return out
}

func startWatcher(t *testing.T, dir string, quiet, maxWait time.Duration) *collector {
	t.Helper()
	c := &collector{}
	b := newBatcher(quiet, maxWait, c.flush)
	w, err := newWatcher(b.add, func(err error) { t.Errorf("watcher: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	if err := w.addTree(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.close(); b.stop() })
	return c
}

// 50 saves in 5 seconds, through the real watcher on real files, trigger one
// or two rebuilds.
func TestBurstOfSavesBatched(t *testing.T) {
	dir := t.TempDir()
	c := startWatcher(t, dir, 400*time.Millisecond, 4*time.Second)
	files := []string{filepath.Join(dir, "a.go"), filepath.Join(dir, "b.go"), filepath.Join(dir, "a_test.go")}
	start := time.Now()
	for i := range 50 {
		f := files[i%len(files)]
		// An editor's save: write a temporary file, rename it into place.
		tmp := filepath.Join(dir, fmt.Sprintf(".%s.tmp%d", filepath.Base(f), i))
		if err := os.WriteFile(tmp, fmt.Appendf(nil, "package p // %d\n", i), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, f); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(start.Add(time.Duration(i+1) * 100 * time.Millisecond)))
	}
	time.Sleep(1500 * time.Millisecond)
	batches := c.snapshot()
	if len(batches) < 1 || len(batches) > 2 {
		t.Fatalf("50 saves in %v gave %d batches, want 1 or 2: %v", time.Since(start), len(batches), batches)
	}
	got := c.all()
	for _, f := range files {
		if !slices.Contains(got, f) {
			t.Errorf("batches %v lack %s", batches, f)
		}
	}
	for _, p := range got {
		if filepath.Base(p)[0] == '.' {
			t.Errorf("temporary file %s reported", p)
		}
	}
}

// A single save is reported after the quiet time, not the maximum wait.
func TestSingleSaveIsPrompt(t *testing.T) {
	dir := t.TempDir()
	c := startWatcher(t, dir, 200*time.Millisecond, 4*time.Second)
	start := time.Now()
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte("package x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for len(c.snapshot()) == 0 {
		if time.Since(start) > 3*time.Second {
			t.Fatal("no batch within 3s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("one save took %v to be reported", d)
	}
}

// New directories are watched as they appear; .git, vendor and node_modules
// are not; testdata/fuzz is; editor swap files are ignored.
func TestWatcherDirectories(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{".git", "vendor", "node_modules", "testdata/fuzz/FuzzX"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := startWatcher(t, dir, 100*time.Millisecond, time.Second)

	newDir := filepath.Join(dir, "pkg", "sub")
	if err := os.MkdirAll(newDir, 0o755); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // let the watcher add the new directories
	write := func(rel string) string {
		p := filepath.Join(dir, rel)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	want := []string{
		write("pkg/sub/new.go"),
		write("testdata/fuzz/FuzzX/0123456789abcdef"),
		write("go.mod"),
	}
	unwanted := []string{
		write(".git/index.go"),
		write("vendor/v.go"),
		write("node_modules/n.go"),
		write("pkg/.new.go.swp"),
		write("pkg/notes.txt"),
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if got := c.all(); !slices.ContainsFunc(want, func(w string) bool { return !slices.Contains(got, w) }) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	got := c.all()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s not reported (got %v)", w, got)
		}
	}
	for _, u := range unwanted {
		if slices.Contains(got, u) {
			t.Errorf("%s reported", u)
		}
	}
}

func TestRelevantFile(t *testing.T) {
	for path, want := range map[string]bool{
		"/w/a.go": true, "/w/a_test.go": true, "/w/go.mod": true, "/w/go.sum": true, "/w/go.work": true,
		"/w/testdata/fuzz/FuzzX/abc": true, "/w/testdata/fuzz/FuzzX": true,
		"/w/.a.go.swp": false, "/w/a.go~": false, "/w/4913": false, "/w/#a.go#": false, "/w/README.md": false,
	} {
		if got := relevantFile(path); got != want {
			t.Errorf("relevantFile(%s) = %v, want %v", path, got, want)
		}
	}
}
