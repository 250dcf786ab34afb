package engine

// Another engine's process behind a session (go test's, gotest.go; libFuzzer's,
// libfuzzer.go): after the build and the seeds, instead of a fuzzing phase, the
// process runs until Stop, Rebuild, the budget, or its end (both stop at their
// first failure). Its output lines are the stats, its failure goes through
// onFailure as a worker's does, and its corpus, replayed on fuzzls's build when
// it grows, is the coverage.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"fuzzls.dev/fuzzls/engine/failure"
	"fuzzls.dev/fuzzls/instrument"
)

// externalCoverEvery is how often the engine's corpus directory is looked at:
// its new entries are replayed on fuzzls's build for their coverage, which the
// engine does not report. A look that finds nothing new costs a directory read.
const externalCoverEvery = 5 * time.Second

// externalEngine is what differs between the engines run as a process.
type externalEngine struct {
	// command is the engine's process with n workers.
	command func(ctx context.Context, n int) *exec.Cmd
	// newRun reads one process's output.
	newRun func() externalRun
	// ended reports how the process ended on its own: its failure, or the
	// session's error; tail is its last lines.
	ended func(run externalRun, err error, tail []string)
	// corpus is the engine's corpus directory, read (as `go test fuzz v1`
	// inputs of the target's types) for the coverage.
	corpus string
	read   func(dir string, types []string, log io.Writer) []string
}

// externalRun is what one process said so far.
type externalRun interface {
	// line takes one line of its output and reports whether it was a
	// progress line (executions is new).
	line(string) bool
	executions() int64
}

// fuzzExternal is fuzz with the engine x. The process and all it started
// are gone when it returns (instrument.Guard: the process group dies with the
// pipe to it). Its workers are fixed when it starts: it runs with the session's
// first allotment of slots, and is stopped while the scheduler gives the
// session none (others' turn), then started again, resuming from its corpus.
func (s *Session) fuzzExternal(x externalEngine) outcome {
	allot := s.e.sched.join(s)
	defer s.e.sched.leave(s)
	ctx, cancel := context.WithCancel(context.Background())
	cov := &externalCoverage{s: s, ctx: ctx, dir: x.corpus, read: x.read, seen: map[string]bool{}, grew: make(chan struct{}, 1)}
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
		if out, paused := s.runExternal(x, allot, n, cov); !paused {
			return out
		}
	}
}

// runExternal runs the engine's process with n workers until the session
// ends, or until its allotment is 0 (paused).
func (s *Session) runExternal(x externalEngine, allot <-chan int, n int, cov *externalCoverage) (out outcome, paused bool) {
	o := s.e.opts
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := x.command(ctx, n)
	r, w, err := os.Pipe()
	if err != nil {
		s.engineFailed(err)
		return outFinished, false
	}
	cmd.Stdout, cmd.Stderr = w, w
	fmt.Fprintf(o.Log, "fuzzls: %s: %s (in %s)\n", s.target.Name, strings.Join(cmd.Args, " "), cmd.Dir)
	unguard := instrument.Guard(cmd)
	defer unguard()
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		s.engineFailed(err)
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

	coverTick := time.NewTicker(externalCoverEvery)
	defer coverTick.Stop()
	var deadline <-chan time.Time
	if o.FuzzTime > 0 {
		t := time.NewTimer(o.FuzzTime - time.Since(s.started))
		defer t.Stop()
		deadline = t.C
	}
	run := x.newRun()
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
		s.execsBase = base + run.executions()
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
			// The stats go out with the engine's progress lines, so that the
			// rate is over the executions between two of them.
			if run.line(line) {
				s.mu.Lock()
				s.execsBase = base + run.executions()
				s.mu.Unlock()
				if st := s.emitStats(); o.FuzzExecs > 0 && st.Execs >= o.FuzzExecs {
					return end(outFinished, false)
				}
			}
		case err := <-exited:
			s.mu.Lock()
			s.execsBase = base + run.executions()
			s.mu.Unlock()
			x.ended(run, err, tail)
			s.emitStats()
			return outFinished, false
		}
	}
}

// engineFailed ends the session's fuzzing with err: no fault found in the
// user's code, no worker could run.
func (s *Session) engineFailed(err error) {
	fmt.Fprintf(s.e.opts.Log, "fuzzls: %s: %v\n", s.target.Name, err)
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
}

// externalCoverage replays the engine's corpus on fuzzls's build, one pass at
// a time, on a replayer of its own: the entries not replayed yet, when the
// directory has more files than at the last pass.
type externalCoverage struct {
	s     *Session
	dir   string
	read  func(dir string, types []string, log io.Writer) []string
	files int             // entries at the last pass
	seen  map[string]bool // inputs replayed
	first bool            // the initial corpus is replayed
	busy  chan struct{}   // closed when the pass running ends
	grew  chan struct{}   // a pass reached new coverage
	ctx   context.Context // ends the passes
}

// start begins a pass unless one runs or nothing is new.
func (c *externalCoverage) start() {
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
		inputs = append(inputs, c.read(c.dir, types, c.s.e.opts.Log)...)
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
func (c *externalCoverage) replay(ctx context.Context, inputs []string) bool {
	r := &replayer{s: c.s}
	defer r.close()
	grew := false
	for _, in := range inputs {
		f, ok := r.run(ctx, in)
		if ctx.Err() != nil {
			break
		}
		if !ok || f != nil {
			continue // the engine reports its failures itself
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
func (c *externalCoverage) stop() {
	if c.busy != nil {
		<-c.busy
	}
}

// replayFailure is the failure input is on fuzzls's build, nil when it passes
// or could not run.
func (s *Session) replayFailure(input string) *failure.Failure {
	ctx, cancel := s.stopContext(context.WithTimeout(context.Background(), verifyTime))
	defer cancel()
	r := &replayer{s: s}
	defer r.close()
	if f, ok := r.run(ctx, input); ok {
		return f
	}
	return nil
}
