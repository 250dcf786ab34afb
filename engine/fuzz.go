package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"fuzzls.dev/fuzzls/engine/failure"
	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/instrument"
	"fuzzls.dev/fuzzls/protocol"
)

// workerEvent is a message from, or the death of, one of the session's workers.
type workerEvent struct {
	w    *workerProc
	msg  *fuzzrt.Message
	died bool
}

// maxInputLen bounds the []byte and string values mutation makes, unless the
// initial corpus holds longer ones: then the longest is the bound (see
// fuzzrt.FuzzArgs.MaxLen).
const maxInputLen = 4096

// fuzz runs the session's workers until Stop, Rebuild, the budget, or (without
// KeepFuzzing) the first failure. It owns the workers: it starts, restarts and kills
// them, and it alone writes to them. The workers are gone when it returns.
func (s *Session) fuzz() outcome {
	allot := s.e.sched.join(s)
	defer s.e.sched.leave(s)
	// What the last phase's workers did not answer of the sync directory's entries.
	s.sync.requeue()
	s.mu.Lock()
	p := &fuzzPhase{s: s, o: s.e.opts, bin: s.bin, events: make(chan workerEvent, 256), lastCovered: -1}
	if s.started.IsZero() {
		s.started = time.Now()
	}
	s.quiet, s.quietExecs, s.plateaued = 0, s.execsLocked(), false
	s.mu.Unlock()
	defer p.stopAll()
	out := p.loop(allot)
	if err := p.failure(); err != nil {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
	}
	return out
}

// failure is why the phase ended with no worker running when workers could
// not be started (a full disk, a binary that cannot run) or died before
// running an input: a failure of fuzzls or the machine, no finding; nil
// otherwise.
func (p *fuzzPhase) failure() error {
	if p.startErr == nil || len(p.s.liveWorkers()) > 0 || !p.retry.failing() && p.startFailures < 3 {
		return nil
	}
	return fmt.Errorf("no worker could run: %w", p.startErr)
}

// fuzzPhase is one fuzzing phase of a session: the workers of one binary, from
// the session's first allotment of worker slots until the phase ends. Only the
// session's run goroutine uses it; the workers' own goroutines only send on
// events.
type fuzzPhase struct {
	s      *Session
	o      Options
	bin    *instrument.Binary
	events chan workerEvent // every worker's messages, then its death

	want          int   // workers the scheduler gives this session now
	startFailures int   // workers that could not be started at all
	startErr      error // why the last worker could not start or run (see failure)
	// retry: starts wait after a start the disk had no room for, or a worker
	// that died before running an input, longer each time (see backoff).
	retry   backoff
	fuzzing bool // the first allotment came: the state is "fuzzing"
	// loaded: a worker of the phase has run the initial corpus, so the stats
	// show the coverage it reaches (see statsDue).
	loaded bool
	// reported: the phase's first coverage was reported at once (onNew).
	reported    bool
	lastCovered int // coverage at the last CoverageEvent of a tick
	lastTick    time.Time
}

// loop waits for what the phase reacts to: Stop, Rebuild, the scheduler's
// allotments, the deadline, the sync directory's and the stats' ticks, and the
// workers' events. It returns why the phase ended.
func (p *fuzzPhase) loop(allot <-chan int) outcome {
	s, o := p.s, p.o
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var syncTick <-chan time.Time
	if o.Sync != "" {
		t := time.NewTicker(syncEvery)
		defer t.Stop()
		syncTick = t.C
	}
	var deadline <-chan time.Time
	if o.FuzzTime > 0 {
		t := time.NewTimer(o.FuzzTime - time.Since(s.started))
		defer t.Stop()
		deadline = t.C
	}
	for {
		select {
		case <-s.stopCh:
			return outStopped
		case <-s.rebuildCh:
			return outRebuild
		case n := <-allot:
			p.onAllot(n)
		case <-deadline:
			s.emitStats()
			return outFinished
		case <-syncTick:
			p.syncRun(p.syncPull())
		case <-tick.C:
			if out, end := p.onTick(); end {
				return out
			}
		case ev := <-p.events:
			if ev.died {
				if out, end := p.onDeath(ev.w); end {
					return out
				}
			} else if out, end := p.onMessage(ev.w, ev.msg); end {
				return out
			}
		}
	}
}

