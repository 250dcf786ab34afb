package fuzzrt

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"strings"
	"sync"
	"time"
)

// The worker loop: mutate → execute → read counters, in this process, until the
// coordinator says stop. Everything on that path avoids allocation where it can; the
// coordinator is told only about inputs with new coverage and about failures.

// bucketBits maps a hit count to its bucket bit (1, 2, 3, 4-7, 8-15, 16-31, 32-127,
// 128+), as AFL does, so that "reached more often" is new coverage too.
var bucketBits = func() (t [256]uint8) {
	for c := 1; c < 256; c++ {
		switch {
		case c == 1:
			t[c] = 1
		case c == 2:
			t[c] = 2
		case c == 3:
			t[c] = 4
		case c < 8:
			t[c] = 8
		case c < 16:
			t[c] = 16
		case c < 32:
			t[c] = 32
		case c < 128:
			t[c] = 64
		default:
			t[c] = 128
		}
	}
	return t
}()

type corpusItem struct {
	vals   []any
	cov    []uint32
	dur    time.Duration // what an execution costs: its own when it was added, then a moving average of its mutants'
	weight float64
}

// focusBoost multiplies the energy of entries that reach the focus's frontier,
// and its square that of entries reaching its nearer part.
const focusBoost = 8

// tierBoost is the energy factor of an entry by the nearest part of the focus it
// reaches: none, the callers of the changed functions, the frontier, nearer.
var tierBoost = [...]float64{1, 2, focusBoost, focusBoost * focusBoost}

// cmpEvery is how often (in executions) the loop runs a comparison round.
const cmpEvery = 64

// cmpDue reports whether the loop's nth iteration runs a comparison round: every
// cmpEvery-th, unless the rounds' candidates cost more than twice the other
// inputs an execution and their executions have taken more time than the
// others' (and there is no focus). A round's candidates can cost far more than
// the mutations' inputs: on lz4 they write the frame header's block size, 1.2 ms
// an execution against 0.18 ms, and took 76% of the time. On most targets they
// cost what the others do and this changes nothing. The recording executions
// count on neither side: recording costs more than a tiny target's execution.
func (w *worker) cmpDue(n int) bool {
	if n%cmpEvery != cmpEvery-1 || !w.rt.cmpEnabled() {
		return false
	}
	others, othersN := float64(w.execTime-w.cmpTime), float64(w.execN-w.cmpN)
	cmp, cmpN := float64(w.cmpTime), float64(w.cmpN)
	cheap := cmpN == 0 || othersN == 0 || cmp/cmpN <= 2*others/othersN
	return cheap || cmp <= others || len(w.focused) > 0
}

type worker struct {
	rt      *runtimeState
	fn      func(corpusEntry) error
	reqs    chan Request
	seen    []uint8 // bucket bits seen so far per counter (this worker's view)
	enc     []byte
	execs   uint64
	slowest time.Duration // the longest execution that returned
	lastDur time.Duration // the last execution's
	// The time executions took and how many, all and those of comparison
	// rounds, recording ones aside (cmpDue).
	execTime, cmpTime time.Duration
	execN, cmpN       int

	corpus      []corpusItem
	cum         []float64 // cumulative weights of corpus, for picking (see reweigh)
	hits        []int32   // per counter: corpus entries reaching it
	focus       []uint8   // per counter: its tier in the focus (tierBoost's index: 1 callers, 2 frontier, 3 nearer); nil: no focus
	focused     []int     // corpus entries reaching the focus's nearest part reached (see reweigh)
	stale       bool      // entries were added with a provisional weight (addItem)
	reweighed   time.Time // when reweigh last ran, and how long it took
	reweighTook time.Duration
	mut         *Mutator
	mix         hookMix // the user's hooks beside mut's own mutations
	tokens      int     // dictionary tokens added so far
	cmpRounds   int
	climbing    climbState // climb.go
	maxLen      int        // FuzzArgs.MaxLen, or the longest []byte or string of the initial corpus
	lenBound    int        // what mutations grow a []byte or string to now, up to maxLen (growLen)
	lastFind    uint64     // execs when an entry was last kept, or the bound last grown
	types       []string
	loaded      [][]any // initial entries received (Load) for the next Fuzz request

	crashes     map[string]int // local dedup: failure key → repeats not yet reported
	lastRepeats time.Time
	lastCmps    time.Time // when the comparison summaries last went out
	lastHooks   time.Time // when the hooks' figures last went out
}

