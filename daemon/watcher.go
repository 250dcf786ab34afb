package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.lsp.dev/protocol"
)

// watchFolders starts the file watcher (once) and adds folders to it. When
// the watcher cannot be had or the inotify limits are reached, the user is
// told and the daemon asks the client for its file events instead. On macOS
// (kqueue) and Windows a client that can send its file events is asked for them
// from the start, and fsnotify is not used: kqueue holds a file descriptor for
// every file in a watched directory (a corpus directory holds thousands), which
// the daemon's workers need for their pipes and shared memory; on Windows a
// watched directory's handle keeps the user from renaming any directory above
// it (fsnotify is not recursive there, so every directory of the workspace
// would be held), while VS Code watches the tree recursively from its root.
func (s *server) watchFolders(folders []string) {
	s.mu.Lock()
	w := s.watcher
	closing := s.closing
	dynamic := s.caps.watchDynamic
	s.mu.Unlock()
	if closing || len(folders) == 0 {
		return
	}
	if why := clientWatchReason[s.watchBackend()]; dynamic && why != "" {
		s.logf(protocol.MessageTypeLog, "file watcher: using the editor's file events (%s)", why)
		s.registerClientWatch()
		return
	}
	if s.watchBackend() == backendInotify && w == nil {
		if n, budget := watchedDirs(folders, s.watchBudget()+1), s.watchBudget(); n > budget {
			msg := fmt.Sprintf("fuzzls: the workspace has more than %d directories to watch, over half the inotify limit (fs.inotify.max_user_watches, which the editor and gopls share)", budget)
			if dynamic {
				s.logf(protocol.MessageTypeInfo, "%s: using the editor's file events instead", msg)
				s.registerClientWatch()
			} else {
				s.showMessage(protocol.MessageTypeWarning, "%s, and the editor cannot send its file events: changes are seen only when saved in the editor; raise the limit with `sysctl fs.inotify.max_user_watches=524288`", msg)
			}
			return
		}
	}
	if w == nil {
		mk := s.opts.newFSWatcher
		if mk == nil {
			mk = fsnotify.NewWatcher
		}
		var err error
		w, err = newWatcherWith(mk, s.changes.add, func(err error) {
			s.logf(protocol.MessageTypeWarning, "file watcher: %v", err)
		})
		if err != nil {
			s.watchFailed(err)
			return
		}
		s.mu.Lock()
		if s.watcher != nil || s.closing {
			s.mu.Unlock()
			w.close()
			return
		}
		s.watcher = w
		s.mu.Unlock()
	}
	for _, f := range folders {
		if err := w.addTree(f); err != nil {
			s.watchFailed(err)
			return
		}
	}
}

// watchFailed reports a watcher failure and falls back to the client's
// workspace/didChangeWatchedFiles.
func (s *server) watchFailed(err error) {
	msg := fmt.Sprintf("fuzzls: cannot watch the workspace: %v", err)
	if isWatchLimit(err) {
		switch s.watchBackend() {
		case backendInotify:
			msg += " — the inotify limits are reached; raise them with `sysctl fs.inotify.max_user_watches=524288 fs.inotify.max_user_instances=512`"
		case backendKqueue:
			msg += " — too many open files (kqueue opens every file of a watched directory); raise the limit with `ulimit -n` or `sysctl kern.maxfilesperproc`"
		}
	}
	s.mu.Lock()
	dynamic := s.caps.watchDynamic
	s.mu.Unlock()
	if dynamic {
		msg += "; using the editor's file events instead"
	} else {
		msg += "; changes are seen only when saved in the editor"
	}
	s.showMessage(protocol.MessageTypeWarning, "%s", msg)
	if dynamic {
		s.registerClientWatch()
	}
}

// watchBudget is how many directories the daemon watches with inotify at
// most: half the per-user limit (8,192 on many distributions), since every
// process of the user shares it — VS Code's own watcher, gopls, other daemons.
func (s *server) watchBudget() int {
	if s.opts.watchBudget > 0 {
		return s.opts.watchBudget
	}
	limit := 8192
	if data, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && n > 0 {
			limit = n
		}
	}
	return limit / 2
}