// onAllot starts or stops workers to match the scheduler's new allotment of n.
// The first allotment makes the state "fuzzing", with the workers running;
// observers learn it from the first stats, once a worker has run the initial
// corpus (onMessage), or at once when the phase has no worker.
func (p *fuzzPhase) onAllot(n int) {
	p.resize(n)
	if !p.fuzzing {
		p.fuzzing = true
		p.s.setState(StateFuzzing)
		if p.statsDue() {
			p.s.emitStats()
		}
	}
}

// statsDue reports whether the phase's stats may go out: not while its workers
// run the initial corpus for the first time, whose coverage (a sync
// directory's, the cache's corpus) would show as not reached yet, so that the
// first stats show where fuzzing starts.
func (p *fuzzPhase) statsDue() bool {
	return p.loaded || len(p.s.liveWorkers()) == 0
}

// onTick is the phase's once-a-second work: focus, stats and coverage events,
// corpus minimization, the execution budget, the plateau, and restarting
// missing workers. It ends the phase when the budget is spent, the plateau
// reached, the binary is gone from the cache (outRebuild), or no worker could be
// started at all.
func (p *fuzzPhase) onTick() (outcome, bool) {
	s, o := p.s, p.o
	s.broadcastFocus(s.focus.update(false, &s.cov))
	if p.plateau() {
		return outFinished, true
	}
	st := s.Stats()
	if p.statsDue() {
		st = s.emitStats()
	}
	if st.Covered != p.lastCovered {
		p.lastCovered = st.Covered
		s.e.observe(&CoverageEvent{Target: s.target})
	}
	s.corpus.save("") // what a full disk kept from being saved
	if s.corpus.minimizeDue() {
		before, after := s.corpus.minimize()
		fmt.Fprintf(o.Log, "fuzzls: %s: corpus minimized from %d to %d entries\n", s.target.Name, before, after)
	}
	if o.FuzzExecs > 0 && st.Execs >= o.FuzzExecs {
		return outFinished, true
	}
	if p.binGone() {
		fmt.Fprintf(o.Log, "fuzzls: %s: the build is gone from the cache; building again\n", s.target.Name)
		return outRebuild, true
	}
	p.fill()
	if p.want > 0 && len(s.liveWorkers()) == 0 && p.startFailures >= 3 {
		// Every restart failed: nothing more can be done with this binary.
		fmt.Fprintf(o.Log, "fuzzls: %s: no worker could be started\n", s.target.Name)
		return outFinished, true
	}
	return 0, false
}

// plateau adds the time since the last tick to the session's quiet time, if it
// had workers, and reports whether that reached Options.Plateau: then the
// session stops (its workers go back to the scheduler, so to the others).
func (p *fuzzPhase) plateau() bool {
	s, o := p.s, p.o
	now := time.Now()
	s.mu.Lock()
	if !p.lastTick.IsZero() && len(s.workers) > 0 {
		s.quiet += now.Sub(p.lastTick)
	}
	p.lastTick = now
	quiet, execs := s.quiet, s.execsLocked()-s.quietExecs
	// Ticks come a second apart, give or take: one a little early does not
	// put the stop a whole second late.
	reached := o.Plateau > 0 && quiet.Round(100*time.Millisecond) >= o.Plateau
	s.plateaued = reached
	s.mu.Unlock()
	if reached {
		fmt.Fprintf(o.Log, "fuzzls: %s: no new coverage for %v (%d execs): stopping\n", s.target.Name, quiet.Round(time.Second), execs)
	}
	return reached
}

// onDeath handles the death of w: one we killed is already accounted for; one
// recycled (a race build past the memory limit) is replaced; any other death
// is a failure of the input it was running, if it was running one, unless the
// worker was killed from outside and the input passes on replay. It ends the
// phase on a failure without KeepFuzzing.
func (p *fuzzPhase) onDeath(w *workerProc) (outcome, bool) {
	s, o := p.s, p.o
	if !s.removeWorker(w) {
		return 0, false // killed by us
	}
	s.e.sched.release()
	if w.wasRecycled() {
		fmt.Fprintf(o.Log, "fuzzls: %s: worker replaced: its resident memory passed the limit, the race detector keeping memory for every goroutine started\n", s.target.Name)
		w.release()
		p.replace()
		return 0, false
	}
	f, input := s.deathFailure(w)
	w.release()
	if input != "" && f.Kind == protocol.KindExit && f.ExitSignal && !s.confirm(f, input) {
		// Killed from outside (a signal we did not send) and the input passes
		// on replay: not the input's fault. Replace the worker, lose nothing.
		fmt.Fprintf(o.Log, "fuzzls: %s: a worker was killed from outside; restarting it\n", s.target.Name)
	} else if input != "" {
		if s.onFailure(f, input) && !o.KeepFuzzing {
			return outFinished, true
		}
	} else {
		// Its replacement would likely die the same way (a TestMain that
		// cannot write its files on a full disk): it waits, longer each time.
		p.startErr = fmt.Errorf("a worker died before running an input: %s", strings.TrimSpace(f.Output))
		fmt.Fprintf(o.Log, "fuzzls: %s: %v; starting another in %v\n", s.target.Name, p.startErr, p.retry.failed())
	}
	p.replace()
	return 0, false
}

