package engine

// A failure's life in a session: told apart from the ones already reported,
// saved, checked for flakiness and minimized on a worker of its own, and replayed
// on each new build until it passes.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"fuzzls.dev/fuzzls/engine/failure"
	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/protocol"
)

// onFailure records a failure. A new distinct one is saved, reported, and
// minimized; a repeat bumps its count. It returns whether the failure was new.
func (s *Session) onFailure(f *failure.Failure, input string) bool {
	s.corpus.drop(input)
	moduleDir, layout := s.moduleDir(), s.layout()
	c, isNew := s.failures.record(f, fuzzrt.FailureKey(f.Output), input, func() *Crash {
		return &Crash{ID: f.ID(s.target.ID(), moduleDir), Target: s.target, Kind: f.Kind, Message: f.Message,
			File: f.File, Line: f.Line, Frames: f.Frames, Output: f.Output, Input: string(fuzzrt.WithLayout([]byte(input), layout)), Count: 1,
			BuildFlags: s.e.opts.Build.Args(), Layout: layout}
	})
	if !isNew {
		return false
	}
	s.saveInput(c, crashDir(s.e.opts.CacheDir, s.target), input, "failing input")
	s.sync.publishFailure(c.ID, input)
	if s.e.opts.ReplaySeeds != nil { // the user's seed, as go test -run runs it: go test's verdict
		s.report(c, func(c *Crash) { c.Replayed, c.Verified = true, true })
		return true
	}
	s.report(c, nil)
	if s.e.opts.KeepFuzzing {
		s.background.Go(func() { s.minimizeCrash(c, f) })
	} else {
		s.minimizeCrash(c, f)
	}
	return true
}

// minimizeCrash shrinks a crash's input on a worker of its own, keeping it the same
// failure as first, within MinimizeTime.
func (s *Session) minimizeCrash(c *Crash, first *failure.Failure) {
	o := s.e.opts
	input := s.failures.update(c, nil).Input
	vals, err := fuzzrt.Unmarshal([]byte(input))
	if err != nil {
		return
	}
	// A failure fails a run only once its input has failed again, the same
	// way, on a fresh worker, as go test's replay runs it (a hang at go test's
	// bound). One that does not is flaky, reported as such with the input as
	// found rather than minimized against noise; one that could not be
	// replayed at all is neither.
	failed, ran := s.verify(first, input)
	if !failed {
		if !ran {
			fmt.Fprintf(o.Log, "fuzzls: %s: failure %s could not be replayed to check it: not counted\n", s.target.Name, c.ID)
		}
		s.report(c, func(c *Crash) { c.Flaky = ran })
		return
	}
	s.failures.update(c, func(c *Crash) { c.Verified = true })
	ctx, cancel := s.stopContext(context.WithTimeout(context.Background(), o.MinimizeTime))
	defer cancel()
	r := &replayer{s: s, quick: first.Kind == protocol.KindHang}
	defer r.close()
	fails := func(cand []any) bool {
		f, ok := r.run(ctx, string(fuzzrt.Marshal(cand)))
		return ok && first.Same(f)
	}
	min := minimize(ctx, vals, fails)
	minInput := string(fuzzrt.Marshal(min))
	if minInput != input && !s.confirm(first, minInput) {
		// The minimizer's worker ran every candidate, one after the other; the
		// reported input must fail on a fresh one too (and a hang at go test's
		// bound, not only past the quick replays' limit), or the input as found,
		// checked above, is reported.
		min, minInput = vals, input
	}
	saved := string(fuzzrt.WithLayout([]byte(minInput), c.Layout))
	path, err := WriteCorpusFile(crashDir(o.CacheDir, s.target), saved)
	if err != nil {
		fmt.Fprintf(o.Log, "fuzzls: saving minimized input: %v\n", err)
	}
	s.sync.publishFailure(c.ID, minInput)
	s.report(c, func(c *Crash) {
		c.Input, c.Minimized = saved, true
		if path != "" {
			c.Path = path
		}
	})
}