// watchedDirs counts the directories addTree would watch under roots, up to
// stop (the count stops there: a monorepo need not be walked to the end).
func watchedDirs(roots []string, stop int) int {
	n := 0
	errStop := errors.New("stop")
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			if path != root && skipWatch(path) {
				return filepath.SkipDir
			}
			if n++; n >= stop {
				return errStop
			}
			return nil
		})
		if err == errStop {
			break
		}
	}
	return n
}

// The fsnotify backends whose behaviour the daemon adapts to.
const (
	backendInotify = "inotify" // Linux: a watch per directory; a full queue is ErrEventOverflow
	backendKqueue  = "kqueue"  // macOS, BSD: a file descriptor per file of a watched directory
	backendWindows = "windows" // ReadDirectoryChangesW: a handle per directory; a full buffer is ErrEventOverflow
	backendOther   = "other"
)

// clientWatchReason says, for the backends where the client's file events are
// used when it can send them, why.
var clientWatchReason = map[string]string{
	backendKqueue:  "kqueue would hold a file descriptor for every file",
	backendWindows: "a watched directory's handle would keep the directories above it from being renamed",
}

// watchBackend is the fsnotify backend of this OS (Options.watchBackend in tests).
func (s *server) watchBackend() string {
	if s.opts.watchBackend != "" {
		return s.opts.watchBackend
	}
	switch runtime.GOOS {
	case "linux", "android":
		return backendInotify
	case "darwin", "ios", "freebsd", "openbsd", "netbsd", "dragonfly":
		return backendKqueue
	case "windows":
		return backendWindows
	}
	return backendOther
}

// registerClientWatch asks the client to send workspace/didChangeWatchedFiles
// (once: a second registration would double every event).
func (s *server) registerClientWatch() {
	s.clientWatchOnce.Do(s.registerClientWatchNow)
}

func (s *server) registerClientWatchNow() {
	opts, err := json.Marshal(map[string]any{"watchers": []map[string]any{
		{"globPattern": "**/*.{go,mod,sum,work}"},
		{"globPattern": "**/testdata/fuzz/**"},
	}})
	if err != nil {
		return
	}
	err = s.client.RegisterCapability(s.ctx, &protocol.RegistrationParams{Registrations: []protocol.Registration{{
		ID: "fuzzls-watch", Method: "workspace/didChangeWatchedFiles", RegisterOptions: opts,
	}}})
	if err != nil {
		s.logf(protocol.MessageTypeWarning, "registering for file events: %v", err)
	}
}

// DidChangeWatchedFiles feeds the client's file events to the same batcher as
// the daemon's own watcher.
func (s *server) DidChangeWatchedFiles(ctx context.Context, params *protocol.DidChangeWatchedFilesParams) error {
	for _, ch := range params.Changes {
		if p, err := filePath(ch.URI); err == nil && relevantFile(p) {
			s.changes.add(p)
		}
	}
	return nil
}

func isWatchLimit(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE)
}

// A watcher watches directory trees with fsnotify, which is not recursive on
// any backend: every directory is added by walking, and new ones as they
// appear (a new directory is walked, its files reported, since files created
// in it before it was added have no event). Directories are watched, not
// files, since editors save by renaming a temporary file into place. A rename
// is seen as the old name's Rename and the new name's Create, on every
// backend (Windows reports them as old- and new-name events; kqueue finds the
// new name by listing the directory). Windows and kqueue also report a
// directory as written when its entries change: not a relevant file, ignored.
// When the backend's queue overflowed (inotify's, Windows's 64 KiB buffer),
// events were lost: every relevant file under the roots is reported changed.
// The batcher coalesces a file's events by pathKey.
type watcher struct {
	fsw     *fsnotify.Watcher
	changed func(path string) // a relevant file changed (was written, created, removed)
	report  func(error)
	done    chan struct{}

	mu    sync.Mutex
	roots []string // addTree's
}

func newWatcher(changed func(string), report func(error)) (*watcher, error) {
	return newWatcherWith(fsnotify.NewWatcher, changed, report)
}

