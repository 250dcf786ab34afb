package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/protocol"

	"fuzzls.dev/fuzzls/daemon/gentest"
	"fuzzls.dev/fuzzls/engine"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// fuzzEngine is what the daemon needs of *engine.Engine; tests substitute a fake.
type fuzzEngine interface {
	Start(t engine.Target) fuzzSession
	Close()
}

// fuzzSession is what the daemon needs of *engine.Session.
type fuzzSession interface {
	Stop()
	Rebuild()
	State() engine.State
	Skipped() string
	Stats() engine.Stats
	Coverage() (blocks []engine.Block, hit []bool)
	DependsOn(file string) bool
	SeedCandidates() []string
	Blockers() []engine.Blocker
	SolveBlocker(ctx context.Context, b engine.Blocker) (string, error)
	Layout() string
}

var _ fuzzSession = (*engine.Session)(nil)

type realEngine struct{ e *engine.Engine }

func newRealEngine(opts engine.Options, observe func(engine.Event)) fuzzEngine {
	return realEngine{engine.New(opts, observe)}
}

func (r realEngine) Start(t engine.Target) fuzzSession { return r.e.Start(t) }
func (r realEngine) Close()                            { r.e.Close() }

// state is everything the daemon knows, in one place. All fields are guarded
// by mu, except those documented otherwise. Never hold mu while talking to the
// client or while calling an engine method that waits (Stop, Close).
type state struct {
	mu sync.Mutex

	initialized bool // initialize answered
	shutdown    bool // shutdown received
	closing     bool // Serve is returning
	folders     []string
	caps        clientCaps
	settings    fproto.Settings

	docs map[string]*document // open documents by pathKey

	eng      fuzzEngine          // created on the first start, with engOpts
	engOpts  engine.Options      //
	sessions map[string]*session // running sessions by Target.ID()

	crashes   map[string]*engine.Crash      // known failures by Crash.ID, kept after a session stops
	blockers  map[string]blockersOf         // by Target.ID(), while its session runs (blockers.go)
	buildErrs map[string]*engine.BuildError // by package import path, until it builds again
	published map[string]fileDiagnostics    // what the client has, by pathKey
	pubMu     sync.Mutex                    // serializes publishDiagnostics (taken before mu)
	lastBuild map[string]time.Time          // last successful build by pathKey of the package directory

	// Set once by newServer; safe without mu.
	events      *eventQueue
	lensRefresh *throttle
	statsStatus *throttle // fuzzls/status for the sessions' stats ticks
	changes     *batcher
	watcher     *watcher // set by Initialized (under mu)
	gentests    *gentest.Loader
}

// A session is one running target.
type session struct {
	target   engine.Target
	fs       fuzzSession
	build    *progressTask // the build in progress, if any
	coverage *throttle     // fuzzls/coverage at most once a second

}

func (st *state) init() {
	st.docs = map[string]*document{}
	st.sessions = map[string]*session{}
	st.crashes = map[string]*engine.Crash{}
	st.blockers = map[string]blockersOf{}
	st.buildErrs = map[string]*engine.BuildError{}
	st.published = map[string]fileDiagnostics{}
	st.lastBuild = map[string]time.Time{}
	st.settings = fproto.DefaultSettings()
	st.events = newEventQueue()
}

// startTarget starts the target name declared in file (a _test.go file).
func (s *server) startTarget(ctx context.Context, file, name string) error {
	if !s.inWorkspace(file) {
		return errOutsideWorkspace(file)
	}
	targets, err := s.discover(ctx, filepath.Dir(file), ".")
	if err != nil {
		return err
	}
	for _, t := range targets {
		if t.Name == name {
			return s.startSession(t)
		}
	}
	return fmt.Errorf("no fuzz target %s in %s", name, filepath.Dir(file))
}