// confirm replays a failing input once and reports whether it fails the same
// way (a hang: still running at go test's bound).
func (s *Session) confirm(f *failure.Failure, input string) bool {
	ctx, cancel := s.stopContext(context.WithCancel(context.Background()))
	defer cancel()
	failed, _ := s.replayFails(ctx, f, input, 1)
	return failed
}

// verifyTime bounds verify: two replays of a hang at go test's bound, and the
// workers' starts.
const verifyTime = 3 * hangCap

// verify replays a new failure's input up to twice, each on a fresh worker,
// and reports whether it failed the same way again, and whether a replay ran
// at all. A headless run finishes the check even when the session is stopped
// (a CI budget spent just after the failure): what fails the run is checked.
func (s *Session) verify(f *failure.Failure, input string) (failed, ran bool) {
	ctx, cancel := context.WithTimeout(context.Background(), verifyTime)
	if s.e.opts.Persistent {
		ctx, cancel = s.stopContext(ctx, cancel)
	}
	defer cancel()
	return s.replayFails(ctx, f, input, 2)
}

// replayFails runs input up to tries times, each on a fresh worker, at go
// test's bound for a hang, until it fails the way f did: it reports whether
// it did, and whether a run happened at all.
func (s *Session) replayFails(ctx context.Context, f *failure.Failure, input string, tries int) (failed, ran bool) {
	for range tries {
		r := &replayer{s: s}
		g, ok := r.run(ctx, input)
		r.close()
		ran = ran || ok
		if ok && f.Same(g) {
			return true, true
		}
	}
	return false, ran
}

// onSlow records an input that ran past the adaptive hang limit and then
// finished (see hangWatch): not a failure, a warning. The session keeps the
// first until its next build, counting the others.
func (s *Session) onSlow(input string, took time.Duration) {
	moduleDir := s.moduleDir()
	c, isNew := s.failures.slowInput(func() *Crash {
		return &Crash{ID: (&failure.Failure{Kind: protocol.KindSlow}).ID(s.target.ID(), moduleDir), Target: s.target, Kind: protocol.KindSlow,
			Message: fmt.Sprintf("slow input: it ran %v, but finished (a hang is an input still running after %v)", took.Round(time.Millisecond), hangCap),
			File:    s.target.File, Line: s.target.Line, Input: input, Count: 1}
	})
	if !isNew {
		return
	}
	s.saveInput(c, slowDir(s.e.opts.CacheDir, s.target), input, "slow input")
	s.report(c, nil)
}

// moduleDir is the target's module directory.
func (s *Session) moduleDir() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pkg != nil {
		return s.pkg.ModuleDir
	}
	return s.target.Dir
}

// layout is the layout of the target's build when it is fuzzed field by
// field, else empty.
func (s *Session) layout() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seeds == nil {
		return ""
	}
	return s.seeds.layout
}

// saveInput saves a new crash's input (what it is, for the log) in dir and
// records where.
func (s *Session) saveInput(c *Crash, dir, input, what string) {
	path, err := WriteCorpusFile(dir, string(fuzzrt.WithLayout([]byte(input), s.layout())))
	if err != nil {
		fmt.Fprintf(s.e.opts.Log, "fuzzls: saving %s: %v\n", what, err)
	}
	s.failures.update(c, func(c *Crash) { c.Path = path })
}

// report changes c (change may be nil) and sends a CrashEvent with a copy.
func (s *Session) report(c *Crash, change func(c *Crash)) {
	s.e.observe(&CrashEvent{Crash: s.failures.update(c, change)})
}

// recheckCrashes replays each known crash on a new binary: those that pass now are
// reported fixed and forgotten.
func (s *Session) recheckCrashes() {
	crashes := s.failures.list()
	if len(crashes) == 0 {
		return
	}
	r := &replayer{s: s}
	defer r.close()
	for _, c := range crashes {
		f, ok := r.run(context.Background(), s.failures.update(c, nil).Input)
		if !ok || f != nil {
			continue
		}
		s.failures.fixed(c)
		s.e.observe(&CrashFixedEvent{Crash: s.failures.update(c, nil)})
	}
}