// newWatcherWith builds the watcher on the fsnotify watcher mk returns.
func newWatcherWith(mk func() (*fsnotify.Watcher, error), changed func(string), report func(error)) (*watcher, error) {
	fsw, err := mk()
	if err != nil {
		return nil, err
	}
	w := &watcher{fsw: fsw, changed: changed, report: report, done: make(chan struct{})}
	go w.loop()
	return w, nil
}

// skipDir reports whether a directory is never watched: VCS and dependency
// trees and hidden directories.
func skipDir(name string) bool {
	switch name {
	case ".git", "vendor", "node_modules":
		return true
	}
	return strings.HasPrefix(name, ".") && name != "." && name != ".."
}

// skipWatch is skipDir, and in a testdata directory all but fuzz (the seed
// corpus): go builds nothing from testdata, which may hold big trees.
func skipWatch(path string) bool {
	name := filepath.Base(path)
	return skipDir(name) || name != "fuzz" && filepath.Base(filepath.Dir(path)) == "testdata"
}

// relevantFile reports whether a change of path can matter to a session: Go
// sources, module files, and anything in a testdata/fuzz directory. Editor
// backups and swap files are not.
func relevantFile(path string) bool {
	if strings.Contains(filepath.ToSlash(path), "/testdata/fuzz/") {
		base := filepath.Base(path)
		return !strings.HasPrefix(base, ".") && !strings.HasSuffix(base, "~")
	}
	base := filepath.Base(path)
	if strings.HasPrefix(base, ".") || strings.HasPrefix(base, "#") {
		return false
	}
	switch base {
	case "go.mod", "go.sum", "go.work", "go.work.sum":
		return true
	}
	return strings.HasSuffix(base, ".go")
}

// addTree watches root and every directory below it. With emit, files found
// are reported as changed (a directory moved into place brings its files).
func (w *watcher) addTree(root string) error {
	w.mu.Lock()
	w.roots = append(w.roots, root)
	w.mu.Unlock()
	return w.walk(root, false)
}

// rescan reports every relevant file under the roots as changed, after the
// backend lost events, and watches the directories that came meanwhile.
func (w *watcher) rescan() {
	w.mu.Lock()
	roots := slices.Clone(w.roots)
	w.mu.Unlock()
	for _, r := range roots {
		if err := w.walk(r, true); err != nil {
			w.report(err)
		}
	}
}

func (w *watcher) walk(root string, emit bool) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return err
			}
			return nil // vanished or unreadable below the root: skip it
		}
		if !d.IsDir() {
			if emit && relevantFile(path) {
				w.changed(path)
			}
			return nil
		}
		if path != root && skipWatch(path) {
			return filepath.SkipDir
		}
		if err := w.fsw.Add(path); err != nil {
			if isWatchLimit(err) {
				return fmt.Errorf("watching %s: %w", path, err)
			}
			return nil
		}
		return nil
	})
}

// loop drains fsnotify's channels promptly; the batcher does the waiting.
func (w *watcher) loop() {
	for {
		select {
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			w.handle(ev)
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			w.handleError(err)
		case <-w.done:
			return
		}
	}
}

func (w *watcher) handle(ev fsnotify.Event) {
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
			if !skipWatch(ev.Name) {
				if err := w.walk(ev.Name, true); err != nil {
					w.report(err)
				}
			}
			if strings.Contains(filepath.ToSlash(ev.Name)+"/", "/testdata/fuzz/") {
				w.changed(ev.Name)
			}
			return
		}
	}
	if ev.Op == fsnotify.Chmod {
		return
	}
	if relevantFile(ev.Name) {
		w.changed(ev.Name)
	}
}

func (w *watcher) handleError(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		w.report(fmt.Errorf("%w: rescanning the workspace", err))
		w.rescan()
		return
	}
	w.report(err)
}

func (w *watcher) close() {
	close(w.done)
	_ = w.fsw.Close()
}

