package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
)

// workerEvent is a message from, or the death of, one of the session's workers.
type workerEvent struct {
	w    *workerProc
	msg  *fuzzrt.Message
	died bool
}

const maxInputLen = 4096

// fuzz runs the session's workers until Stop, Rebuild, the budget, or (without
// KeepFuzzing) the first failure. It owns the workers: it starts, restarts and kills
// them, and it alone writes to them.
func (s *Session) fuzz() outcome {
	e := s.e
	o := e.opts
	events := make(chan workerEvent, 256)
	allot := e.sched.join(s)
	defer e.sched.leave(s)
	want := 0          // workers the scheduler gives this session now
	startFailures := 0 // workers that could not be started at all
	s.mu.Lock()
	bin := s.bin
	if s.started.IsZero() {
		s.started = time.Now()
	}
	s.mu.Unlock()

	start := func() *workerProc {
		if !e.sched.acquire() {
			return nil
		}
		for attempt := 0; attempt < 3; attempt++ {
			w, err := startWorker(bin, s.target.Name, o, &s.hang)
			if err != nil {
				fmt.Fprintf(o.Log, "fuzzls: %s: starting worker: %v\n", s.target.Name, err)
				time.Sleep(100 * time.Millisecond)
				continue
			}
			go func() {
				for m := range w.msgs {
					events <- workerEvent{w: w, msg: m}
				}
				<-w.done
				events <- workerEvent{w: w, died: true}
			}()
			s.mergeBaseline(w.hello.Baseline)
			s.mu.Lock()
			args := &fuzzrt.FuzzArgs{Types: s.types, Seed: rand.Uint64(), MaxLen: maxInputLen}
			for _, d := range s.dict {
				args.Dict = append(args.Dict, []byte(d))
			}
			for _, en := range s.corpus {
				args.Corpus = append(args.Corpus, fuzzrt.Entry{Input: en.input})
			}
			s.workers = append(s.workers, w)
			s.mu.Unlock()
			w.setBusy(true)
			w.send(&fuzzrt.Request{Fuzz: args})
			return w
		}
		e.sched.release()
		startFailures++
		return nil
	}
	stopWorkers := func(ws []*workerProc) {
		for _, w := range ws {
			w.kill()
			s.mu.Lock()
			s.execsBase += int64(w.mem.Execs())
			s.mu.Unlock()
			w.release()
			e.sched.release()
		}
	}
	stopAll := func() {
		s.mu.Lock()
		ws := s.workers
		s.workers = nil
		s.mu.Unlock()
		stopWorkers(ws)
	}
	defer stopAll()
	// resize starts or stops workers to match the allotment.
	resize := func(n int) {
		want = n
		for len(s.liveWorkers()) < n {
			if start() == nil {
				break
			}
		}
		s.mu.Lock()
		var extra []*workerProc
		if len(s.workers) > n {
			extra = append(extra, s.workers[n:]...)
			s.workers = s.workers[:n]
		}
		s.mu.Unlock()
		stopWorkers(extra)
	}

	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	lastCovered := -1
	var deadline <-chan time.Time
	if o.FuzzTime > 0 {
		t := time.NewTimer(o.FuzzTime - time.Since(s.started))
		defer t.Stop()
		deadline = t.C
	}
	s.mu.Lock()
	s.reported = false
	s.mu.Unlock()
	fuzzing := false
	for {
		select {
		case <-s.stopCh:
			return outStopped
		case <-s.rebuildCh:
			return outRebuild
		case n := <-allot:
			resize(n)
			if !fuzzing {
				// Observers learn at once that fuzzing started, with the workers
				// running, not at the first tick.
				fuzzing = true
				s.setState("fuzzing")
				s.emitStats()
			}
		case <-deadline:
			s.emitStats()
			return outFinished
		case <-tick.C:
			st := s.emitStats()
			if st.Covered != lastCovered {
				lastCovered = st.Covered
				e.observe(&CoverageEvent{Target: s.target})
			}
			if st.Corpus >= s.cminThreshold() {
				before, after := s.minimizeCorpus()
				fmt.Fprintf(o.Log, "fuzzls: %s: corpus minimized from %d to %d entries\n", s.target.Name, before, after)
			}
			if o.FuzzExecs > 0 && st.Execs >= o.FuzzExecs {
				return outFinished
			}
			for len(s.liveWorkers()) < want && start() != nil {
			}
			if want > 0 && len(s.liveWorkers()) == 0 && startFailures >= 3 {
				// Every restart failed: nothing more can be done with this binary.
				fmt.Fprintf(o.Log, "fuzzls: %s: no worker could be started\n", s.target.Name)
				return outFinished
			}
		case ev := <-events:
			if ev.died {
				if !s.removeWorker(ev.w) {
					continue // killed by us
				}
				e.sched.release()
				f, input := s.deathFailure(ev.w)
				ev.w.release()
				if input != "" && f.kind == KindExit && f.exitSignal && !s.confirm(f, input) {
					// Killed from outside (a signal we did not send) and the input passes
					// on replay: not the input's fault. Replace the worker, lose nothing.
					fmt.Fprintf(o.Log, "fuzzls: %s: a worker was killed from outside; restarting it\n", s.target.Name)
					input = ""
				} else if input != "" {
					if s.onFailure(f, input) && !o.KeepFuzzing {
						return outFinished
					}
				} else if f.output != "" {
					fmt.Fprintf(o.Log, "fuzzls: %s: worker died before running an input: %s\n", s.target.Name, f.output)
				}
				if len(s.liveWorkers()) < want {
					start()
				}
				continue
			}
			switch m := ev.msg; {
			case m.New != nil:
				s.onNew(ev.w, m.New)
			case m.Crash != nil && m.Crash.Repeat > 0:
				s.mu.Lock()
				if c := s.byKey[m.Crash.Output]; c != nil {
					c.Count += m.Crash.Repeat
				}
				s.mu.Unlock()
			case m.Crash != nil:
				f := classifyOutput(m.Crash.Output, s.userFrames(), s.target.Dir)
				if s.onFailure(f, m.Crash.Input) && !o.KeepFuzzing {
					return outFinished
				}
			}
		}
	}
}

