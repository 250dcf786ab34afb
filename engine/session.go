package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"fuzzls.dev/fuzzls/engine/failure"
	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/instrument"
	"fuzzls.dev/fuzzls/protocol"
)

// Session is one target being built and fuzzed: its life cycle (run: build,
// seeds, fuzzing phases, stop) and what is the build's (binary, types,
// dictionary, workers, stats) under mu. What it learns has owners of its own,
// each with its data and lock: the coverage (cov), the corpus, the failures,
// the sync directory, the changed code (focus) and the comparison summaries
// (blk). Their locks are leaves, taken under mu, never the other way. Its run
// goroutine owns the worker processes.
type Session struct {
	e      *Engine
	target Target

	rebuildCh chan struct{}
	stopCh    chan struct{}
	stopOnce  sync.Once
	done      chan struct{}
	// background holds the crash minimizations running beside fuzzing
	// (KeepFuzzing); the session is not done before they are, so that nothing
	// writes into the cache or runs a replay worker after Stop returns.
	background sync.WaitGroup

	mu        sync.Mutex
	state     State
	err       error
	pkg       *instrument.Package
	bin       *instrument.Binary
	cov       coverageMap // of bin
	corpus    *corpusStore
	failures  *failureTable
	types     []string
	seeds     *seedSet // the build's seeds
	dict      []string // tokens for the mutators: literals of the build, user dictionaries
	started   time.Time
	execsBase int64 // executions of workers that are gone
	workers   []*workerProc
	rate      rateMeter
	skipped   string        // why the current build's target is skipped (see runSeeds); "" = it is not
	hang      hangLimit     // shared by the session's watchdogs
	sync      *syncState    // the sync directory (sync.go)
	focus     *focusState   // the changed code (focus.go)
	blk       *blockerState // comparison summaries (blockers.go)
	hooks     hookTable     // the user's mutators' figures (hooks.go)
	seeded    uint64        // workers given a seed from Options.Seed
	// quiet is the fuzzing time since coverage last grew, counted on the phase's
	// ticks while the session has workers (a session waiting for its turn is not
	// on a plateau); quietExecs are the executions it had then (Stats.SinceCoverage).
	quiet      time.Duration
	quietExecs int64
	plateaued  bool // stopped after Options.Plateau of quiet, until the next phase
}

func newSession(e *Engine, t Target) *Session {
	s := &Session{e: e, target: t, state: StateBuilding,
		rebuildCh: make(chan struct{}, 1), stopCh: make(chan struct{}), done: make(chan struct{}),
		corpus:   newCorpusStore(corpusDir(e.opts.CacheDir, t), t.Name, e.opts.Log),
		failures: newFailureTable(),
		focus:    &focusState{firstLines: e.opts.Focus, noFocus: e.opts.NoFocus, share: e.shareTexts},
		sync:     newSyncState(e, t),
		blk:      &blockerState{}}
	s.hang.fixed = e.opts.Timeout
	return s
}

// Skipped says why the target was skipped, as go test skips it (f.Skip before
// f.Fuzz, a TestMain that never calls m.Run); "" when it was not.
func (s *Session) Skipped() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.skipped
}

// Target returns the session's target.
func (s *Session) Target() Target { return s.target }

// Stop ends fuzzing and waits until the session's workers are gone. The corpus stays
// in the cache directory; a later Start resumes from it.
func (s *Session) Stop() {
	s.stopOnce.Do(func() { close(s.stopCh) })
	<-s.done
}

// Wait blocks until the session ends and returns its error: a *BuildError (the
// user's code does not build), another error (a build step that failed for
// another cause, a full disk: no fault of the user's code), or nil.
func (s *Session) Wait() error {
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Rebuild rebuilds the package in the background and swaps the new binary in,
// keeping the corpus (re-run for coverage) and re-checking known crashes (a
// *CrashFixedEvent for each that passes now). A build error is reported as a
// *BuildEvent and the session waits for the next Rebuild.
func (s *Session) Rebuild() {
	select {
	case s.rebuildCh <- struct{}{}:
	default:
	}
}

// State is where the session is (state.go).
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

func (s *Session) setState(st State) {
	s.mu.Lock()
	s.state = st
	s.mu.Unlock()
}

// Stats returns a snapshot of the session's progress.
func (s *Session) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statsLocked()
}