// replayer runs single inputs on a worker of its own, restarting it after each
// input that kills it.
type replayer struct {
	s *Session
	// quick: an execution past the adaptive hang limit is a hang, not confirmed
	// at go test's bound (see hangWatch), for minimizing a hang already confirmed.
	quick   bool
	w       *workerProc
	id      int64
	lastCov []uint32 // coverage of the last input that ran to completion
	// solve, when set, makes each run a search from its input (SolveArgs),
	// whose answer is solved.
	solve  *fuzzrt.SolveArgs
	solved string
}

// run executes input once. It returns the failure (nil when the input passed) and
// whether the run happened at all.
func (r *replayer) run(ctx context.Context, input string) (*failure.Failure, bool) {
	s := r.s
	o := s.e.opts
	if r.w == nil {
		s.mu.Lock()
		bin := s.bin
		s.mu.Unlock()
		w, err := startWorker(bin, s.target.Name, o, hangWatch{limit: &s.hang, quick: r.quick})
		if err != nil {
			return nil, false
		}
		r.w = w
	}
	w := r.w
	r.id++
	w.setBusy(true)
	r.solved = ""
	if err := w.send(&fuzzrt.Request{Exec: &fuzzrt.ExecArgs{ID: r.id, Input: input, Solve: r.solve}}); err != nil {
		r.close()
		return nil, false
	}
	for {
		select {
		case <-ctx.Done():
			r.close()
			return nil, false
		case m, ok := <-w.msgs:
			if !ok {
				<-w.done
				f, _ := s.deathFailure(w)
				w.release()
				r.w = nil
				if w.wasRecycled() {
					return nil, false
				}
				return f, true
			}
			if m.Result == nil || m.Result.ID != r.id {
				continue
			}
			w.setBusy(false)
			r.lastCov, r.solved = m.Result.Cov, m.Result.Solved
			if m.Result.Output == "" {
				return nil, true
			}
			if strings.HasPrefix(m.Result.Output, "fuzzls: bad input") {
				return nil, false
			}
			return failure.ClassifyOutput(m.Result.Output, s.userFrames(), s.target.Dir), true
		}
	}
}

func (r *replayer) close() {
	if r.w != nil {
		r.w.kill()
		r.w.release()
		r.w = nil
	}
}

// replaySeeds runs the seeds Options.ReplaySeeds names (see there).
func (s *Session) replaySeeds() {
	re := s.e.opts.ReplaySeeds
	s.mu.Lock()
	var inputs []string
	for i, name := range s.seeds.names {
		if re.MatchString(name) {
			inputs = append(inputs, s.seeds.inputs[i])
		}
	}
	s.mu.Unlock()
	if len(inputs) == 0 {
		fmt.Fprintf(s.e.opts.Log, "fuzzls: %s: warning: no seed matches %q (f.Add's are seed#0, seed#1…; testdata/fuzz/%s's by their file names)\n", s.target.Name, re, s.target.Name)
		return
	}
	s.replay(inputs, "a seed")
	s.mu.Lock()
	s.execsBase += int64(len(inputs))
	s.mu.Unlock()
}

// replay runs inputs one at a time on a worker of its own: each that fails is a
// failure found here (onFailure). what names the inputs for the log.
func (s *Session) replay(inputs []string, what string) {
	ctx, cancel := s.stopContext(context.WithCancel(context.Background()))
	defer cancel()
	r := &replayer{s: s}
	defer r.close()
	missed := 0
	for _, in := range inputs {
		f, ok := r.run(ctx, in)
		switch {
		case ctx.Err() != nil:
			return
		case !ok:
			missed++
		case f != nil:
			s.onFailure(f, in)
		}
	}
	if missed > 0 { // no fault of the user's code, and no verdict either
		s.mu.Lock()
		s.err = fmt.Errorf("%s could not be replayed (%d of %d): no worker could run it", what, missed, len(inputs))
		s.mu.Unlock()
	}
}