func (s *Session) cminThreshold() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cminAt
}

func (s *Session) liveWorkers() []*workerProc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*workerProc(nil), s.workers...)
}

// removeWorker forgets a dead worker and reports whether it died on its own.
func (s *Session) removeWorker(w *workerProc) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.workers {
		if x == w {
			s.workers = append(s.workers[:i], s.workers[i+1:]...)
			s.execsBase += int64(w.mem.Execs())
			w.mu.Lock()
			killed := w.killed
			w.mu.Unlock()
			return !killed
		}
	}
	return false
}

// deathFailure classifies a worker's death and recovers the input it was running
// from shared memory.
func (s *Session) deathFailure(w *workerProc) (*failure, string) {
	w.mu.Lock()
	d := death{stderr: w.stderr.String(), hung: w.hung, hangAt: w.hangAt, oom: w.oom, exitCode: -1}
	if ps := w.cmd.ProcessState; ps != nil {
		d.exitCode = ps.ExitCode()
	}
	w.mu.Unlock()
	d.exitSite = string(w.mem.ExitSite())
	f := classifyDeath(d, s.userFrames(), s.target.Name+".func")
	if w.mem.Execs() == 0 {
		return f, ""
	}
	enc, complete := w.mem.Input()
	vals, err := fuzzrt.DecodeValues(enc)
	if err != nil || !complete {
		return f, ""
	}
	return f, string(fuzzrt.Marshal(vals))
}

// mergeBaseline counts as covered what a worker ran before its first input.
func (s *Session) mergeBaseline(cov []uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cov {
		if i := int(c >> 8); i < len(s.blocks) && s.global[i] == 0 {
			s.global[i] = uint8(c)
			s.covered++
		}
	}
}