func (s *Session) statsLocked() Stats {
	covered, blocks := s.cov.counts()
	st := Stats{Target: s.target, Corpus: s.corpus.size(), Covered: covered, Blocks: blocks,
		Changed: len(s.focus.changedBlocks()), ChangedReached: s.focus.changedReached(&s.cov), Crashes: s.failures.count(),
		Workers: len(s.workers), SinceCoverage: s.quiet, Plateaued: s.plateaued}
	st.Execs = s.execsLocked()
	st.ExecsSinceCoverage = st.Execs - s.quietExecs
	if !s.started.IsZero() {
		st.Elapsed = time.Since(s.started)
	}
	st.ExecsPerSec = s.rate.perSec
	st.Mutators = s.hooks.list(s.bin)
	st.Engine = engineName(s.e.opts)
	return st
}

func (s *Session) execsLocked() int64 {
	n := s.execsBase
	for _, w := range s.workers {
		n += int64(w.mem.Execs())
	}
	return n
}

// Coverage returns the blocks of the current build and whether each was reached.
func (s *Session) Coverage() (blocks []Block, hit []bool) { return s.cov.snapshot() }

// Crashes returns the distinct failures found so far, and last the slow input
// of this build if there is one (Kind protocol.KindSlow: a warning, not a failure).
func (s *Session) Crashes() []*Crash { return s.failures.snapshot() }

// DependsOn reports whether a change of file (absolute path) affects this session:
// the Go files of the instrumented packages, go.mod/go.sum/go.work, and its seed
// corpus directory testdata/fuzz/<Name>/.
func (s *Session) DependsOn(file string) bool {
	s.mu.Lock()
	pkg, bin := s.pkg, s.bin
	s.mu.Unlock()
	file = filepath.Clean(file)
	if strings.HasPrefix(file, filepath.Join(s.target.Dir, "testdata", "fuzz", s.target.Name)+string(filepath.Separator)) {
		return true
	}
	switch filepath.Base(file) {
	case "go.mod", "go.sum", "go.work", "go.work.sum":
		return true
	}
	if !strings.HasSuffix(file, ".go") {
		return false
	}
	dirs := map[string]bool{s.target.Dir: true}
	if pkg != nil {
		for _, d := range pkg.Deps {
			dirs[d.Dir] = true
		}
	}
	if dirs[filepath.Dir(file)] {
		return true
	}
	if bin != nil {
		for _, in := range bin.Inputs {
			if in == file {
				return true
			}
		}
	}
	return false
}

// SeedCandidates returns the smallest corpus entries that keep the current
// coverage, each in the `go test fuzz v1` format.
func (s *Session) SeedCandidates() []string {
	seeds, layout := s.corpus.seedCandidates(), s.layout()
	for i, in := range seeds {
		seeds[i] = string(fuzzrt.WithLayout([]byte(in), layout))
	}
	return seeds
}

// Layout is fuzzrt's layout of the target's arguments when it takes some go
// test refuses, which fuzzls fuzzes field by field (GoTestCannot says it for
// people), else empty; empty too before its seeds have run.
func (s *Session) Layout() string { return s.layout() }

// outcome is why a fuzzing phase ended.
type outcome int

const (
	outStopped  outcome = iota // Stop was called
	outRebuild                 // a Rebuild was requested
	outFinished                // time or execution budget spent, a plateau, or a failure without KeepFuzzing
)

// What a full disk stopped (a build, a worker's start), or a worker that died
// before running an input, is tried again after retryFirst, then after twice
// the last wait, up to retryMax: a disk that stays full costs a try every
// retryMax, and room made is used within it.
const (
	retryFirst = 2 * time.Second
	retryMax   = 16 * time.Second
)

// backoff is when the next try of something that failed may be made.
type backoff struct {
	wait time.Duration // the last wait; 0: the last try worked
	next time.Time
}

// failed records a failed try and returns the wait before the next.
func (b *backoff) failed() time.Duration {
	b.wait = min(max(2*b.wait, retryFirst), retryMax)
	b.next = time.Now().Add(b.wait)
	return b.wait
}

// due reports whether the next try may be made now.
func (b *backoff) due() bool { return !time.Now().Before(b.next) }

