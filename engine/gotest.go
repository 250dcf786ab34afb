package engine

// go test's native engine behind a session (Options.Engine = protocol.EngineGoTest):
// the session builds and runs the seeds as for its own workers, then runs
// `go test -fuzz` in the package directory instead of fuzzing. Its progress
// lines become the stats, its failure a Crash (classified by engine/failure,
// the input read from the file go test wrote, then verified and minimized on
// fuzzls's build as any other), and its corpus, replayed on fuzzls's build when
// it grows, the coverage.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"fuzzls.dev/fuzzls/engine/failure"
	"fuzzls.dev/fuzzls/instrument"
	"fuzzls.dev/fuzzls/protocol"
)

// goTestCoverEvery is how often go test's corpus directory is looked at: its
// new entries are replayed on fuzzls's build for their coverage, which go test
// does not report. A look that finds nothing new costs a directory read.
const goTestCoverEvery = 5 * time.Second

var (
	// "fuzz: elapsed: 3s, execs: 1234 (411/sec), new interesting: 5 (total: 10)"
	goTestProgressRE = regexp.MustCompile(`^fuzz: elapsed: \S+, execs: (\d+) \((\d+)/sec\)`)
	// "Failing input written to testdata/fuzz/FuzzX/<hash>"
	goTestWrittenRE = regexp.MustCompile(`^\s*Failing input written to (\S+)`)
	// "failure while testing seed corpus entry: FuzzX/seed#0"
	goTestSeedRE = regexp.MustCompile(`failure while testing seed corpus entry: [^/\s]+/(\S+)`)
)

// goTestRun is what one go test -fuzz said: its executions so far, and the
// failure it ended with.
type goTestRun struct {
	execs    int64
	failing  []string // the lines of its failure, from its first "--- FAIL"
	inFail   bool
	written  string // the failing input's file, relative to the package
	seedName string // a seed that failed before fuzzing began
}

// line takes one line of go test's output and reports whether it was a
// progress line (execs is new).
func (g *goTestRun) line(name, line string) (progress bool) {
	if m := goTestProgressRE.FindStringSubmatch(line); m != nil {
		g.execs, _ = strconv.ParseInt(m[1], 10, 64)
		return true
	}
	if m := goTestWrittenRE.FindStringSubmatch(line); m != nil {
		g.written = filepath.FromSlash(m[1])
		g.inFail = false
		return false
	}
	if m := goTestSeedRE.FindStringSubmatch(line); m != nil {
		g.seedName = m[1]
	}
	if strings.HasPrefix(strings.TrimSpace(line), "--- FAIL: "+name) {
		g.inFail = true
	}
	if g.inFail {
		if t := strings.TrimSpace(line); t == "FAIL" || strings.HasPrefix(t, "To re-run:") {
			g.inFail = false
			return false
		}
		g.failing = append(g.failing, line)
	}
	return false
}

// failure is go test's failure classified, nil when it printed none.
func (g *goTestRun) failure(u failure.UserFrames, pkgDir string) *failure.Failure {
	if len(g.failing) == 0 {
		return nil
	}
	return failure.ClassifyOutput(strings.Join(g.failing, "\n"), u, pkgDir)
}

// goTestCommand is go test -fuzz for the target with the user's build flags,
// with parallel workers.
func goTestCommand(ctx context.Context, t Target, flags BuildFlags, parallel int) *exec.Cmd {
	anchored := "^" + regexp.QuoteMeta(t.Name) + "$"
	args := append([]string{"test", "-run=" + anchored, "-fuzz=" + anchored, "-parallel=" + strconv.Itoa(parallel)}, flags.Args()...)
	cmd := exec.CommandContext(ctx, "go", append(args, ".")...)
	cmd.Dir = t.Dir
	return cmd
}

// goCacheDir is go test's corpus directory of t: $(go env GOCACHE)/fuzz/<importpath>/FuzzX.
func goCacheDir(t Target) string {
	cmd := exec.Command("go", "env", "GOCACHE")
	cmd.Dir = t.Dir
	out, err := cmd.Output()
	if dir := strings.TrimSpace(string(out)); err == nil && dir != "" && dir != "off" {
		return filepath.Join(dir, "fuzz", filepath.FromSlash(t.Package), t.Name)
	}
	return nativeCacheDir(t)
}