// onNew merges an entry's coverage; entries that add to the session's coverage join
// the corpus (saved to the cache) and go to the other workers.
func (s *Session) onNew(from *workerProc, en *fuzzrt.Entry) {
	s.mu.Lock()
	added := false
	for _, c := range en.Cov {
		i := int(c >> 8)
		if i >= len(s.global) {
			continue
		}
		if b := uint8(c); b&^s.global[i] != 0 {
			if s.global[i] == 0 && i < len(s.blocks) { // past the blocks: comparison sites
				s.covered++
			}
			s.global[i] |= b
			added = true
		}
	}
	if !added {
		s.mu.Unlock()
		return
	}
	if !s.inCorpus[en.Input] {
		s.inCorpus[en.Input] = true
		s.corpus = append(s.corpus, entry{input: en.Input, cov: en.Cov})
	} else {
		for i := range s.corpus {
			if s.corpus[i].input == en.Input {
				s.corpus[i].cov = en.Cov
			}
		}
	}
	others := make([]*workerProc, 0, len(s.workers))
	for _, w := range s.workers {
		if w != from {
			others = append(others, w)
		}
	}
	first := !s.reported
	s.reported = true
	s.mu.Unlock()
	if first { // the new build's first coverage: no need to wait for the tick
		s.e.observe(&CoverageEvent{Target: s.target})
	}
	if _, err := writeEntry(corpusDir(s.e.opts.CacheDir, s.target), en.Input); err != nil {
		fmt.Fprintf(s.e.opts.Log, "fuzzls: saving corpus entry: %v\n", err)
	}
	for _, w := range others {
		w.send(&fuzzrt.Request{Add: en})
	}
}

// onFailure records a failure. A new distinct one is saved, reported, and
// minimized; a repeat bumps its count. It returns whether the failure was new.
func (s *Session) onFailure(f *failure, input string) bool {
	key := fuzzrt.FailureKey(f.output)
	s.mu.Lock()
	// An input that fails stays out of the corpus: workers re-run the corpus when
	// they start, and one that kills them would kill every replacement too.
	for i, en := range s.corpus {
		if en.input == input {
			s.corpus = append(s.corpus[:i], s.corpus[i+1:]...)
			break
		}
	}
	s.inCorpus[input] = true
	for _, c := range s.crashes {
		if s.firsts[c].same(f) {
			c.Count++
			s.byKey[key] = c
			s.mu.Unlock()
			return false
		}
	}
	moduleDir := s.target.Dir
	if s.pkg != nil {
		moduleDir = s.pkg.ModuleDir
	}
	c := &Crash{ID: crashID(s.target, f, moduleDir), Target: s.target, Kind: f.kind, Message: f.message,
		File: f.file, Line: f.line, Frames: f.frames, Output: f.output, Input: input, Count: 1}
	s.firsts[c] = f
	s.byKey[key] = c
	s.crashes = append(s.crashes, c)
	s.mu.Unlock()
	path, err := writeEntry(crashDir(s.e.opts.CacheDir, s.target), input)
	if err != nil {
		fmt.Fprintf(s.e.opts.Log, "fuzzls: saving failing input: %v\n", err)
	}
	s.mu.Lock()
	c.Path = path
	cc := *c
	s.mu.Unlock()
	s.e.observe(&CrashEvent{Crash: &cc})
	if s.e.opts.KeepFuzzing {
		s.background.Go(func() { s.minimizeCrash(c, f) })
	} else {
		s.minimizeCrash(c, f)
	}
	return true
}

