package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"syscall"
	"time"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
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
// them, and it alone writes to them.
func (s *Session) fuzz() outcome {
	e := s.e
	o := e.opts
	events := make(chan workerEvent, 256)
	allot := e.sched.join(s)
	defer e.sched.leave(s)
	// What the last phase's workers did not answer of the sync directory's entries.
	s.syncRequeue()
	want := 0          // workers the scheduler gives this session now
	startFailures := 0 // workers that could not be started at all
	diskFull := false  // the last start failed for want of disk space
	s.mu.Lock()
	bin := s.bin
	if s.started.IsZero() {
		s.started = time.Now()
	}
	s.mu.Unlock()

	// The user may clear the cache: no worker can start until it is built again.
	binGone := func() bool {
		_, err := os.Stat(bin.Path)
		return errors.Is(err, fs.ErrNotExist)
	}
	start := func() *workerProc {
		if binGone() || !e.sched.acquire() {
			return nil
		}
		for attempt := 0; attempt < 3; attempt++ {
			w, err := startWorker(bin, s.target.Name, o, hangWatch{limit: &s.hang, onSlow: s.onSlow})
			if errors.Is(err, syscall.ENOSPC) {
				// A full disk is no fault of the binary: said once, tried again
				// every tick until there is room.
				if !diskFull {
					diskFull = true
					fmt.Fprintf(o.Log, "fuzzls: %s: the disk of the cache directory %s is full: %v; fuzzing resumes when there is room\n", s.target.Name, o.CacheDir, err)
				}
				e.sched.release()
				return nil
			}
			if err != nil {
				fmt.Fprintf(o.Log, "fuzzls: %s: starting worker: %v\n", s.target.Name, err)
				time.Sleep(100 * time.Millisecond)
				continue
			}
			if diskFull {
				diskFull = false
				fmt.Fprintf(o.Log, "fuzzls: %s: there is room in the cache directory again; fuzzing\n", s.target.Name)
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
			if o.Seed != 0 {
				args.Seed = o.Seed + s.seeded
				s.seeded++
			}
			for _, d := range s.dict {
				args.Dict = append(args.Dict, []byte(d))
			}
			corpus := append([]entry(nil), s.corpus...)
			s.workers = append(s.workers, w)
			focus := s.focusLocked()
			s.mu.Unlock()
			w.setBusy(true)
			for _, en := range corpus { // one a message: a corpus may hold hundreds of MB
				if w.send(&fuzzrt.Request{Load: &fuzzrt.Entry{Input: en.input}}) != nil {
					break // the worker is gone; its death is an event
				}
			}
			w.send(&fuzzrt.Request{Fuzz: args})
			if focus != nil {
				w.send(&fuzzrt.Request{Focus: focus})
			}
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
	var syncTick <-chan time.Time
	if o.Sync != "" {
		t := time.NewTicker(syncEvery)
		defer t.Stop()
		syncTick = t.C
	}
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
				s.setState(StateFuzzing)
				s.emitStats()
			}
		case <-deadline:
			s.emitStats()
			return outFinished
		case <-syncTick:
			s.syncRun(s.syncPull())
		case <-tick.C:
			s.broadcastFocus(s.updateFocus(false))
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
			if binGone() {
				fmt.Fprintf(o.Log, "fuzzls: %s: the build is gone from the cache; building again\n", s.target.Name)
				return outRebuild
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
				if ev.w.wasRecycled() {
					fmt.Fprintf(o.Log, "fuzzls: %s: worker replaced: its resident memory passed the limit, the race detector keeping memory for every goroutine started\n", s.target.Name)
					ev.w.release()
					if len(s.liveWorkers()) < want {
						start()
					}
					continue
				}
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
			case m.Result != nil:
				if s.syncResult(m.Result) {
					return outFinished
				}
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
	return f, w.runningInput()
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
	added, changed := false, false
	for _, c := range en.Cov {
		i := int(c >> 8)
		if i >= len(s.global) {
			continue
		}
		if b := uint8(c); b&^s.global[i] != 0 {
			if s.global[i] == 0 && i < len(s.blocks) { // past the blocks: comparison sites
				s.covered++
				changed = changed || s.blocks[i].Changed
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
	if changed {
		s.broadcastFocus(s.updateFocus(true))
	}
	if first { // the new build's first coverage: no need to wait for the tick
		s.e.observe(&CoverageEvent{Target: s.target})
	}
	if _, err := writeEntry(corpusDir(s.e.opts.CacheDir, s.target), en.Input); err != nil {
		fmt.Fprintf(s.e.opts.Log, "fuzzls: saving corpus entry: %v\n", err)
	}
	s.syncPublish(en.Input)
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
