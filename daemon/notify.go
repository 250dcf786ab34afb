package daemon

import (
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/protocol"

	"fuzzls.dev/fuzzls/engine"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// sendStatus sends fuzzls/status with every running session.
func (s *server) sendStatus() {
	st := s.status()
	s.notify(fproto.MethodStatus, &st)
}

// sendCoverage sends fuzzls/coverage for the session id: the instrumented
// files of its package and those the client has open, with ranges converted
// to the client's text. A file the client has edited since the last build
// gets empty lists until the next one. (The engine reports a build only once
// its blocks are in place.)
func (s *server) sendCoverage(id string) {
	s.mu.Lock()
	sess := s.sessions[id]
	s.mu.Unlock()
	if sess == nil {
		return
	}
	params := s.coverageParams(sess.target, sess.fs, false)
	s.notify(fproto.MethodCoverage, params)
}

// coverageParams is a session's coverage of the files of its package and
// those the client has open; with all, of every instrumented file of the
// workspace too. A big repository's build instruments thousands of files in
// other packages: sent on every update they would make each notification
// megabytes.
func (s *server) coverageParams(t engine.Target, fs fuzzSession, all bool) *fproto.CoverageParams {
	blocks, hit := fs.Coverage()
	byFile := map[string]*fproto.FileCoverage{}
	mappers := map[string]*mapper{}
	var order []string
	shown := map[string]bool{} // per file, decided once: a build has thousands of blocks
	for i, b := range blocks {
		show, ok := shown[b.File]
		if !ok {
			// Another package's file only while the client shows it (or
			// on request, for the workspace's): there may be thousands.
			show = samePath(filepath.Dir(b.File), t.Dir) || s.isOpen(b.File) || all && s.inWorkspace(b.File)
			shown[b.File] = show
		}
		if !show {
			continue
		}
		fc := byFile[b.File]
		if fc == nil {
			fc = &fproto.FileCoverage{URI: string(fileURI(b.File)), Covered: []fproto.Range{}, Uncovered: []fproto.Range{}}
			byFile[b.File] = fc
			order = append(order, b.File)
			m, stale, err := s.fileText(b.File)
			if err == nil && !stale {
				mappers[b.File] = m
			}
		}
		m := mappers[b.File]
		if m == nil {
			continue
		}
		r := fproto.Range{Start: toFProto(m.enginePosition(b.StartLine, b.StartCol)), End: toFProto(m.enginePosition(b.EndLine, b.EndCol))}
		switch {
		case i < len(hit) && hit[i]:
			fc.Covered = append(fc.Covered, r)
		case b.Changed:
			fc.UncoveredChanged = append(fc.UncoveredChanged, r)
		default:
			fc.Uncovered = append(fc.Uncovered, r)
		}
	}
	sort.Strings(order)
	out := &fproto.CoverageParams{Target: fproto.TargetID{Package: t.Package, Name: t.Name}, Files: []fproto.FileCoverage{}}
	for _, f := range order {
		out.Files = append(out.Files, *byFile[f])
	}
	return out
}

// sendCoverageForFile sends coverage for the sessions whose package holds path
// (after the client opened or first edited it), or whose build instrumented
// it (another package of the workspace, or a dependency's file opened by "go
// to definition").
func (s *server) sendCoverageForFile(path string) {
	dir := filepath.Dir(path)
	goFile := strings.HasSuffix(path, ".go")
	for _, id := range s.sessionIDs(func(sess *session) bool {
		return samePath(sess.target.Dir, dir) || goFile && sess.fs.DependsOn(path)
	}) {
		s.sendCoverage(id)
	}
}

// isOpen reports whether the client has path open.
func (s *server) isOpen(path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.docs[pathKey(path)] != nil
}

func toFProto(p protocol.Position) fproto.Position {
	return fproto.Position{Line: p.Line, Character: p.Character}
}

// A throttle runs f at most once per interval: a trigger inside the interval
// is postponed to its end, and triggers meanwhile merge into that one run.
// f runs on its own goroutine.
type throttle struct {
	interval time.Duration
	f        func()

	mu      sync.Mutex
	last    time.Time
	pending bool
	stopped bool
}

func newThrottle(interval time.Duration, f func()) *throttle {
	return &throttle{interval: interval, f: f}
}

func (t *throttle) trigger() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending || t.stopped {
		return
	}
	t.pending = true
	wait := time.Until(t.last.Add(t.interval))
	if wait < 0 {
		wait = 0
	}
	time.AfterFunc(wait, t.run)
}

func (t *throttle) run() {
	t.mu.Lock()
	if t.stopped {
		t.mu.Unlock()
		return
	}
	t.pending = false
	t.last = time.Now()
	t.mu.Unlock()
	t.f()
}

func (t *throttle) stop() {
	t.mu.Lock()
	t.stopped = true
	t.mu.Unlock()
}