// A batcher collects changed paths and hands them over in one batch once no
// new path has come for quiet, or at the latest maxWait after the first, so a
// burst of saves leads to one rebuild and a never-ending stream still to some.
type batcher struct {
	quiet, maxWait time.Duration
	flush          func(paths []string)

	// hold, if set, says whether a writer of many files is still at work (git
	// holding its index lock through a checkout): the batch waits, up to
	// maxHold after its first path, so that a checkout slower than maxWait is
	// still one rebuild. A lock left by a git that died is waited out.
	hold    func() bool
	maxHold time.Duration

	mu       sync.Mutex
	pending  map[string]string // by pathKey: a file's events in two spellings are one change
	first    time.Time         // when the first pending path came
	deadline time.Time         // when to flush
	timer    *time.Timer
	stopped  bool
}

func newBatcher(quiet, maxWait time.Duration, flush func([]string)) *batcher {
	return &batcher{quiet: quiet, maxWait: maxWait, flush: flush, pending: map[string]string{}}
}

func (b *batcher) add(path string) { b.addWithin(path, b.quiet) }

// saved adds a path the editor says it saved: alone in the batch (its own file
// event, which the write makes before the editor's didSave, is the same path),
// it waits saveQuiet, not quiet, since no burst follows an editor's save; among
// other paths (a checkout under way, a "Save All") it waits as they do.
func (b *batcher) saved(path string) { b.addWithin(path, min(saveQuiet, b.quiet)) }

// saveQuiet: an editor's save is one file, and its file event came first.
const saveQuiet = 30 * time.Millisecond

func (b *batcher) addWithin(path string, quiet time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return
	}
	now := time.Now()
	if len(b.pending) == 0 {
		b.first = now
	}
	if _, ok := b.pending[pathKey(path)]; !ok {
		b.pending[pathKey(path)] = path
	}
	if len(b.pending) > 1 {
		quiet = b.quiet
	}
	b.deadline = now.Add(quiet)
	if limit := b.first.Add(b.maxWait); b.deadline.After(limit) {
		b.deadline = limit
	}
	if b.timer == nil {
		b.timer = time.AfterFunc(b.deadline.Sub(now), b.fire)
	} else {
		b.timer.Reset(b.deadline.Sub(now))
	}
}

// fire runs on the timer's goroutine. A fire that lost the race with a later
// add (which moved the deadline and reset the timer) does nothing.
func (b *batcher) fire() {
	b.mu.Lock()
	if b.stopped || len(b.pending) == 0 || time.Now().Before(b.deadline) {
		b.mu.Unlock()
		return
	}
	if b.hold != nil && time.Since(b.first) < b.maxHold && b.hold() {
		b.deadline = time.Now().Add(b.quiet)
		b.timer.Reset(b.quiet)
		b.mu.Unlock()
		return
	}
	paths := make([]string, 0, len(b.pending))
	for _, p := range b.pending {
		paths = append(paths, p)
	}
	b.pending = map[string]string{}
	b.mu.Unlock()
	sort.Strings(paths)
	b.flush(paths)
}

func (b *batcher) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopped = true
	if b.timer != nil {
		b.timer.Stop()
	}
}

// gitIndexLock is the index lock file of the git repository dir is in (git
// holds it while a checkout, merge or rebase writes the work tree), or "".
// A worktree's .git is a file naming its git directory.
func gitIndexLock(dir string) string {
	for {
		dotGit := filepath.Join(dir, ".git")
		if fi, err := os.Stat(dotGit); err == nil {
			if fi.IsDir() {
				return filepath.Join(dotGit, "index.lock")
			}
			data, err := os.ReadFile(dotGit)
			gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
			if err != nil || !ok {
				return ""
			}
			if !filepath.IsAbs(gitdir) {
				gitdir = filepath.Join(dir, gitdir)
			}
			return filepath.Join(gitdir, "index.lock")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// gitBusy reports whether git holds the index lock of a workspace folder's
// repository: the batcher's hold.
func (s *server) gitBusy() bool {
	for _, f := range s.workspaceFolders() {
		if lock := gitIndexLock(f); lock != "" {
			if _, err := os.Stat(lock); err == nil {
				return true
			}
		}
	}
	return false
}
