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

// sendCoverage sends fuzzls/coverage for the session id: every instrumented
// file of its package, with ranges converted to the client's text. A file the
// client has edited since the last build gets empty lists until the next one.
// (The engine reports a build only once its blocks are in place.)
func (s *server) sendCoverage(id string) {
	s.mu.Lock()
	sess := s.sessions[id]
	s.mu.Unlock()
	if sess == nil {
		return
	}
	params := s.coverageParams(sess.target, sess.fs)
	s.notify(fproto.MethodCoverage, params)
}

func (s *server) coverageParams(t engine.Target, fs fuzzSession) *fproto.CoverageParams {
	blocks, hit := fs.Coverage()
	byFile := map[string]*fproto.FileCoverage{}
	mappers := map[string]*mapper{}
	var order []string
	shown := map[string]bool{} // per file, decided once: a build has thousands of blocks
	for i, b := range blocks {
		show, ok := shown[b.File]
		if !ok {
			// A dependency's file (module cache, a replace outside the
			// workspace) only while the client shows it: there may be thousands.
			show = s.inWorkspace(b.File) || s.isOpen(b.File)
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
// (after the client opened or first edited it), or, for a file outside the
// workspace (a dependency's, opened by "go to definition"), whose build
// instrumented it.
func (s *server) sendCoverageForFile(path string) {
	dir := filepath.Dir(path)
	dependency := !s.inWorkspace(path) && strings.HasSuffix(path, ".go")
	for _, id := range s.sessionIDs(func(sess *session) bool {
		return samePath(sess.target.Dir, dir) || dependency && sess.fs.DependsOn(path)
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