func (rt *runtimeState) work(fn func(corpusEntry) error) error {
	w := &worker{rt: rt, fn: fn, reqs: make(chan Request, 64), seen: make([]uint8, rt.total), crashes: map[string]int{}}
	go w.readRequests()
	hello := &Hello{Counters: rt.total, PID: os.Getpid(), Baseline: w.coverage(nil)}
	if err := rt.send(&Message{Hello: hello}); err != nil {
		return err
	}
	for req := range w.reqs {
		w.handle(req)
		if w.mut != nil {
			w.loop()
		}
	}
	return nil
}

// readRequests forwards the coordinator's commands to the loop, which takes them
// between executions. It never waits for the loop (requests queue here), so that it
// reads on while an execution runs, however long: when the coordinator goes away
// (EOF) the worker exits, so that no worker outlives it, on every OS; when the
// coordinator asks for stacks (an execution ran too long or grew too big), it
// prints them and exits (stacks.go).
func (w *worker) readRequests() {
	var mu sync.Mutex
	var queue []Request
	ready := make(chan struct{}, 1)
	go func() {
		for range ready {
			mu.Lock()
			batch := queue
			queue = nil
			mu.Unlock()
			for _, r := range batch {
				w.reqs <- r
			}
		}
	}()
	frames := NewFrameReader(w.rt.in)
	for {
		var r Request
		if err := frames.Read(&r); err == io.EOF {
			os.Exit(0)
		} else if err != nil {
			fmt.Fprintf(os.Stderr, "fuzzls worker: bad request: %v\n", err)
			os.Exit(3)
		}
		if r.Stacks {
			exitWithStacks()
		}
		mu.Lock()
		queue = append(queue, r)
		mu.Unlock()
		select {
		case ready <- struct{}{}:
		default:
		}
	}
}

// handle applies one request. A Fuzz request arms the loop; Stop disarms it.
func (w *worker) handle(r Request) {
	if r.Fuzz != nil || r.Exec != nil {
		// What the process allocated since its last execution (testing's set-up,
		// a TestMain's, the request) is not the next input's doing.
		w.rt.heap.reset()
	}
	switch {
	case r.Stop:
		w.mut = nil
	case r.Focus != nil:
		w.focus = nil
		if len(r.Focus.Counters)+len(r.Focus.Near)+len(r.Focus.Callers) > 0 {
			w.focus = make([]uint8, len(w.seen))
			for tier, cs := range [][]uint32{r.Focus.Callers, r.Focus.Counters, r.Focus.Near} {
				for _, c := range cs {
					if int(c) < len(w.focus) {
						w.focus[c] = max(w.focus[c], uint8(tier+1))
					}
				}
			}
		}
		w.rt.cmp.setFocus(r.Focus.Sites)
		if w.mut != nil {
			w.reweigh()
		}
	case r.Load != nil:
		if vals, err := Unmarshal([]byte(r.Load.Input)); err == nil {
			w.loaded = append(w.loaded, vals)
		}
	case r.Fuzz != nil:
		w.startFuzzing(r.Fuzz)
	case r.Add != nil:
		vals, err := Unmarshal([]byte(r.Add.Input))
		if err != nil {
			return
		}
		w.maxLen = max(w.maxLen, longestValue(vals))
		for _, c := range r.Add.Cov {
			if i := int(c >> 8); i < len(w.seen) {
				w.seen[i] |= uint8(c)
			}
		}
		w.addItem(corpusItem{vals: vals, cov: r.Add.Cov})
	case r.Exec != nil:
		res := &ExecResult{ID: r.Exec.ID}
		vals, err := Unmarshal([]byte(r.Exec.Input))
		switch {
		case err != nil:
			res.Output = "fuzzls: bad input: " + err.Error()
		case r.Exec.Solve != nil:
			res.Solved = w.solve(vals, *r.Exec.Solve)
		default:
			res.Output, _ = w.run(vals)
			res.Cov = w.coverage(nil)
		}
		w.rt.send(&Message{Result: res})
	}
}