// startAll starts every target in the workspace folders, in each module of
// them: "./..." stops at a nested module's go.mod, and in a folder that is
// a go.work's root but no module it matches nothing.
func (s *server) startAll(ctx context.Context) error {
	var errs []error
	for _, folder := range s.workspaceFolders() {
		for _, root := range moduleRoots(folder) {
			targets, err := s.discover(ctx, root, "./...")
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, t := range targets {
				if s.inWorkspace(t.File) {
					errs = append(errs, s.startSession(t))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// moduleRoots lists the directories under folder that hold a go.mod, skipping
// what the watcher skips and testdata (whose modules are test inputs); folder
// itself if there is none (a directory inside a module, GOPATH).
func moduleRoots(folder string) []string {
	var roots []string
	_ = filepath.WalkDir(folder, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if path != folder && (skipDir(d.Name()) || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == "go.mod" {
			roots = append(roots, filepath.Dir(path))
		}
		return nil
	})
	if len(roots) == 0 {
		return []string{folder}
	}
	return roots
}

// discover lists the fuzz targets of the packages matching patterns in dir,
// with the build flags of the settings.
func (s *server) discover(ctx context.Context, dir string, patterns ...string) ([]engine.Target, error) {
	s.mu.Lock()
	flags := buildFlags(s.settings)
	s.mu.Unlock()
	return s.opts.discover(ctx, flags, dir, patterns...)
}

// startSession starts t unless it runs already.
func (s *server) startSession(t engine.Target) error {
	running, err := s.addSession(t)
	if err != nil {
		return err
	}
	if running != nil {
		// A session whose build failed, or that stopped on its own (a failure
		// without keepFuzzing, no worker could start), waits for a rebuild: an
		// explicit start is one, since the cause may lie outside its files (a
		// full disk made room on, a cache directory put right).
		if st := running.fs.State(); st == engine.StateError || st == engine.StateStopped {
			running.fs.Rebuild()
		}
		return nil
	}
	s.sendStatus()
	s.lensRefresh.trigger()
	return nil
}

// addSession starts a session for t (and the engine, or a new one if the
// settings changed since it started and it runs no session) and enters it in
// the table, unless t has one already: then it returns that one. It holds s.mu
// while it runs, and releases it however it ends.
func (s *server) addSession(t engine.Target) (running *session, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess, ok := s.sessions[t.ID()]; ok {
		return sess, nil
	}
	if s.shutdown || s.closing {
		return nil, errors.New("the server is shutting down")
	}
	want := engineOptions(s.settings, s.opts.Log)
	if s.eng != nil && len(s.sessions) == 0 && s.engOpts != want {
		eng := s.eng
		s.eng = nil
		s.goSafe("engine.Close", eng.Close)
	}
	if s.eng == nil {
		s.eng = s.opts.newEngine(want, s.events.push)
		s.engOpts = want
	}
	fs := s.eng.Start(t)
	sess := &session{target: t, fs: fs}
	sess.coverage = newThrottle(time.Second, s.safe("coverage", func() { s.sendCoverage(t.ID()) }))
	sess.build = s.beginProgress("Building "+t.Name, t.Package)
	s.sessions[t.ID()] = sess
	return nil, nil
}

// stopSessions stops the sessions whose target matches (all if match is nil) and waits
// until their workers are gone.
func (s *server) stopSessions(match func(engine.Target) bool) int {
	s.mu.Lock()
	var stopping []*session
	for id, sess := range s.sessions {
		if match == nil || match(sess.target) {
			stopping = append(stopping, sess)
			delete(s.sessions, id)
		}
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, sess := range stopping {
		sess.build.end("stopped")
		wg.Add(1)
		s.goSafe("stop", func() {
			defer wg.Done()
			sess.fs.Stop()
		})
	}
	wg.Wait()
	if len(stopping) > 0 {
		s.sendStatus()
		s.lensRefresh.trigger()
	}
	return len(stopping)
}

// stopAll ends everything: sessions, engine (and with it every worker
// process), watcher, timers. Serve calls it before returning.
func (s *server) stopAll() {
	s.changes.stop()
	s.lensRefresh.stop()
	s.statsStatus.stop()
	s.mu.Lock()
	w := s.watcher
	s.watcher = nil
	s.closing = true
	s.mu.Unlock()
	if w != nil {
		w.close()
	}
	s.stopSessions(nil)
	s.mu.Lock()
	eng := s.eng
	s.eng = nil
	s.mu.Unlock()
	if eng != nil {
		func() {
			defer s.recoverLog("engine.Close")
			eng.Close()
		}()
	}
	s.events.close()
}

// filesChanged is the batcher's flush: rebuild the sessions that depend on
// any of the files, and refresh code lenses when a test file changed.
func (s *server) filesChanged(paths []string) {
	s.gentests.Changed(paths)
	s.mu.Lock()
	sessions := make([]*session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		sessions = append(sessions, sess)
	}
	s.mu.Unlock()
	for _, sess := range sessions {
		for _, p := range paths {
			if sess.fs.DependsOn(p) {
				s.logf(protocol.MessageTypeLog, "%s changed: rebuilding %s", p, sess.target.Name)
				s.mu.Lock()
				sess.build.end("")
				sess.build = s.beginProgress("Rebuilding "+sess.target.Name, sess.target.Package)
				s.mu.Unlock()
				sess.fs.Rebuild()
				break
			}
		}
	}
	for _, p := range paths {
		if filepath.Ext(p) == ".go" {
			s.lensRefresh.trigger()
			break
		}
	}
}

// eventLoop applies the engine's events in order, one at a time.
func (s *server) eventLoop() {
	for {
		ev, ok := s.events.pop()
		if !ok {
			return
		}
		func() {
			defer s.recoverLog(fmt.Sprintf("handling %T", ev))
			s.handleEvent(ev)
		}()
	}
}

func (s *server) handleEvent(ev engine.Event) {
	switch ev := ev.(type) {
	case *engine.BuildEvent:
		var be *engine.BuildError
		errors.As(ev.Err, &be)
		s.mu.Lock()
		for _, sess := range s.sessions {
			if sess.target.Package != ev.Package {
				continue
			}
			msg := fmt.Sprintf("built in %.1fs", ev.Seconds)
			if ev.Err != nil && be == nil { // no fault of the user's code: a full disk says so
				msg = "could not build: " + ev.Err.Error()
			} else if ev.Err != nil {
				msg = "build failed"
			} else {
				s.lastBuild[pathKey(sess.target.Dir)] = time.Now()
			}
			sess.build.end(msg)
			sess.build = nil
		}
		if be != nil {
			s.buildErrs[ev.Package] = be
		} else {
			delete(s.buildErrs, ev.Package)
		}
		s.mu.Unlock()
		if ev.Err != nil {
			s.logf(protocol.MessageTypeWarning, "build of %s failed: %v", ev.Package, ev.Err)
			if (be == nil || len(be.Diagnostics) == 0) && !errors.Is(ev.Err, context.Canceled) && s.ctx.Err() == nil {
				s.showMessage(protocol.MessageTypeError, "fuzzls: build of %s failed: %s", ev.Package, firstLine(ev.Err.Error()))
			}
		} else {
			s.logf(protocol.MessageTypeLog, "built %s in %.1fs (%s)", ev.Package, ev.Seconds, ev.StepsText())
		}
		for _, w := range ev.Warnings {
			s.logf(protocol.MessageTypeWarning, "%s: %s", ev.Package, w)
		}
		s.publishDiagnostics()
		s.sendStatus()
		s.lensRefresh.trigger()
		if ev.Err != nil {
			// The engine keeps the last good build's blocks; edited files get
			// empty lists (fileText says they are stale).
			for _, id := range s.sessionIDs(func(sess *session) bool { return sess.target.Package == ev.Package }) {
				s.sendCoverage(id)
			}
		}

	case *engine.SeedsEvent:
		msg := ev.String()
		if ev.Done {
			s.logf(protocol.MessageTypeLog, "%s", msg)
		}
		s.mu.Lock()
		if sess := s.sessions[ev.Target.ID()]; sess != nil {
			sess.build.report(msg)
		}
		s.mu.Unlock()

	case *engine.StatsEvent:
		// Every session ticks about once a second: forty fuzzing would send
		// forty statuses of forty sessions a second. A change of state
		// (build, failure, end) is still sent at once.
		s.statsStatus.trigger()
		s.lensRefresh.trigger()
		s.updateBlockers(ev.Stats.Target)

	case *engine.CrashEvent:
		c := *ev.Crash
		s.mu.Lock()
		_, known := s.crashes[c.ID]
		s.crashes[c.ID] = &c
		s.mu.Unlock()
		if !known {
			s.logf(protocol.MessageTypeInfo, "%s: new failure (%s): %s", c.Target.Name, c.Kind, firstLine(c.Message))
		}
		s.publishDiagnostics()
		s.sendStatus()
		s.lensRefresh.trigger()

	case *engine.CrashFixedEvent:
		s.mu.Lock()
		_, known := s.crashes[ev.Crash.ID]
		delete(s.crashes, ev.Crash.ID)
		s.mu.Unlock()
		if known {
			s.publishDiagnostics()
			if ev.Crash.Kind != fproto.KindSlow { // a slow input is forgotten on each build
				s.showMessage(protocol.MessageTypeInfo, "%s: crash fixed", ev.Crash.Target.Name)
			}
		}

	case *engine.CoverageEvent:
		s.mu.Lock()
		sess := s.sessions[ev.Target.ID()]
		s.mu.Unlock()
		if sess != nil {
			sess.coverage.trigger()
		}

	case *engine.DoneEvent:
		s.mu.Lock()
		sess := s.sessions[ev.Target.ID()]
		if sess != nil {
			delete(s.sessions, ev.Target.ID())
			sess.build.end("")
		}
		s.mu.Unlock()
		if ev.Err != nil && !errors.As(ev.Err, new(*engine.BuildError)) && !errors.Is(ev.Err, context.Canceled) && s.ctx.Err() == nil {
			s.showMessage(protocol.MessageTypeError, "fuzzls: %s stopped: %v", ev.Target.Name, ev.Err)
		} else {
			s.logf(protocol.MessageTypeInfo, "%s stopped after %d execs, %d crashes", ev.Target.Name, ev.Execs, ev.Crashes)
		}
		s.sendStatus()
		s.lensRefresh.trigger()
	}
}

// sessionIDs lists the running sessions that match, in order. match runs
// without s.mu held: it may ask the engine's session.
func (s *server) sessionIDs(match func(*session) bool) []string {
	s.mu.Lock()
	all := make(map[string]*session, len(s.sessions))
	maps.Copy(all, s.sessions)
	s.mu.Unlock()
	var ids []string
	for id, sess := range all {
		if match(sess) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// sessionFor returns the running session of target name in dir.
func (s *server) sessionFor(dir, name string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sess := range s.sessions {
		if sess.target.Name == name && samePath(sess.target.Dir, dir) {
			return sess
		}
	}
	return nil
}

// wireState is the state a session has in fuzzls/status: the one mapping of the
// engine's session states to the protocol's.
func wireState(st engine.State) string {
	switch st {
	case engine.StateBuilding:
		return fproto.StateBuilding
	case engine.StateFuzzing:
		return fproto.StateFuzzing
	case engine.StateStopped:
		return fproto.StateStopped
	case engine.StateError:
		return fproto.StateError
	case engine.StateSkipped:
		return fproto.StateSkipped
	}
	return st.String() // a state added to the engine and not here: TestWireStates fails
}

// status returns the state of every running session, sorted.
func (s *server) status() fproto.StatusParams {
	s.mu.Lock()
	sessions := make([]*session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		sessions = append(sessions, sess)
	}
	s.mu.Unlock()
	out := fproto.StatusParams{Sessions: []fproto.SessionStatus{}}
	for _, sess := range sessions {
		st := sess.fs.Stats()
		t := sess.target
		ss := fproto.SessionStatus{
			Package: t.Package, Name: t.Name, URI: string(fileURI(t.File)),
			State: wireState(sess.fs.State()),
			Execs: st.Execs, ExecsPerSec: st.ExecsPerSec, Corpus: st.Corpus,
			Covered: st.Covered, Blocks: st.Blocks, Crashes: st.Crashes,
			Changed: st.Changed, ChangedReached: st.ChangedReached,
			SinceCoverage: st.SinceCoverage.Seconds(), ExecsSinceCoverage: st.ExecsSinceCoverage,
			Engine: st.Engine,
		}
		for _, m := range st.Mutators {
			ss.Mutators = append(ss.Mutators, fproto.MutatorStatus(m))
		}
		if st.Plateaued {
			ss.Message = fmt.Sprintf("stopped after %s without new coverage (the plateau setting); a save fuzzes it again", st.SinceCoverage.Round(time.Second))
		}
		s.mu.Lock()
		if be := s.buildErrs[t.Package]; be != nil {
			ss.Message = buildSummary(be)
		}
		s.mu.Unlock()
		out.Sessions = append(out.Sessions, ss)
	}
	sort.Slice(out.Sessions, func(i, j int) bool {
		a, b := out.Sessions[i], out.Sessions[j]
		if a.Package != b.Package {
			return a.Package < b.Package
		}
		return a.Name < b.Name
	})
	return out
}

// buildSummary is one line saying why a build failed: its first positioned
// message ("calc.go:14:13: undefined: fmtx"), else the first line of the
// output that is not go's "# package" header.
func buildSummary(be *engine.BuildError) string {
	if len(be.Diagnostics) > 0 {
		d := be.Diagnostics[0]
		return fmt.Sprintf("%s:%d:%d: %s", filepath.Base(d.File), d.Line, d.Col, firstLine(d.Message))
	}
	for _, l := range strings.Split(be.Output, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "# ") {
			return l
		}
	}
	return firstLine(be.Output)
}

// eventQueue is an unbounded FIFO: the engine's observer must not block, and
// the events must be applied in order.
type eventQueue struct {
	mu     sync.Mutex
	items  []engine.Event
	ready  chan struct{} // has a token while items is non-empty or closed
	closed bool
}

func newEventQueue() *eventQueue { return &eventQueue{ready: make(chan struct{}, 1)} }

func (q *eventQueue) push(ev engine.Event) {
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, ev)
	}
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// pop waits for the next event; ok is false once the queue is closed.
func (q *eventQueue) pop() (ev engine.Event, ok bool) {
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return nil, false
		}
		if len(q.items) > 0 {
			ev = q.items[0]
			q.items[0] = nil
			q.items = q.items[1:]
			more := len(q.items) > 0
			q.mu.Unlock()
			if more {
				select {
				case q.ready <- struct{}{}:
				default:
				}
			}
			return ev, true
		}
		q.mu.Unlock()
		<-q.ready
	}
}

func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.items = nil
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}