// failing reports whether the last try failed.
func (b *backoff) failing() bool { return b.wait > 0 }

// reset records a try that worked.
func (b *backoff) reset() { *b = backoff{} }

// diskFull reports whether err (from the file system, or the go command's
// output) says the disk is full.
func diskFull(err error) bool { return instrument.IsDiskFull(err) }

// fullWhere says which file system a full disk's err is about: the path it
// names, else the cache directory's.
func (s *Session) fullWhere(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Path
	}
	return s.e.opts.CacheDir
}

func (s *Session) run() {
	defer close(s.done)
	defer s.setState(StateStopped)
	defer s.background.Wait()
	o := s.e.opts
	var rebuilt bool
	var retry backoff // builds a full disk stopped
	for {
		err := s.prepare(rebuilt)
		if errors.Is(err, errStopped) {
			return
		}
		if err != nil {
			s.mu.Lock()
			if _, skip := err.(*skipped); skip {
				s.state, s.err = StateSkipped, nil
			} else {
				s.state, s.err = StateError, err
			}
			s.mu.Unlock()
			if !o.Persistent { // headless: a build error ends the run
				return
			}
			// A full disk is no fault of the user's code and needs no save to
			// be over: the build is tried again, less and less often.
			var again <-chan time.Time
			if diskFull(err) {
				if !retry.failing() {
					fmt.Fprintf(o.Log, "fuzzls: %s: no room to build: the file system of %s is full (%v); building again in %v, then less and less often (every %v at most), until there is room\n",
						s.target.Name, s.fullWhere(err), err, retryFirst, retryMax)
				}
				again = time.After(retry.failed())
			}
			select {
			case <-s.stopCh:
				return
			case <-s.rebuildCh:
				rebuilt = true
				continue
			case <-again:
				continue
			}
		}
		if retry.failing() {
			retry.reset()
			fmt.Fprintf(o.Log, "fuzzls: %s: there is room to build again\n", s.target.Name)
		}
		s.mu.Lock()
		s.err = nil
		s.mu.Unlock()
		if o.ReplayOnly {
			s.replayRecorded()
			return
		}
		if o.ReplaySeeds != nil {
			s.replaySeeds()
			return
		}
		fuzz := s.fuzz
		switch o.Engine {
		case protocol.EngineGoTest:
			fuzz = s.fuzzGoTest
		case protocol.EngineLibFuzzer:
			fuzz = s.fuzzLibFuzzer
		}
		switch fuzz() {
		case outStopped:
			return
		case outFinished:
			if !o.Persistent {
				return
			}
			s.mu.Lock()
			s.state = StateStopped
			if s.err != nil { // no worker could run (fuzz.go)
				s.state = StateError
			}
			s.mu.Unlock()
			s.emitStats() // observers learn that it stopped
			select {
			case <-s.stopCh:
				return
			case <-s.rebuildCh:
			}
			rebuilt = true
		case outRebuild:
			rebuilt = true
		}
	}
}