func (w *worker) startFuzzing(a *FuzzArgs) {
	w.types = a.Types
	w.mix.hooks = w.rt.hooks.take()
	w.mix.bind(a.Types)
	w.maxLen = a.MaxLen
	if w.maxLen <= 0 {
		w.maxLen = 4096
	}
	w.mut = NewMutator(a.Seed)
	if len(a.Dict) > 0 {
		w.mut.AddDict(a.Dict)
	}
	w.corpus = w.corpus[:0]
	loaded := w.loaded
	w.loaded = nil
	for _, vals := range loaded {
		w.maxLen = max(w.maxLen, longestValue(vals))
		w.execute(vals, true)
	}
	if len(w.corpus) == 0 {
		vals := make([]any, len(a.Types))
		for i, t := range a.Types {
			vals[i] = ZeroValue(t)
		}
		w.execute(vals, true)
	}
	if len(w.corpus) == 0 { // every initial entry failed: mutate the first anyway
		vals := make([]any, len(a.Types))
		for i, t := range a.Types {
			vals[i] = ZeroValue(t)
		}
		w.corpus = append(w.corpus, corpusItem{vals: vals, weight: 1})
	}
	w.lenBound = minLenBound
	for _, it := range w.corpus {
		w.lenBound = max(w.lenBound, longestValue(it.vals))
	}
	w.lenBound = min(w.lenBound, w.maxLen)
	w.lastFind = w.execs
	w.reweigh()
	w.sendHooks()
	w.rt.send(&Message{Loaded: true})
}

// Length control, as libFuzzer's -len_control: mutations grow inputs only to
// lenBound, which starts at the longest initial entry (at least minLenBound)
// and grows by log2 of itself each time lenControl·log2(bound) executions pass
// without a find, up to maxLen. Inputs stay as short as the target lets them
// be, and short inputs run faster (go test's minimization of every new entry
// keeps its corpus short too: hcl's templates were a median of 7 bytes against
// fuzzls's 70 without this).
const (
	minLenBound = 16
	lenControl  = 100
)

// growLen raises lenBound when the loop has gone long enough without a find.
func (w *worker) growLen() {
	if w.lenBound >= w.maxLen {
		return
	}
	l := bits.Len(uint(w.lenBound)) - 1
	if w.execs-w.lastFind > uint64(lenControl*l) {
		w.lenBound = min(w.maxLen, w.lenBound+l)
		w.lastFind = w.execs
	}
}

// eagerReweigh is the corpus size up to which every new entry reweighs all at
// once; past it, reweigh costs more (every entry's coverage is read: 12% of a
// goldmark worker's time at 1,400 entries), and a new entry gets the average
// weight until the loop's next reweigh (reweighDue).
const eagerReweigh = 256

// addItem adds an entry to the local corpus and updates the weights.
func (w *worker) addItem(it corpusItem) {
	w.corpus = append(w.corpus, it)
	if len(w.corpus) <= eagerReweigh || len(w.cum) != len(w.corpus)-1 {
		w.reweigh()
		return
	}
	sum := w.cum[len(w.cum)-1]
	last := &w.corpus[len(w.corpus)-1]
	last.weight = sum / float64(len(w.cum))
	w.cum = append(w.cum, sum+last.weight)
	w.stale = true
}

// reweighDue reports whether the weights are stale (entries added, or a second
// of cost measurements since the last reweigh) and the last reweigh was long
// enough ago: twenty times what it took, so that it costs at most 5%.
func (w *worker) reweighDue() bool {
	since := time.Since(w.reweighed)
	return (w.stale || since >= time.Second) && since >= 20*w.reweighTook
}

// noteCost folds the duration of the last execution, a mutant of entry i, into
// the entry's cost.
func (w *worker) noteCost(i int) {
	if i >= len(w.corpus) {
		return
	}
	it := &w.corpus[i]
	if it.dur <= 0 {
		it.dur = w.lastDur
		return
	}
	it.dur += (w.lastDur - it.dur) / 8
}