// onMessage handles a message of w: its initial corpus run, a new corpus
// entry, the result of a sync request, or a failure it survived (or the repeats
// of one it reported). It
// ends the phase on a failure without KeepFuzzing, or on a synced input that
// fails.
func (p *fuzzPhase) onMessage(w *workerProc, m *fuzzrt.Message) (outcome, bool) {
	s := p.s
	switch {
	case m.Loaded:
		if p.retry.failing() {
			p.retry.reset()
			fmt.Fprintf(p.o.Log, "fuzzls: %s: a worker runs again; fuzzing\n", s.target.Name)
		}
		p.startErr = nil
		if !p.loaded {
			p.loaded = true
			s.emitStats()
		}
	case m.New != nil:
		p.onNew(w, m.New)
	case m.Cmps != nil:
		s.blk.merge(p.bin, m.Cmps)
	case m.Hooks != nil:
		for _, h := range s.hooks.merge(p.bin, m.Hooks) {
			fmt.Fprintf(p.o.Log, "fuzzls: %s: %s %s: %s\n", s.target.Name, h.Kind, h.Name, problemLine(h.Problem))
		}
	case m.Result != nil:
		if p.syncResult(m.Result) {
			return outFinished, true
		}
	case m.Crash != nil && m.Crash.Repeat > 0:
		s.failures.repeat(m.Crash.Output, m.Crash.Repeat)
	case m.Crash != nil:
		f := failure.ClassifyOutput(m.Crash.Output, s.userFrames(), s.target.Dir)
		if s.onFailure(f, m.Crash.Input) && !p.o.KeepFuzzing {
			return outFinished, true
		}
	}
	return 0, false
}

// binGone reports whether the phase's binary is gone: the user may clear the
// cache, and no worker can start until it is built again.
func (p *fuzzPhase) binGone() bool {
	_, err := os.Stat(p.bin.Path)
	return errors.Is(err, fs.ErrNotExist)
}