// prepare builds the binary, asks it for the seeds and types, and assembles the
// initial corpus. After a rebuild it re-runs the known crashes on the new binary.
func (s *Session) prepare(rebuilt bool) error {
	s.setState(StateBuilding)
	e := s.e
	ctx, cancel := s.stopContext(context.WithCancel(context.Background()))
	defer cancel()
	start := time.Now()
	// The BuildEvent comes once the new build is in place (blocks swapped, seeds
	// run), so an observer that reads Coverage() on it sees the new blocks; a seeds
	// run that fails (bad f.Add types, bad corpus files) is a build error too.
	var warnings []string
	var steps []BuildStep
	report := func(err error) error {
		if err != nil { // the state observers read on the event is already StateError
			s.mu.Lock()
			s.state, s.err = StateError, err
			s.mu.Unlock()
		}
		e.observe(&BuildEvent{Package: s.target.Package, Targets: []string{s.target.Name}, Seconds: time.Since(start).Seconds(), Steps: steps, Err: err, Warnings: warnings})
		return err
	}
	bin, loaded, err := s.build(ctx)
	if err != nil && s.stopped() {
		return errStopped // no build error: Stop cancelled it
	}
	if err != nil {
		return report(err)
	}
	warnings = bin.Warnings
	steps = append([]BuildStep{{Name: "load", Seconds: loaded.Sub(start).Seconds()}}, bin.Steps...)
	seedsStart := time.Now()
	seeds, err := runSeeds(bin, s.target.Name, e.opts.CacheDir, func(ev SeedsEvent) {
		ev.Target = s.target
		e.observe(&ev)
	})
	steps = append(steps, BuildStep{Name: "seeds", Seconds: time.Since(seedsStart).Seconds()})
	var sk *skipped
	if errors.As(err, &sk) {
		s.mu.Lock()
		s.skipped = sk.reason
		s.mu.Unlock()
		report(nil)
		return err
	}
	if err != nil {
		return report(err)
	}
	s.mu.Lock()
	s.skipped = ""
	s.mu.Unlock()
	user, err := userDict(s.target, e.opts.Dict)
	if err != nil {
		return report(&BuildError{Package: s.target.Package, Output: fmt.Sprintf("%s: %v", s.target.Name, err)})
	}
	corpusStart := time.Now()
	slow := s.install(bin, seeds, user, s.initialCorpus(seeds))
	if slow != nil {
		s.e.observe(&CrashFixedEvent{Crash: slow})
	}
	steps = append(steps, BuildStep{Name: "corpus", Seconds: time.Since(corpusStart).Seconds()})
	report(nil)
	if rebuilt {
		s.recheckCrashes()
	}
	return nil
}

// initialCorpus is what a new build's workers start from, in order: the
// seeds, the failures the sync directory holds (the workers run the initial
// corpus in order, and without KeepFuzzing the first that still fails ends the
// session), the generated corpus, go test's, and the sync directory's entries.
func (s *Session) initialCorpus(seeds *seedSet) []string {
	o := s.e.opts
	syncCorpus, syncFailures := s.sync.load(seeds.types)
	inputs := append(seeds.inputs, syncFailures...)
	inputs = append(inputs, readCorpusDir(corpusDir(o.CacheDir, s.target), seeds.types, o.Log)...)
	if d := nativeCacheDir(s.target); d != "" {
		inputs = append(inputs, readCorpusDir(d, seeds.types, o.Log)...)
	}
	return append(inputs, syncCorpus...)
}

// install puts a new build in place: its binary, seeds, dictionary (the
// user's, and the code's literals), changed code, coverage (none reached) and
// initial corpus. It returns the last build's slow input, forgotten (nil if
// none): the new build may be faster.
func (s *Session) install(bin *instrument.Binary, seeds *seedSet, user, inputs []string) (slow *Crash) {
	_, prevBlocks := s.cov.counts()
	s.focus.set(bin, prevBlocks)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bin, s.types, s.seeds = bin, seeds.types, seeds
	s.hang.reset()
	switch {
	case s.e.opts.NoLiteralDict:
		s.dict = user
	case len(user) == 0:
		s.dict = bin.Dict // shared with the build's other sessions
	default:
		s.dict = append(slices.Clip(user), bin.Dict...)
	}
	// Under mu with bin: what reads the coverage with the binary (Blockers)
	// sees the two of one build.
	s.cov.reset(bin, s.focus.changedBlocks())
	s.corpus.reset(inputs)
	return s.failures.newBuild(seeds.testdata)
}

// errStopped is prepare's answer when Stop cancelled the build.
var errStopped = errors.New("stopped")

func (s *Session) stopped() bool {
	select {
	case <-s.stopCh:
		return true
	default:
		return false
	}
}