// reweigh computes each entry's energy, an entropic-style score: entries that reach
// blocks few other entries reach, small entries and fast ones are picked more often,
// and those reaching the focus by tierBoost: its frontier focusBoost times more,
// its nearer part focusBoost² times, only the callers of the changed functions twice.
func (w *worker) reweigh() {
	start := time.Now()
	defer func() {
		w.stale, w.reweighed, w.reweighTook = false, time.Now(), time.Since(start)
	}()
	// The typical cost: the geometric mean, which a few very slow entries do not
	// move much, unlike the arithmetic one.
	logs, timed := 0.0, 0
	for _, it := range w.corpus {
		if it.dur > 0 {
			logs += math.Log(float64(it.dur))
			timed++
		}
	}
	typical := 0.0
	if timed > 0 {
		typical = math.Exp(logs / float64(timed))
	}
	if len(w.hits) != len(w.seen) {
		w.hits = make([]int32, len(w.seen))
	} else {
		clear(w.hits)
	}
	for _, it := range w.corpus {
		for _, c := range it.cov {
			if i := int(c >> 8); i < len(w.hits) {
				w.hits[i]++
			}
		}
	}
	w.cum = w.cum[:0]
	w.focused = w.focused[:0]
	focus := w.focus
	sum := 0.0
	top := uint8(0) // the nearest tier an entry reaches
	for i := range w.corpus {
		it := &w.corpus[i]
		rare := 0.0
		tier := uint8(0)
		for _, c := range it.cov {
			j := int(c >> 8)
			if j < len(w.hits) && w.hits[j] > 0 {
				rare += 1 / float64(w.hits[j])
			}
			if j < len(focus) {
				tier = max(tier, focus[j])
			}
		}
		size := ValuesSize(it.vals)
		sizeFactor := 1.0
		switch {
		case size > 4096:
			sizeFactor = 0.25
		case size > 256:
			sizeFactor = 0.5
		}
		// Picks in inverse proportion to cost, so that each entry's share of
		// the time follows its energy rather than its picks: an lz4 frame
		// declaring 4 MiB blocks costs a hundred times a small one, and with
		// picks bounded to 8× apart those took most of the time.
		speed := 1.0
		if typical > 0 && it.dur > 0 {
			speed = min(4, max(1.0/64, typical/float64(it.dur)))
		}
		it.weight = (0.1 + rare) * sizeFactor * speed
		it.weight *= tierBoost[tier]
		if tier > 0 && tier >= top {
			if tier > top {
				top, w.focused = tier, w.focused[:0]
			}
			w.focused = append(w.focused, i)
		}
		sum += it.weight
		w.cum = append(w.cum, sum)
	}
}