// fuzzGoTest is fuzz with go test's engine: go test -fuzz runs until Stop,
// Rebuild, the budget, or its failure (go test stops at the first). The go
// command and all it started are gone when it returns (instrument.Guard:
// the go command's process group dies with the pipe to it). go test's workers
// are fixed when it starts: it runs with the session's first allotment of
// slots, and is stopped while the scheduler gives the session none (others'
// turn), then started again, resuming from its corpus.
func (s *Session) fuzzGoTest() outcome {
	allot := s.e.sched.join(s)
	defer s.e.sched.leave(s)
	ctx, cancel := context.WithCancel(context.Background())
	cov := newGoTestCoverage(ctx, s)
	defer func() {
		cancel()
		cov.stop()
	}()
	for {
		var n int
		for n == 0 {
			select {
			case <-s.stopCh:
				return outStopped
			case <-s.rebuildCh:
				return outRebuild
			case n = <-allot:
			}
		}
		if out, paused := s.runGoTest(allot, n, cov); !paused {
			return out
		}
	}
}

// runGoTest runs go test -fuzz with n workers until the session ends, or
// until its allotment is 0 (paused).
func (s *Session) runGoTest(allot <-chan int, n int, cov *goTestCoverage) (out outcome, paused bool) {
	o := s.e.opts
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := goTestCommand(ctx, s.target, o.Build, n)
	r, w, err := os.Pipe()
	if err != nil {
		s.goTestFailed(err)
		return outFinished, false
	}
	cmd.Stdout, cmd.Stderr = w, w
	fmt.Fprintf(o.Log, "fuzzls: %s: go %s (in %s)\n", s.target.Name, strings.Join(cmd.Args[1:], " "), s.target.Dir)
	unguard := instrument.Guard(cmd)
	defer unguard()
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		s.goTestFailed(err)
		return outFinished, false
	}
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		defer r.Close()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	all, exited := lines, make(chan error, 1)

	s.mu.Lock()
	if s.started.IsZero() {
		s.started = time.Now()
	}
	base := s.execsBase
	s.mu.Unlock()
	s.setState(StateFuzzing)
	s.emitStats()

	cov.start() // the initial corpus first: where fuzzing starts

	coverTick := time.NewTicker(goTestCoverEvery)
	defer coverTick.Stop()
	var deadline <-chan time.Time
	if o.FuzzTime > 0 {
		t := time.NewTimer(o.FuzzTime - time.Since(s.started))
		defer t.Stop()
		deadline = t.C
	}
	run := &goTestRun{}
	var tail []string // the last lines, for an error that is no failure
	end := func(why outcome, pause bool) (outcome, bool) {
		go func() {
			for range all { // what comes until the group is gone
			}
		}()
		cancel()
		if lines == nil { // its output ended: Wait is being called
			<-exited
		} else {
			cmd.Wait()
		}
		s.mu.Lock()
		s.execsBase = base + run.execs
		s.mu.Unlock()
		return why, pause
	}
	for {
		select {
		case <-s.stopCh:
			return end(outStopped, false)
		case <-s.rebuildCh:
			return end(outRebuild, false)
		case <-deadline:
			s.emitStats()
			return end(outFinished, false)
		case n := <-allot:
			if n == 0 { // others' turn
				return end(0, true)
			}
		case <-coverTick.C:
			cov.start()
		case <-cov.grew:
			s.e.observe(&CoverageEvent{Target: s.target})
		case line, ok := <-lines:
			if !ok {
				lines = nil
				go func() { exited <- cmd.Wait() }()
				continue
			}
			if tail = append(tail, line); len(tail) > 20 {
				tail = tail[1:]
			}
			// The stats go out with go test's progress lines (every 3 s), so
			// that the rate is over the executions between two of them.
			if run.line(s.target.Name, line) {
				s.mu.Lock()
				s.execsBase = base + run.execs
				s.mu.Unlock()
				if st := s.emitStats(); o.FuzzExecs > 0 && st.Execs >= o.FuzzExecs {
					return end(outFinished, false)
				}
			}
		case err := <-exited:
			s.mu.Lock()
			s.execsBase = base + run.execs
			s.mu.Unlock()
			s.goTestEnded(run, err, tail)
			s.emitStats()
			return outFinished, false
		}
	}
}

// goTestEnded reports how go test -fuzz ended: its failure as a Crash, or,
// when it failed without one (it did not build, a flag it refused), the
// session's error.
func (s *Session) goTestEnded(run *goTestRun, err error, out []string) {
	f := run.failure(s.userFrames(), s.target.Dir)
	if f == nil {
		if err != nil {
			s.goTestFailed(fmt.Errorf("go test -fuzz: %v: %s", err, strings.Join(out, "\n")))
		}
		return
	}
	input, rerr := s.goTestInput(run)
	if rerr != nil {
		fmt.Fprintf(s.e.opts.Log, "fuzzls: %s: go test's failing input: %v\n", s.target.Name, rerr)
	}
	if f.File == "" && input != "" {
		// go test says no more of a worker that died or hung than "fuzzing
		// process hung or terminated unexpectedly": the input's run on
		// fuzzls's build tells the kind and the place (an exit, a fatal
		// error, a hang, out of memory).
		ctx, cancel := s.stopContext(context.WithTimeout(context.Background(), verifyTime))
		r := &replayer{s: s}
		if g, ok := r.run(ctx, input); ok && g != nil {
			f = g
		}
		r.close()
		cancel()
	}
	s.onFailure(f, input)
}