// stopContext also cancels ctx when the session is stopped.
func (s *Session) stopContext(ctx context.Context, cancel context.CancelFunc) (context.Context, context.CancelFunc) {
	go func() {
		select {
		case <-s.stopCh:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

func (s *Session) build(ctx context.Context) (bin *instrument.Binary, loaded time.Time, err error) {
	e := s.e
	pkgs, err := e.loader.Load(ctx, s.target.Dir, ".")
	loaded = time.Now()
	if err != nil {
		return nil, loaded, &BuildError{Package: s.target.Package, Output: err.Error()}
	}
	var pkg *instrument.Package
	for _, p := range pkgs {
		if p.ImportPath == s.target.Package {
			pkg = p
		}
	}
	if pkg == nil {
		return nil, loaded, &BuildError{Package: s.target.Package, Output: fmt.Sprintf("package %s has no test files", s.target.Package)}
	}
	found := false
	for _, t := range pkg.Targets {
		found = found || t.Name == s.target.Name
	}
	if !found && len(pkg.Errors) == 0 {
		return nil, loaded, &BuildError{Package: s.target.Package, Output: fmt.Sprintf("%s: no fuzz target %s", s.target.Package, s.target.Name)}
	}
	s.mu.Lock()
	s.pkg = pkg
	s.mu.Unlock()
	// One build at a time: they compete for the same cores and the same go cache.
	e.buildMu.Lock()
	bin, err = instrument.Build(ctx, pkg, instrument.BuildOptions{CacheDir: e.opts.CacheDir, Runtime: runtimeFS(), NoCmp: e.opts.NoCmp, Flags: e.opts.Build})
	if err == nil {
		e.shareBuild(bin)
	}
	e.buildMu.Unlock()
	if err != nil {
		var be *BuildError
		if errors.As(err, &be) {
			return nil, loaded, be
		}
		// A step that failed for want of room or a cache that cannot be
		// written is no error of the user's code: it keeps its cause.
		var se *instrument.StepError
		if errors.As(err, &se) {
			return nil, loaded, se
		}
		return nil, loaded, &BuildError{Package: s.target.Package, Output: err.Error()}
	}
	return bin, loaded, nil
}

// seedSet is what a seeds run hands over: the target's argument types and its
// seeds (f.Add values, then testdata/fuzz files) in the `go test fuzz v1` encoding.
type seedSet struct {
	types    []string
	layout   string // of a target fuzzed field by field (fuzzrt.Seeds.Layout), else empty
	inputs   []string
	names    []string        // each input's name, as testing names it: seed#N, or the file's name
	testdata map[string]bool // inputs of the seeds with a path (see Session.testdata)
	size     int64           // of the inputs, in bytes
	total    int             // seeds the run announced; len(inputs) once all are in
}

// runSeeds runs the binary once in fuzzrt.ModeSeeds: testing checks the f.Add values
// and reads testdata/fuzz, and our deps hand over the types and the seeds, one a
// message, which progress hears of about once a second and once all are in.
func runSeeds(bin *instrument.Binary, target, cacheDir string, progress func(SeedsEvent)) (*seedSet, error) {
	tmp, err := newTempDir(cacheDir, "seeds")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	cmd, in, out, child, err := testCommand(bin, target, fuzzrt.ModeSeeds, "", tmp)
	if err != nil {
		return nil, err
	}
	var stdout tailBuffer
	stdout.max = 64 << 10
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	err = cmd.Start()
	for _, f := range child {
		f.Close()
	}
	if err != nil {
		in.Close()
		out.Close()
		return nil, err
	}
	in.Close()
	w := &workerProc{msgs: make(chan *fuzzrt.Message, 64)}
	go w.readMessages(out)
	seeds := readSeeds(w.msgs, progress)
	werr := cmd.Wait()
	if seeds == nil && werr == nil && w.msgErr == nil {
		// The binary passed without reaching f.Fuzz's fuzzing: as go test, the
		// target is skipped (f.Skip, or a TestMain that never calls m.Run).
		return nil, &skipped{reason: skipReason(stdout.String(), target)}
	}
	if seeds == nil || werr != nil || w.msgErr != nil || len(seeds.inputs) < seeds.total {
		msg := strings.TrimSpace(unverbose(stdout.String()))
		if w.msgErr != nil {
			msg = strings.TrimSpace(fmt.Sprintf("reading its messages: %v\n%s", w.msgErr, msg))
		}
		if msg == "" && werr != nil {
			msg = werr.Error()
		}
		if seeds != nil { // it stopped while handing over its seeds
			msg = fmt.Sprintf("the seeds run stopped after %d of %d seeds (%s): %s", len(seeds.inputs), seeds.total, fuzzrt.ByteSize(seeds.size), msg)
		}
		return nil, &BuildError{Package: bin.Package.ImportPath, Output: fmt.Sprintf("%s: %s", target, msg), Diagnostics: seedDiagnostics(bin, target, msg)}
	}
	for _, t := range seeds.types {
		if fuzzrt.ZeroValue(t) == nil {
			return nil, &BuildError{Package: bin.Package.ImportPath, Output: fmt.Sprintf("%s: unsupported argument type %s", target, t)}
		}
	}
	return seeds, nil
}

// skipped is a seeds run that passed without reaching the fuzzing: the target
// is skipped, as go test skips it, and the session ends without an error.
type skipped struct{ reason string }

func (s *skipped) Error() string { return "skipped: " + s.reason }

// skipReason is what a seeds run that passed says about its target: the lines
// testing logged before "--- SKIP" (the seeds run is verbose), or, when the
// target never ran, the one way that happens.
func skipReason(out, target string) string {
	var logged []string
	for line := range strings.SplitSeq(out, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "=== RUN"):
			logged = logged[:0]
		case strings.HasPrefix(t, "--- SKIP: "+target+" "):
			if len(logged) == 0 {
				return "f.Skip"
			}
			return strings.Join(logged, "\n")
		case strings.HasPrefix(line, "    ") && t != "":
			logged = append(logged, t)
		}
	}
	return "the test binary exited with status 0 without running " + target + " (a TestMain that does not call m.Run)"
}

// unverbose drops the lines -test.v adds ("=== RUN", "=== NAME", "=== PAUSE"...).
func unverbose(out string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(out, "\n") {
		if !strings.HasPrefix(line, "=== ") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// readSeeds collects a seeds run's messages until its fd 4 closes: the Seeds
// header, then the seeds; nil if no header came.
func readSeeds(msgs <-chan *fuzzrt.Message, progress func(SeedsEvent)) *seedSet {
	var seeds *seedSet
	var last time.Time
	report := func(done bool) {
		progress(SeedsEvent{Count: len(seeds.inputs), Total: seeds.total, Bytes: seeds.size, Done: done, Layout: seeds.layout})
		last = time.Now()
	}
	for m := range msgs {
		switch {
		case m.Seeds != nil:
			seeds = &seedSet{types: m.Seeds.Types, layout: m.Seeds.Layout, total: m.Seeds.Count, inputs: make([]string, 0, m.Seeds.Count), testdata: map[string]bool{}}
			last = time.Now()
		case m.Seed != nil && seeds != nil:
			seeds.inputs = append(seeds.inputs, m.Seed.Input)
			seeds.names = append(seeds.names, filepath.Base(m.Seed.Path))
			if m.Seed.Path != "" {
				seeds.testdata[m.Seed.Input] = true
			}
			seeds.size += int64(len(m.Seed.Input))
			if time.Since(last) >= time.Second {
				report(false)
			}
		}
	}
	if seeds != nil && len(seeds.inputs) == seeds.total {
		report(true)
	}
	return seeds
}

// seedDiagnostics places a failed seed run's message on the target's declaration.
func seedDiagnostics(bin *instrument.Binary, target, msg string) []Diagnostic {
	for _, t := range bin.Package.Targets {
		if t.Name == target {
			return []Diagnostic{{File: t.File, Line: t.Line, Col: 1, Message: msg}}
		}
	}
	return nil
}

func (s *Session) userFrames() failure.UserFrames {
	s.mu.Lock()
	defer s.mu.Unlock()
	dirs := []string{}
	if s.pkg != nil {
		dirs = append(dirs, s.pkg.ModuleDir)
		for _, d := range s.pkg.Deps { // workspace modules other than the target's
			if d.ModulePath == "" {
				dirs = append(dirs, d.Dir)
			}
		}
	}
	if s.target.Dir != "" {
		dirs = append(dirs, s.target.Dir)
	}
	var copies map[string]string
	if s.bin != nil {
		copies = s.bin.Copies
	}
	return failure.UserFrames{Dirs: dirs, Copies: copies}
}

// rateMeter computes executions per second over the last interval.
type rateMeter struct {
	lastN  int64
	lastT  time.Time
	perSec float64
}

func (r *rateMeter) update(n int64, now time.Time) {
	if !r.lastT.IsZero() {
		if dt := now.Sub(r.lastT).Seconds(); dt > 0 {
			r.perSec = float64(n-r.lastN) / dt
		}
	}
	r.lastN, r.lastT = n, now
}