// pick chooses a corpus entry by weight.
func (w *worker) pick() int {
	if len(w.cum) != len(w.corpus) || len(w.corpus) == 0 {
		return w.mut.Intn(len(w.corpus))
	}
	total := w.cum[len(w.cum)-1]
	x := float64(w.mut.Rand().Uint64()>>11) / (1 << 53) * total
	lo, hi := 0, len(w.cum)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if w.cum[mid] < x {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// cmpRound runs one corpus entry with comparison recording on, then tries the
// input-to-state candidates its comparisons suggest. A candidate that reaches
// nothing new is itself recorded once more and its own candidates tried: solving
// one comparison often breaks another (a byte right, the checksum over it wrong),
// and the second step repairs it.
//
// Every other round records a freshly mutated input instead: a mutation that breaks
// a checksum (or a length field) shows up as a comparison whose candidate repairs it.
// While there is a focus, the entry is one that reaches its nearest part reached,
// the comparisons on changed lines are tried first (cmp.go), then climbed
// (climb.go).
func (w *worker) cmpRound() {
	i := w.pick()
	if len(w.focused) > 0 {
		i = w.focused[w.mut.Intn(len(w.focused))]
	}
	vals := w.corpus[i].vals
	if w.cmpRounds++; w.cmpRounds&1 == 0 {
		vals = CloneValues(vals)
		w.mut.Mutate(vals, max(w.lenBound, longestValue(vals)))
	}
	budget := 64
	w.cmpExplore(vals, 0, &budget)
	if len(w.focused) > 0 {
		w.climb(vals)
	}
	if len(w.rt.cmp.sum) > 0 && time.Since(w.lastCmps) >= time.Second {
		w.lastCmps = time.Now()
		w.rt.send(&Message{Cmps: w.rt.cmp.takeSums()})
	}
}

// cmpExplore runs vals with recording on (execute reports failures and new
// coverage as usual) and tries the candidates, to depth 1.
func (w *worker) cmpExplore(vals []any, depth int, budget *int) {
	w.rt.cmp.on = true
	kept := w.execute(vals, false)
	w.rt.cmp.on = false
	vals = w.executed(vals)
	if kept && depth > 0 {
		w.rt.cmp.recs, w.rt.cmp.frecs = nil, nil
		return
	}
	w.rt.cmp.intn = w.mut.Intn
	// A candidate is held to the mutations' bound: a string operand written in
	// place of a shorter one, or beside the input when not found in it, would
	// otherwise let an input double round after round (one that compares the
	// input with its own text), and every execution of it grow slower.
	limit := max(w.maxLen, longestValue(vals))
	w.rt.cmp.candidates(vals, func(tok []byte) {
		if w.tokens < 1024 {
			w.tokens++
			w.mut.AddLearned(tok)
		}
	}, func(cand []any) bool {
		if longestValue(cand) > limit {
			return true
		}
		*budget--
		if depth == 0 {
			w.cmpExplore(cand, 1, budget)
		} else {
			w.execute(cand, false)
		}
		return *budget > 0 && len(w.reqs) == 0 && w.mut != nil
	})
}

// loop fuzzes until a request disarms it. Requests are polled between executions.
func (w *worker) loop() {
	var scratch []any
	for n := 0; w.mut != nil; n++ {
		select {
		case r := <-w.reqs:
			w.handle(r)
			continue
		default:
		}
		if n&1023 == 0 {
			w.flushRepeats()
		}
		if n&63 == 0 {
			w.growLen()
			if w.reweighDue() {
				w.reweigh()
			}
		}
		if n&255 == 0 && len(w.mix.hooks) > 0 && time.Since(w.lastHooks) >= hookReportEvery {
			w.lastHooks = time.Now()
			w.sendHooks()
		}
		if w.cmpDue(n) {
			t, k := w.execTime, w.execN
			w.cmpRound()
			w.cmpTime += w.execTime - t
			w.cmpN += w.execN - k
			continue
		}
		si := w.pick()
		src := w.corpus[si].vals
		scratch = cloneInto(scratch, src)
		if h := w.mix.pick(w.mut.Rand()); h != nil {
			if !h.apply(scratch, w.mut.Rand(), w.types) {
				if h.problem != "" { // the first panic, at once; the others with the repeats
					w.sendHooks()
				}
				continue
			}
			h.execs++
			kept := w.execute(scratch, false)
			w.noteCost(si)
			if kept {
				scratch = nil
				h.finds++
				w.sendHooks()
			}
			continue
		}
		w.mix.ownExecs++
		bound := max(w.lenBound, longestValue(src)) // an entry longer than the bound is not cut
		if len(w.corpus) > 1 && w.mut.Intn(8) == 0 {
			// Splice, then as often as not mutate the result too, as AFL's
			// havoc does: a crossover alone mostly recombines known coverage.
			w.mut.Splice(scratch, w.corpus[w.pick()].vals, bound)
			if w.mut.Intn(2) == 0 {
				w.mut.Mutate(scratch, bound)
			}
		} else {
			w.mut.Mutate(scratch, bound)
		}
		kept := w.execute(scratch, false)
		w.noteCost(si)
		if kept {
			scratch = nil // kept by the corpus
			w.mut.Promote()
			w.mix.ownFinds++
		}
	}
}

// execute runs vals once and reports what is new. It returns whether vals was kept.
func (w *worker) execute(vals []any, initial bool) bool {
	out, dur := w.run(vals)
	if out != "" {
		w.reportCrash(w.executed(vals), out)
		return false
	}
	if !w.hasNewCoverage() {
		if initial { // keep every initial entry, with the coverage it has here
			w.corpus = append(w.corpus, corpusItem{vals: w.executed(vals), cov: w.coverage(nil), dur: dur})
		}
		return false
	}
	vals = w.executed(vals)
	w.lastFind = w.execs
	cov := w.coverage(nil)
	for _, c := range cov {
		w.seen[c>>8] |= uint8(c)
	}
	if initial {
		w.corpus = append(w.corpus, corpusItem{vals: vals, cov: cov, dur: dur}) // reweighed once all are in
	} else {
		w.addItem(corpusItem{vals: vals, cov: cov, dur: dur})
	}
	w.rt.send(&Message{New: &Entry{Input: string(Marshal(vals)), Cov: cov}})
	return true
}

// run executes vals once, with the input saved in shared memory first, and
// returns the failure's text ("" when it passed) and how long it took. The shared
// counters tell the coordinator's hang watchdog when an execution is running and
// how long the slowest one took, which sets the adaptive hang limit.
func (w *worker) run(vals []any) (string, time.Duration) {
	w.enc = AppendValues(w.enc[:0], vals)
	w.rt.mem.SetInput(w.enc)
	w.execs++
	w.rt.mem.SetExecs(w.execs)
	t0 := time.Now()
	err := w.fn(corpusEntry{Values: vals})
	dur := time.Since(t0)
	w.lastDur = dur
	if !w.rt.cmp.on {
		w.execTime += dur
		w.execN++
	}
	w.rt.mem.SetFinished(w.execs)
	if dur > w.slowest {
		w.slowest = dur
		w.rt.mem.SetSlowest(dur)
	}
	w.rt.mem.ClearExitSite()
	if oom := w.rt.heap.check(); err == nil && oom != "" {
		return oom, dur
	}
	if err == nil {
		return w.rt.leaks.check(func() {
			if again, err := DecodeValues(w.enc); err == nil {
				w.fn(corpusEntry{Values: again})
			}
		}), dur
	}
	if s := err.Error(); s != "" {
		return s, dur
	}
	return "fuzz function failed", dur
}

// executed returns the values the last run executed, as they were before the
// call: the fuzz function may have written into a []byte argument (go test too
// reports and saves the input as it was called with). Only byte slices can be
// written to, and only the rare paths (a failure, new coverage) ask, so the
// per-execution path copies nothing: the values are decoded again from the
// encoding run wrote to shared memory before the call.
func (w *worker) executed(vals []any) []any {
	for _, v := range vals {
		if _, ok := v.([]byte); ok {
			if dec, err := DecodeValues(w.enc); err == nil {
				return dec
			}
			break
		}
	}
	return vals
}

// hasNewCoverage reports whether the counters hold a bucket not seen before. It
// runs after every execution, so it skips eight zero counters at a time: most are
// zero.
func (w *worker) hasNewCoverage() bool {
	base := 0
	for _, c := range w.rt.counters {
		seen := w.seen[base : base+len(c)]
		j := 0
		for ; j+8 <= len(c); j += 8 {
			if binary.LittleEndian.Uint64(c[j:]) == 0 {
				continue
			}
			for k := j; k < j+8; k++ {
				if v := c[k]; v != 0 && bucketBits[v]&^seen[k] != 0 {
					return true
				}
			}
		}
		for ; j < len(c); j++ {
			if v := c[j]; v != 0 && bucketBits[v]&^seen[j] != 0 {
				return true
			}
		}
		base += len(c)
	}
	return false
}

// coverage appends the current counters as index<<8 | bucket bits.
func (w *worker) coverage(dst []uint32) []uint32 {
	base := 0
	for _, c := range w.rt.counters {
		for j := 0; j < len(c); j++ {
			if j&7 == 0 && j+8 <= len(c) && binary.LittleEndian.Uint64(c[j:]) == 0 {
				j += 7
				continue
			}
			if v := c[j]; v != 0 {
				dst = append(dst, uint32(base+j)<<8|uint32(bucketBits[v]))
			}
		}
		base += len(c)
	}
	return dst
}

// reportCrash sends the first occurrence of each distinct failure at once and counts
// the repeats, which flushRepeats sends about once a second.
func (w *worker) reportCrash(vals []any, out string) {
	key := FailureKey(out)
	if _, ok := w.crashes[key]; ok {
		w.crashes[key]++
		return
	}
	w.crashes[key] = 0
	w.sendHooks() // before the failure, which may end the run
	w.rt.send(&Message{Crash: &CrashReport{Input: string(Marshal(vals)), Output: out}})
}

func (w *worker) flushRepeats() {
	if time.Since(w.lastRepeats) < time.Second {
		return
	}
	w.lastRepeats = time.Now()
	for key, n := range w.crashes {
		if n > 0 {
			w.rt.send(&Message{Crash: &CrashReport{Output: key, Repeat: n}})
			w.crashes[key] = 0
		}
	}
}

// sendHooks reports what the user's hooks did since the last report, if anything.
func (w *worker) sendHooks() {
	if st := w.mix.report(); len(st) > 0 {
		w.rt.send(&Message{Hooks: st})
	}
}

// FailureKey reduces a failure's output to what identifies it: the lines that are
// not test bookkeeping ("--- FAIL", goroutine numbers, addresses).
func FailureKey(out string) string {
	var b strings.Builder
	n := 0
	for line := range strings.SplitSeq(out, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "--- FAIL") || strings.HasPrefix(t, "goroutine ") {
			continue
		}
		if i := strings.LastIndex(t, " +0x"); i > 0 {
			t = t[:i]
		}
		if i := strings.Index(t, "(0x"); i > 0 {
			t = t[:i]
		}
		b.WriteString(t)
		b.WriteByte('\n')
		if n++; n == 6 {
			break
		}
	}
	return b.String()
}

// longestValue is the length of the longest []byte or string among vals.
func longestValue(vals []any) int {
	n := 0
	for _, v := range vals {
		switch v := v.(type) {
		case []byte:
			n = max(n, len(v))
		case string:
			n = max(n, len(v))
		}
	}
	return n
}

func cloneInto(dst, src []any) []any {
	dst = append(dst[:0], src...)
	for i, v := range dst {
		if b, ok := v.([]byte); ok {
			dst[i] = append([]byte(nil), b...)
		}
	}
	return dst
}
