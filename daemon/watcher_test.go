package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.lsp.dev/protocol"
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
	c, _ := startBatcher(t, dir, quiet, maxWait)
	return c
}

// startBatcher watches dir into a batcher whose flushes c records.
func startBatcher(t *testing.T, dir string, quiet, maxWait time.Duration) (*collector, *batcher) {
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
	return c, b
}

// 50 saves in 5 seconds, through the real watcher on real files, trigger one
// rebuild: each comes well within the quiet time of the one before. The quiet
// time and maximum wait are long enough that only a stall of the machine of
// seconds between two saves (measured, and allowed for) makes another batch.
func TestBurstOfSavesBatched(t *testing.T) {
	const quiet = 2 * time.Second
	dir := t.TempDir()
	c := startWatcher(t, dir, quiet, time.Minute)
	files := []string{filepath.Join(dir, "a.go"), filepath.Join(dir, "b.go"), filepath.Join(dir, "a_test.go")}
	start := time.Now()
	last, stalls := start, 0
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
		if now := time.Now(); now.Sub(last) > quiet/2 {
			stalls++ // the machine stopped this loop for long: a batch may end here
		}
		last = time.Now()
		time.Sleep(time.Until(start.Add(time.Duration(i+1) * 100 * time.Millisecond)))
	}
	for deadline := time.Now().Add(3 * quiet); len(c.all()) < len(files) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(quiet / 2) // nothing more should come
	batches := c.snapshot()
	if len(batches) < 1 || len(batches) > 1+stalls {
		t.Fatalf("50 saves in %v (%d stalls) gave %d batches, want 1: %v", time.Since(start), stalls, len(batches), batches)
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
	// The maximum wait is far longer than any stall of a loaded machine: a
	// report well before it came from the quiet time.
	const maxWait = time.Minute
	c := startWatcher(t, dir, 200*time.Millisecond, maxWait)
	start := time.Now()
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte("package x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for len(c.snapshot()) == 0 {
		if time.Since(start) > maxWait/2 {
			t.Fatalf("one save not reported within %v", maxWait/2)
		}
		time.Sleep(10 * time.Millisecond)
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

// When the backend's queue overflowed (inotify's, Windows's buffer), events
// were lost: every relevant file under the roots is reported, and directories
// made meanwhile are watched.
func TestWatcherOverflowRescans(t *testing.T) {
	dir := t.TempDir()
	c := &collector{}
	b := newBatcher(50*time.Millisecond, time.Second, c.flush)
	var reported []error
	var mu sync.Mutex
	w, err := newWatcher(b.add, func(err error) { mu.Lock(); reported = append(reported, err); mu.Unlock() })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.close(); b.stop() })
	if err := w.addTree(dir); err != nil {
		t.Fatal(err)
	}
	// Files the watcher may or may not have seen: the rescan reports them all.
	var want []string
	for _, rel := range []string{"a.go", "go.mod", "sub/b_test.go", "testdata/fuzz/FuzzX/1"} {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	time.Sleep(300 * time.Millisecond)
	before := len(c.all())
	w.handleError(fsnotify.ErrEventOverflow)
	deadline := time.Now().Add(3 * time.Second)
	for len(c.all()) < before+len(want) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	got := c.all()[before:]
	for _, p := range want {
		if !slices.Contains(got, p) {
			t.Errorf("after the overflow %s not reported (got %v)", p, got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 1 || !errors.Is(reported[0], fsnotify.ErrEventOverflow) {
		t.Errorf("reported %v, want the overflow", reported)
	}
}

// A file's events under two spellings of its path are one change (one path in
// the batch); on Linux the spellings differ only by cleaning.
func TestBatcherCoalescesByKey(t *testing.T) {
	c := &collector{}
	b := newBatcher(20*time.Millisecond, time.Second, c.flush)
	defer b.stop()
	dir := t.TempDir()
	p := filepath.Join(dir, "a.go")
	b.add(p)
	b.add(filepath.Join(dir, ".", "a.go"))
	if hostPaths.fold {
		b.add(strings.ToUpper(dir) + p[len(dir):])
	}
	deadline := time.Now().Add(3 * time.Second)
	for len(c.snapshot()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := c.all(); len(got) != 1 || got[0] != p {
		t.Errorf("batches %v, want [%s]", c.snapshot(), p)
	}
}

// On kqueue (macOS) and Windows a client that can send its file events is
// asked for them, and fsnotify (a descriptor per file; a handle per directory
// that keeps the directories above it from being renamed) is not started; a
// client that cannot gets fsnotify, as every client does on Linux.
func TestWatcherPerBackend(t *testing.T) {
	for _, tc := range []struct {
		backend      string
		dynamic      bool
		clientEvents bool
	}{
		{backendKqueue, true, true},
		{backendWindows, true, true},
		{backendInotify, true, false},
		{backendKqueue, false, false},
		{backendWindows, false, false},
	} {
		dynamic := tc.dynamic
		t.Run(fmt.Sprintf("%s,dynamic=%v", tc.backend, dynamic), func(t *testing.T) {
			started := make(chan struct{}, 1)
			p := startInProcess(t, Options{watchBackend: tc.backend, newFSWatcher: func() (*fsnotify.Watcher, error) {
				started <- struct{}{}
				return fsnotify.NewWatcher()
			}})
			p.initializeWith(t.TempDir(), nil, func(caps *protocol.ClientCapabilities) {
				caps.Workspace.DidChangeWatchedFiles = &protocol.DidChangeWatchedFilesClientCapabilities{DynamicRegistration: &dynamic}
			})
			if !tc.clientEvents {
				select {
				case <-started:
				case <-time.After(10 * time.Second):
					t.Fatal("fsnotify not started")
				}
				p.Locked(func() {
					if slices.ContainsFunc(p.Registered, func(r protocol.Registration) bool { return r.Method == "workspace/didChangeWatchedFiles" }) {
						t.Error("the client's file events asked for besides fsnotify")
					}
				})
				return
			}
			p.await(t, "registration for workspace/didChangeWatchedFiles", 10*time.Second, func() bool {
				return slices.ContainsFunc(p.Registered, func(r protocol.Registration) bool { return r.Method == "workspace/didChangeWatchedFiles" })
			})
			// The watcher would have started before the registration.
			select {
			case <-started:
				t.Error("fsnotify started with a client that sends file events")
			default:
			}
		})
	}
}

// An editor's atomic save (a temporary file renamed over the file) is the
// file's change and not the temporary's, on every backend: inotify's moved-to,
// Windows's new-name event, kqueue's listing.
func TestWatcherAtomicSave(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "calc.go")
	if err := os.WriteFile(target, []byte("package calc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startWatcher(t, dir, 50*time.Millisecond, time.Second)
	tmp := filepath.Join(dir, ".calc.go.tmp123")
	if err := os.WriteFile(tmp, []byte("package calc // saved\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, target); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(c.all(), target) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := c.all(); !slices.Contains(got, target) || slices.Contains(got, tmp) {
		t.Errorf("reported %v, want %s and not the temporary file", got, target)
	}
}

// A workspace with more directories than the watch budget (half the inotify
// limit) is not watched with inotify: the daemon says so and uses the
// editor's file events, or, with a client that cannot send them, warns.
func TestWatcherBudget(t *testing.T) {
	for _, dynamic := range []bool{true, false} {
		t.Run(fmt.Sprintf("dynamic=%v", dynamic), func(t *testing.T) {
			ws := t.TempDir()
			for _, d := range []string{"a/b", "c/d", "e", ".git/objects", "vendor/x/y/z"} {
				if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			started := make(chan struct{}, 1)
			p := startInProcess(t, Options{watchBackend: backendInotify, watchBudget: 5, newFSWatcher: func() (*fsnotify.Watcher, error) {
				started <- struct{}{}
				return fsnotify.NewWatcher()
			}})
			p.initializeWith(ws, nil, func(caps *protocol.ClientCapabilities) {
				caps.Workspace.DidChangeWatchedFiles = &protocol.DidChangeWatchedFilesClientCapabilities{DynamicRegistration: &dynamic}
			})
			if dynamic {
				p.await(t, "registration for workspace/didChangeWatchedFiles", 10*time.Second, func() bool {
					return slices.ContainsFunc(p.Registered, func(r protocol.Registration) bool { return r.Method == "workspace/didChangeWatchedFiles" })
				})
			} else {
				p.await(t, "a warning about the inotify limit", 10*time.Second, func() bool {
					return slices.ContainsFunc(p.messages(), func(m protocol.ShowMessageParams) bool {
						return strings.Contains(m.Message, "inotify limit")
					})
				})
			}
			select {
			case <-started:
				t.Error("inotify started on a workspace over the watch budget")
			default:
			}
		})
	}
	// Within the budget (.git and vendor are not counted), inotify watches it.
	ws := t.TempDir()
	for _, d := range []string{"a/b", ".git/objects", "vendor/x/y/z"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if n := watchedDirs([]string{ws}, 100); n != 3 {
		t.Errorf("watchedDirs = %d, want 3 (the root, a, a/b)", n)
	}
}

// gitIndexLock finds the repository's index lock from any directory in it,
// through a worktree's .git file too.
func TestGitIndexLock(t *testing.T) {
	root := t.TempDir()
	repo, wt := filepath.Join(root, "repo"), filepath.Join(root, "wt")
	for _, d := range []string{filepath.Join(repo, ".git", "worktrees", "wt"), filepath.Join(repo, "a", "b"), filepath.Join(wt, "c")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: ../repo/.git/worktrees/wt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		repo:                          filepath.Join(repo, ".git", "index.lock"),
		filepath.Join(repo, "a", "b"): filepath.Join(repo, ".git", "index.lock"),
		filepath.Join(wt, "c"):        filepath.Join(repo, ".git", "worktrees", "wt", "index.lock"),
	} {
		if got := gitIndexLock(dir); got != want {
			t.Errorf("gitIndexLock(%s) = %s, want %s", dir, got, want)
		}
	}
}

// TestSaveFlushesSooner: an editor's save (its file event through the real
// watcher, then didSave of the same path) is handed over after saveQuiet, not
// the quiet time a burst of file events gets; a save among other changed
// paths (a checkout under way) waits as they do. The quiet time is long enough
// that a loaded machine cannot blur the two.
func TestSaveFlushesSooner(t *testing.T) {
	const quiet = 4 * time.Second
	dir := t.TempDir()
	c, b := startBatcher(t, dir, quiet, time.Minute)
	save := func(name string) string {
		path := filepath.Join(dir, name)
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte("package p\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	waitBatches := func(n int, within time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		for len(c.snapshot()) < n {
			if time.Since(start) > within {
				t.Fatalf("%d batches after %v, want %d: %q", len(c.snapshot()), within, n, c.snapshot())
			}
			time.Sleep(5 * time.Millisecond)
		}
		return time.Since(start)
	}

	start := time.Now()
	a := save("a.go")
	time.Sleep(100 * time.Millisecond) // its file event comes first, as an editor's does
	b.saved(a)
	waitBatches(1, quiet/2)
	if got := c.snapshot()[0]; !slices.Equal(got, []string{a}) {
		t.Errorf("batch = %q, want [%s]", got, a)
	}
	t.Logf("save handed over after %v", time.Since(start))

	// Another path pending: the save waits the quiet time.
	other := filepath.Join(dir, "b.go")
	b.add(other)
	b.saved(a)
	time.Sleep(quiet / 2)
	if n := len(c.snapshot()); n != 1 {
		t.Fatalf("%d batches %v after a save among other changes, want still 1", n, quiet/2)
	}
	waitBatches(2, quiet)
	if got := c.snapshot()[1]; !slices.Equal(got, []string{a, other}) && !slices.Equal(got, []string{other, a}) {
		t.Errorf("batch = %q, want both paths", got)
	}
}