// goTestInput is the input go test failed on: the file it wrote into the
// package's testdata/fuzz/FuzzX, or the seed that failed.
func (s *Session) goTestInput(run *goTestRun) (string, error) {
	if run.written != "" {
		fmt.Fprintf(s.e.opts.Log, "fuzzls: %s: go test wrote its failing input to %s (in %s), as it does\n", s.target.Name, run.written, s.target.Dir)
		data, err := os.ReadFile(filepath.Join(s.target.Dir, run.written))
		return string(data), err
	}
	if run.seedName != "" {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, name := range s.seeds.names {
			if name == run.seedName {
				return s.seeds.inputs[i], nil
			}
		}
		return "", fmt.Errorf("no seed %s", run.seedName)
	}
	return "", fmt.Errorf("go test named no input")
}

// goTestFailed ends the session's fuzzing with err: no fault found in the
// user's code, no worker could run.
func (s *Session) goTestFailed(err error) {
	fmt.Fprintf(s.e.opts.Log, "fuzzls: %s: %v\n", s.target.Name, err)
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
}

// goTestCoverage replays go test's corpus on fuzzls's build, one pass at a
// time, on a replayer of its own: the entries not replayed yet, when the
// directory has more files than at the last pass.
type goTestCoverage struct {
	s     *Session
	dir   string
	files int             // entries at the last pass
	seen  map[string]bool // inputs replayed
	first bool            // the initial corpus is replayed
	busy  chan struct{}   // closed when the pass running ends
	grew  chan struct{}   // a pass reached new coverage
	ctx   context.Context // ends the passes
}

func newGoTestCoverage(ctx context.Context, s *Session) *goTestCoverage {
	return &goTestCoverage{s: s, ctx: ctx, dir: goCacheDir(s.target), seen: map[string]bool{}, grew: make(chan struct{}, 1)}
}

// start begins a pass unless one runs or nothing is new.
func (c *goTestCoverage) start() {
	if c.busy != nil {
		select {
		case <-c.busy:
		default:
			return
		}
	}
	var inputs []string
	if !c.first {
		c.first = true
		for _, en := range c.s.corpus.list() {
			inputs = append(inputs, en.input)
		}
	}
	if ents, err := os.ReadDir(c.dir); err == nil && len(ents) != c.files {
		c.files = len(ents)
		c.s.mu.Lock()
		types := c.s.types
		c.s.mu.Unlock()
		inputs = append(inputs, readCorpusDir(c.dir, types, c.s.e.opts.Log)...)
	}
	var fresh []string
	for _, in := range inputs {
		if !c.seen[in] {
			c.seen[in] = true
			fresh = append(fresh, in)
		}
	}
	if len(fresh) == 0 {
		return
	}
	busy := make(chan struct{})
	c.busy = busy
	go func() {
		defer close(busy)
		if c.replay(c.ctx, fresh) {
			select {
			case c.grew <- struct{}{}:
			default:
			}
		}
	}()
}

// replay runs inputs for their coverage and reports whether it grew.
func (c *goTestCoverage) replay(ctx context.Context, inputs []string) bool {
	r := &replayer{s: c.s}
	defer r.close()
	grew := false
	for _, in := range inputs {
		f, ok := r.run(ctx, in)
		if ctx.Err() != nil {
			break
		}
		if !ok || f != nil {
			continue // go test reports its failures itself
		}
		cov := append([]uint32(nil), r.lastCov...)
		if g, _ := c.s.cov.merge(cov); g {
			grew = true
			if c.s.corpus.add(in, cov) {
				c.s.corpus.save(in)
			}
		}
	}
	return grew
}

// stop waits for the pass running to end (its context ended) and for its
// worker to be gone.
func (c *goTestCoverage) stop() {
	if c.busy != nil {
		<-c.busy
	}
}

// engineName is Options.Engine's value, the default filled in.
func engineName(o Options) string {
	if o.Engine == "" {
		return protocol.EngineFuzzls
	}
	return o.Engine
}

// Engines are Options.Engine's values, the default first.
var Engines = []string{protocol.EngineFuzzls, protocol.EngineGoTest}

// CheckEngine says what is wrong with name as Options.Engine, nil when nothing.
func CheckEngine(name string) error {
	for _, e := range Engines {
		if name == e {
			return nil
		}
	}
	return fmt.Errorf("engine %q is not one of %s", name, strings.Join(Engines, ", "))
}