// minimizeCrash shrinks a crash's input on a worker of its own, keeping it the same
// failure as first, within MinimizeTime.
func (s *Session) minimizeCrash(c *Crash, first *failure) {
	o := s.e.opts
	s.mu.Lock()
	input := c.Input
	s.mu.Unlock()
	vals, err := fuzzrt.Unmarshal([]byte(input))
	if err != nil {
		return
	}
	ctx, cancel := s.stopContext(context.WithTimeout(context.Background(), o.MinimizeTime))
	defer cancel()
	r := &replayer{s: s}
	defer r.close()
	fails := func(cand []any) bool {
		f, ok := r.run(ctx, string(fuzzrt.Marshal(cand)))
		return ok && first.same(f)
	}
	// An input that does not fail again on a fresh worker is flaky: reported as
	// such, with the input as found, rather than minimized against noise.
	if !fails(vals) && ctx.Err() == nil && !fails(vals) && ctx.Err() == nil {
		s.mu.Lock()
		c.Flaky = true
		cc := *c
		s.mu.Unlock()
		s.e.observe(&CrashEvent{Crash: &cc})
		return
	}
	min := minimize(ctx, vals, fails)
	minInput := string(fuzzrt.Marshal(min))
	path, err := writeEntry(crashDir(o.CacheDir, s.target), minInput)
	if err != nil {
		fmt.Fprintf(o.Log, "fuzzls: saving minimized input: %v\n", err)
	}
	s.mu.Lock()
	c.Input, c.Minimized = minInput, true
	if path != "" {
		c.Path = path
	}
	cc := *c
	s.mu.Unlock()
	s.e.observe(&CrashEvent{Crash: &cc})
}

// confirm replays a failing input once and reports whether it fails the same way.
func (s *Session) confirm(f *failure, input string) bool {
	r := &replayer{s: s}
	defer r.close()
	g, ok := r.run(context.Background(), input)
	return ok && f.same(g)
}

// recheckCrashes replays each known crash on a new binary: those that pass now are
// reported fixed and forgotten.
func (s *Session) recheckCrashes() {
	s.mu.Lock()
	crashes := append([]*Crash(nil), s.crashes...)
	s.mu.Unlock()
	if len(crashes) == 0 {
		return
	}
	r := &replayer{s: s}
	defer r.close()
	for _, c := range crashes {
		f, ok := r.run(context.Background(), c.Input)
		if !ok || f != nil {
			continue
		}
		s.mu.Lock()
		for i, x := range s.crashes {
			if x == c {
				s.crashes = append(s.crashes[:i], s.crashes[i+1:]...)
				break
			}
		}
		delete(s.firsts, c)
		for k, x := range s.byKey {
			if x == c {
				delete(s.byKey, k)
			}
		}
		cc := *c
		s.mu.Unlock()
		s.e.observe(&CrashFixedEvent{Crash: &cc})
	}
}

// replayer runs single inputs on a worker of its own, restarting it after each
// input that kills it.
type replayer struct {
	s       *Session
	w       *workerProc
	id      int64
	lastCov []uint32 // coverage of the last input that ran to completion
}

// run executes input once. It returns the failure (nil when the input passed) and
// whether the run happened at all.
func (r *replayer) run(ctx context.Context, input string) (*failure, bool) {
	s := r.s
	o := s.e.opts
	if r.w == nil {
		s.mu.Lock()
		bin := s.bin
		s.mu.Unlock()
		w, err := startWorker(bin, s.target.Name, o, &s.hang)
		if err != nil {
			return nil, false
		}
		r.w = w
	}
	w := r.w
	r.id++
	w.setBusy(true)
	if err := w.send(&fuzzrt.Request{Exec: &fuzzrt.ExecArgs{ID: r.id, Input: input}}); err != nil {
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
				return f, true
			}
			if m.Result == nil || m.Result.ID != r.id {
				continue
			}
			w.setBusy(false)
			r.lastCov = m.Result.Cov
			if m.Result.Output == "" {
				return nil, true
			}
			if strings.HasPrefix(m.Result.Output, "fuzzls: bad input") {
				return nil, false
			}
			return classifyOutput(m.Result.Output, s.userFrames(), s.target.Dir), true
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

// emitStats updates the rate and reports a StatsEvent.
func (s *Session) emitStats() Stats {
	s.mu.Lock()
	s.rate.update(s.execsLocked(), time.Now())
	st := s.statsLocked()
	s.mu.Unlock()
	s.e.observe(&StatsEvent{Stats: st})
	return st
}