// resize starts or stops workers to match an allotment of n.
func (p *fuzzPhase) resize(n int) {
	s := p.s
	p.want = n
	for len(s.liveWorkers()) < n {
		if p.start() == nil {
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
	p.stopWorkers(extra)
}

// fill starts workers until the allotment is met or one fails to start.
func (p *fuzzPhase) fill() {
	for len(p.s.liveWorkers()) < p.want && p.start() != nil {
	}
}

// replace starts one worker in place of one that died, if the allotment is
// short of one.
func (p *fuzzPhase) replace() {
	if len(p.s.liveWorkers()) < p.want {
		p.start()
	}
}

// start starts a worker on one of the scheduler's tokens and hands it the work
// (handOver); nil if the binary is gone, there is no token, the last try is
// too recent (p.retry), the disk is full (said once, tried again less and less
// often until there is room), or three attempts failed (counted in
// startFailures). The token goes back unless a worker holds it.
func (p *fuzzPhase) start() *workerProc {
	s, o := p.s, p.o
	if !p.retry.due() || p.binGone() || !s.e.sched.acquire() {
		return nil
	}
	for attempt := 0; attempt < 3; attempt++ {
		w, err := startWorker(p.bin, s.target.Name, o, hangWatch{limit: &s.hang, onSlow: s.onSlow})
		if diskFull(err) {
			// A full disk is no fault of the binary: said once, tried again
			// less and less often until there is room.
			if !p.retry.failing() {
				fmt.Fprintf(o.Log, "fuzzls: %s: no room to start a worker: the file system of %s is full (%v); trying again in %v, then less and less often (every %v at most); fuzzing starts when there is room\n",
					s.target.Name, s.fullWhere(err), err, retryFirst, retryMax)
			}
			p.retry.failed()
			p.startErr = err
			s.e.sched.release()
			return nil
		}
		if err != nil {
			p.startErr = err
			fmt.Fprintf(o.Log, "fuzzls: %s: starting worker: %v\n", s.target.Name, err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		p.handOver(w)
		return w
	}
	s.e.sched.release()
	p.startFailures++
	return nil
}

// handOver makes a started worker one of the session's: its messages and then
// its death go to events, what it ran before its first input counts as
// covered, and it gets the corpus (one entry a message: a corpus may hold
// hundreds of MB), then the fuzzing arguments and the current focus.
func (p *fuzzPhase) handOver(w *workerProc) {
	s := p.s
	go func() {
		for m := range w.msgs {
			p.events <- workerEvent{w: w, msg: m}
		}
		<-w.done
		p.events <- workerEvent{w: w, died: true}
	}()
	s.cov.mergeBaseline(w.hello.Baseline)
	s.mu.Lock()
	args := &fuzzrt.FuzzArgs{Types: s.types, Seed: rand.Uint64(), MaxLen: maxInputLen}
	if p.o.Seed != 0 {
		args.Seed = p.o.Seed + s.seeded
		s.seeded++
	}
	for _, d := range s.dict {
		args.Dict = append(args.Dict, []byte(d))
	}
	corpus := s.corpus.list()
	s.workers = append(s.workers, w)
	focus := s.focus.frontier(&s.cov)
	s.mu.Unlock()
	w.setBusy(true)
	for _, en := range corpus {
		if w.send(&fuzzrt.Request{Load: &fuzzrt.Entry{Input: en.input}}) != nil {
			break // the worker is gone; its death is an event
		}
	}
	w.send(&fuzzrt.Request{Fuzz: args})
	if focus != nil {
		w.send(&fuzzrt.Request{Focus: focus})
	}
}

// stopWorkers kills ws (no longer the session's), counts their executions, and
// gives their tokens back. Their deaths, coming as events, are not failures.
func (p *fuzzPhase) stopWorkers(ws []*workerProc) {
	s := p.s
	for _, w := range ws {
		w.kill()
		s.mu.Lock()
		s.execsBase += int64(w.mem.Execs())
		s.mu.Unlock()
		w.release()
		s.e.sched.release()
	}
}

// stopAll stops every worker of the session: the phase is over.
func (p *fuzzPhase) stopAll() {
	s := p.s
	s.mu.Lock()
	ws := s.workers
	s.workers = nil
	s.mu.Unlock()
	p.stopWorkers(ws)
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
func (s *Session) deathFailure(w *workerProc) (*failure.Failure, string) {
	w.mu.Lock()
	d := failure.Death{Stderr: w.stderr.String(), Hung: w.hung, HangAt: w.hangAt, OOM: w.oom, ExitCode: -1}
	if ps := w.cmd.ProcessState; ps != nil {
		d.ExitCode = ps.ExitCode()
	}
	w.mu.Unlock()
	d.ExitSite = string(w.mem.ExitSite())
	f := failure.ClassifyDeath(d, s.userFrames(), s.target.Name+".func")
	if w.mem.Execs() == 0 {
		return f, ""
	}
	return f, w.runningInput()
}

// onNew merges an entry's coverage; entries that add to the session's coverage join
// the corpus (saved to the cache, published in the sync directory) and go to
// the other workers.
func (p *fuzzPhase) onNew(from *workerProc, en *fuzzrt.Entry) {
	s := p.s
	added, changed := s.cov.merge(en.Cov)
	if !added {
		return
	}
	s.corpus.add(en.Input, en.Cov)
	s.mu.Lock()
	s.quiet, s.quietExecs = 0, s.execsLocked()
	others := make([]*workerProc, 0, len(s.workers))
	for _, w := range s.workers {
		if w != from {
			others = append(others, w)
		}
	}
	s.mu.Unlock()
	first := !p.reported
	p.reported = true
	if changed {
		s.broadcastFocus(s.focus.update(true, &s.cov))
	}
	if first { // the new build's first coverage: no need to wait for the tick
		s.e.observe(&CoverageEvent{Target: s.target})
	}
	s.corpus.save(en.Input)
	s.sync.publish(en.Input)
	for _, w := range others {
		w.post(&fuzzrt.Request{Add: en})
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
