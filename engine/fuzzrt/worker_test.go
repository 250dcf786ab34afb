package fuzzrt

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/bits"
	"strings"
	"testing"
	"time"
)

// TestReweigh: an entry reaching a block no other entry reaches outweighs entries
// reaching only common blocks; a slow or large entry weighs less than a fast, small
// one with the same coverage.
func TestReweigh(t *testing.T) {
	common := []uint32{0<<8 | 1, 1<<8 | 1}
	rare := []uint32{0<<8 | 1, 1<<8 | 1, 2<<8 | 1}
	w := &worker{seen: make([]uint8, 3), mut: NewMutator(1)}
	w.corpus = []corpusItem{
		{vals: []any{"a"}, cov: common, dur: time.Microsecond},
		{vals: []any{"b"}, cov: common, dur: time.Microsecond},
		{vals: []any{"c"}, cov: rare, dur: time.Microsecond},
		{vals: []any{"d"}, cov: common, dur: 100 * time.Microsecond},
		{vals: []any{string(make([]byte, 10000))}, cov: common, dur: time.Microsecond},
	}
	w.reweigh()
	wt := func(i int) float64 { return w.corpus[i].weight }
	if !(wt(2) > wt(0)) {
		t.Errorf("rare entry %.3f does not outweigh a common one %.3f", wt(2), wt(0))
	}
	if !(wt(3) < wt(0)) {
		t.Errorf("slow entry %.3f not below a fast one %.3f", wt(3), wt(0))
	}
	if !(wt(4) < wt(0)) {
		t.Errorf("large entry %.3f not below a small one %.3f", wt(4), wt(0))
	}
	// pick follows the weights.
	counts := make([]int, len(w.corpus))
	for range 20000 {
		counts[w.pick()]++
	}
	if !(counts[2] > counts[0] && counts[0] > counts[3]) {
		t.Errorf("picks %v do not follow the weights", counts)
	}
}

// TestReweighFocus: with a focus, an entry reaching the function of an unreached
// changed block (the frontier) outweighs one that does not, one reaching the
// changed code next to it (nearer) outweighs both, one reaching only a caller of
// that function weighs twice what it did, and comparison rounds pick
// among the nearest reached; an empty focus restores the weights.
func TestReweighFocus(t *testing.T) {
	w := &worker{rt: &runtimeState{}, seen: make([]uint8, 4), mut: NewMutator(1)}
	w.corpus = []corpusItem{
		{vals: []any{"a"}, cov: []uint32{0<<8 | 1}},                     // elsewhere
		{vals: []any{"b"}, cov: []uint32{0<<8 | 1, 1<<8 | 1}},           // the changed block's function
		{vals: []any{"c"}, cov: []uint32{0<<8 | 1, 1<<8 | 1, 2<<8 | 1}}, // and the changed comparison
		{vals: []any{"d"}, cov: []uint32{0<<8 | 1, 3<<8 | 1}},           // a caller of the changed function
	}
	w.reweigh()
	wt := func(i int) float64 { return w.corpus[i].weight }
	before := []float64{wt(0), wt(1), wt(2), wt(3)}
	w.handle(Request{Focus: &Focus{Counters: []uint32{1}, Near: []uint32{2}, Sites: []uint32{5}, Callers: []uint32{3}}}) // reweighs
	for i, boost := range []float64{1, focusBoost, focusBoost * focusBoost, 2} {
		if got := wt(i) / before[i]; got < boost*0.999 || got > boost*1.001 {
			t.Errorf("entry %d weighs %.2f times what it did without a focus, want %v", i, got, boost)
		}
	}
	if !(wt(1) > wt(3) && wt(1) > wt(0)) {
		t.Errorf("weights %.3f %.3f %.3f %.3f: the frontier's entry does not outweigh the others", wt(0), wt(1), wt(2), wt(3))
	}
	if len(w.focused) != 1 || w.focused[0] != 2 || !w.rt.cmp.focus[5] {
		t.Errorf("comparison rounds pick among %v (sites %v), want [2] (site 5)", w.focused, w.rt.cmp.focus)
	}
	w.handle(Request{Focus: &Focus{}})
	if wt(1) != before[1] || len(w.focused) != 0 || w.rt.cmp.focus != nil {
		t.Errorf("after the focus is cleared: weight %.3f (was %.3f), focused %v, sites %v", wt(1), before[1], w.focused, w.rt.cmp.focus)
	}
}

// BenchmarkHotPath measures what the worker adds to each execution besides the
// target and testing's own call: copying the input, encoding it into shared memory,
// resetting and scanning 2,000 counters, one mutation, and the allocation check
// of the memory limit.
func BenchmarkHotPath(b *testing.B) {
	b.Setenv(EnvMemLimit, "2048")
	mem, err := CreateMem(b.TempDir() + "/mem")
	if err != nil {
		b.Fatal(err)
	}
	defer mem.Close()
	counters := [][]uint8{make([]uint8, 1500), make([]uint8, 500)}
	rt := &runtimeState{counters: counters, total: 2000, mem: mem, heap: newHeapCheck()}
	w := &worker{rt: rt, seen: make([]uint8, 2000), mut: NewMutator(1)}
	src := []any{[]byte("GET /index.html HTTP/1.1\r\n"), 42}
	var scratch []any
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		scratch = cloneInto(scratch, src)
		w.mut.Mutate(scratch, 4096)
		w.enc = AppendValues(w.enc[:0], scratch)
		mem.SetInput(w.enc)
		mem.SetExecs(uint64(i))
		rt.resetCounters()
		counters[0][i%1500]++ // the target's work
		if w.hasNewCoverage() {
			for _, c := range w.coverage(nil) {
				w.seen[c>>8] |= uint8(c)
			}
		}
		mem.ClearExitSite()
		rt.heap.check()
	}
}

// TestCoverageScan: the word-at-a-time scans agree with a byte-by-byte one.
func TestCoverageScan(t *testing.T) {
	r := NewRand(7)
	for trial := 0; trial < 200; trial++ {
		counters := [][]uint8{make([]uint8, r.Intn(40)), make([]uint8, r.Intn(40)+1)}
		total := len(counters[0]) + len(counters[1])
		w := &worker{rt: &runtimeState{counters: counters, total: total}, seen: make([]uint8, total)}
		var want []uint32
		i := 0
		for _, c := range counters {
			for j := range c {
				if r.Intn(4) == 0 {
					c[j] = uint8(r.Intn(256))
				}
				if r.Intn(3) == 0 {
					w.seen[i+j] = uint8(r.Intn(256))
				}
			}
		}
		newCov := false
		for _, c := range counters {
			for j, v := range c {
				if v != 0 {
					want = append(want, uint32(i+j)<<8|uint32(bucketBits[v]))
					newCov = newCov || bucketBits[v]&^w.seen[i+j] != 0
				}
			}
			i += len(c)
		}
		got := w.coverage(nil)
		if len(got) != len(want) {
			t.Fatalf("coverage: got %d entries, want %d", len(got), len(want))
		}
		for k := range got {
			if got[k] != want[k] {
				t.Fatalf("coverage[%d] = %x, want %x", k, got[k], want[k])
			}
		}
		if w.hasNewCoverage() != newCov {
			t.Fatalf("hasNewCoverage = %v, want %v", !newCov, newCov)
		}
	}
}

// TestExecutedBeforeTheCall: a fuzz function that writes into its []byte
// argument still has the input it was called with reported, for a failure and
// for new coverage, and kept in the corpus (go test reports and saves the input
// as it was before the call too; issue 24, item 1).
func TestExecutedBeforeTheCall(t *testing.T) {
	mem, err := CreateMem(t.TempDir() + "/mem")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	counters := [][]uint8{make([]uint8, 8)}
	var out bytes.Buffer
	rt := &runtimeState{counters: counters, total: 8, mem: mem}
	rt.out = bufio.NewWriter(&out)
	fn := func(e corpusEntry) error {
		b := e.Values[0].([]byte)
		counters[0][len(b)%8]++
		orig := string(b)
		for i := range b {
			b[i] = 'x' // scribbles over its input
		}
		if orig == "bug" {
			return errors.New("bug")
		}
		return nil
	}
	w := &worker{rt: rt, fn: fn, seen: make([]uint8, 8), crashes: map[string]int{}}
	if !w.execute([]any{[]byte("ab")}, false) {
		t.Fatal("new coverage not kept")
	}
	w.execute([]any{[]byte("bug")}, false)
	if got := w.corpus[0].vals[0].([]byte); string(got) != "ab" {
		t.Errorf("corpus keeps %q, want the input as called, \"ab\"", got)
	}
	var newIn, crashIn string
	frames := NewFrameReader(&out)
	for {
		var m Message
		if err := frames.Read(&m); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if m.New != nil {
			newIn = m.New.Input
		}
		if m.Crash != nil {
			crashIn = m.Crash.Input
		}
	}
	if !strings.Contains(newIn, `[]byte("ab")`) {
		t.Errorf("new entry sent as %q, want []byte(\"ab\")", newIn)
	}
	if !strings.Contains(crashIn, `[]byte("bug")`) {
		t.Errorf("failing input sent as %q, want []byte(\"bug\")", crashIn)
	}
}

// TestCmpCandidatesBounded: a target that compares its input with a longer text
// made from it (here, the input twice) does not make comparison rounds grow the
// input past the mutations' bound: each round would double it, and every
// execution of it be slower (hcl's FuzzParseTemplate grew entries of 40 kB).
func TestCmpCandidatesBounded(t *testing.T) {
	mem, err := CreateMem(t.TempDir() + "/mem")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	counters := [][]uint8{make([]uint8, 32)}
	rt := &runtimeState{counters: counters, total: 32, mem: mem, hasCmp: true}
	rt.out = bufio.NewWriter(io.Discard)
	hook := rt.cmp.hook(0)
	longest := 0
	fn := func(e corpusEntry) error {
		s := e.Values[0].(string)
		longest = max(longest, len(s))
		counters[0][bits.Len(uint(len(s)))]++
		hook(0, s, s+s)
		return nil
	}
	w := &worker{rt: rt, fn: fn, seen: make([]uint8, 32), crashes: map[string]int{}, mut: NewMutator(1), maxLen: 64}
	w.execute([]any{"abcd"}, true)
	w.reweigh()
	for range 50 {
		w.cmpRound()
	}
	if longest > w.maxLen {
		t.Errorf("comparison rounds executed an input of %d bytes; the bound is %d", longest, w.maxLen)
	}
	if len(w.corpus) < 4 {
		t.Errorf("corpus of %d entries: the candidates within the bound were not kept", len(w.corpus))
	}
}

// TestReweighDeferred: past eagerReweigh entries, a new entry does not reweigh
// the whole corpus at once: it is picked at the average weight until the loop's
// next reweigh, which comes once twenty times the last one's duration has passed.
func TestReweighDeferred(t *testing.T) {
	w := &worker{seen: make([]uint8, 2*eagerReweigh), mut: NewMutator(1)}
	for i := range eagerReweigh {
		w.addItem(corpusItem{vals: []any{"x"}, cov: []uint32{uint32(i)<<8 | 1}})
	}
	if w.stale {
		t.Fatal("stale weights below eagerReweigh entries")
	}
	w.reweighTook = time.Hour
	w.addItem(corpusItem{vals: []any{"new"}, cov: []uint32{uint32(eagerReweigh)<<8 | 1}})
	n := len(w.corpus)
	if !w.stale || len(w.cum) != n {
		t.Fatalf("after one more entry: stale %v, %d weights for %d entries", w.stale, len(w.cum), n)
	}
	if got, want := w.corpus[n-1].weight, w.cum[n-2]/float64(n-1); got != want {
		t.Errorf("provisional weight %v, want the average %v", got, want)
	}
	picked := false
	for range 10 * n {
		picked = picked || w.pick() == n-1
	}
	if !picked {
		t.Error("the new entry is never picked")
	}
	if w.reweighDue() {
		t.Error("reweigh due before twenty times its last duration")
	}
	w.reweighTook = 0
	if !w.reweighDue() {
		t.Fatal("reweigh not due")
	}
	w.reweigh()
	if w.stale {
		t.Error("still stale after reweigh")
	}
}

// TestReweighCost: an entry whose executions cost fifty times the others' is
// picked about fifty times less often, so that it takes about the time of any
// other (the bound is 64×; with an 8× bound lz4's frames declaring 4 MiB blocks
// took most of the worker's time), and an entry's cost follows its mutants'.
func TestReweighCost(t *testing.T) {
	cov := []uint32{0<<8 | 1}
	w := &worker{seen: make([]uint8, 1), mut: NewMutator(1)}
	for range 9 {
		w.corpus = append(w.corpus, corpusItem{vals: []any{"a"}, cov: cov, dur: 20 * time.Microsecond})
	}
	w.corpus = append(w.corpus, corpusItem{vals: []any{"b"}, cov: cov, dur: time.Millisecond})
	w.reweigh()
	if r := w.corpus[0].weight / w.corpus[9].weight; r < 40 || r > 60 {
		t.Errorf("an entry 50× slower weighs %.1f× less, want about 50×", r)
	}
	// Its mutants run fast: its cost comes down to theirs.
	for range 100 {
		w.lastDur = 20 * time.Microsecond
		w.noteCost(9)
	}
	if d := w.corpus[9].dur; d > 25*time.Microsecond {
		t.Errorf("cost after 100 mutants of 20µs: %v", d)
	}
}

// TestLenControl: mutations grow an input only to the length bound, which
// starts at the longest initial entry and grows once the loop has gone
// lenControl·log2(bound) executions without a find; an entry longer than the
// bound is mutated, not cut.
func TestLenControl(t *testing.T) {
	mem, err := CreateMem(t.TempDir() + "/mem")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	counters := [][]uint8{make([]uint8, 8)}
	rt := &runtimeState{counters: counters, total: 8, mem: mem}
	rt.out = bufio.NewWriter(io.Discard)
	var w *worker
	longest, execs := 0, 0
	fn := func(e corpusEntry) error {
		longest = max(longest, len(e.Values[0].([]byte)))
		counters[0][0] = 1 // nothing new after the first
		if execs++; execs == 3000 {
			w.mut = nil // ends the loop
		}
		return nil
	}
	w = &worker{rt: rt, fn: fn, seen: make([]uint8, 8), crashes: map[string]int{}}
	w.loaded = [][]any{{[]byte("ab")}}
	w.startFuzzing(&FuzzArgs{Types: []string{"[]byte"}, MaxLen: 4096})
	if w.lenBound != minLenBound {
		t.Fatalf("initial bound %d, want %d", w.lenBound, minLenBound)
	}
	w.loop()
	// 16 → 20 after 400 stalled executions, → 24 after 400 more, … → 42 after 2,600.
	if longest > w.lenBound || w.lenBound > 48 || w.lenBound <= minLenBound {
		t.Errorf("after 3,000 executions without a find: longest input %d bytes, bound %d; want the bound in (16, 48] and the input within it", longest, w.lenBound)
	}
}

// TestCmpShare: a comparison round is due every cmpEvery-th iteration, unless
// its candidates cost more than twice the other inputs and took more time than
// they did; then only with a focus.
func TestCmpShare(t *testing.T) {
	w := &worker{rt: &runtimeState{hasCmp: true}}
	if w.cmpDue(cmpEvery-2) || !w.cmpDue(cmpEvery-1) {
		t.Fatal("a round is not due every cmpEvery-th iteration alone")
	}
	// Candidates as cheap as the others, taking 3/4 of the time: due.
	w.execTime, w.execN, w.cmpTime, w.cmpN = 4*time.Second, 4000, 3*time.Second, 3000
	if !w.cmpDue(cmpEvery - 1) {
		t.Error("a round is not due while its candidates cost what the others do")
	}
	// Candidates six times as costly, taking 3/4 of the time: not due.
	w.cmpN = 500
	if w.cmpDue(cmpEvery - 1) {
		t.Error("a round is due while its costly candidates took three times the others' time")
	}
	// The same, having taken half the time: due.
	w.execTime = 6 * time.Second
	if !w.cmpDue(cmpEvery - 1) {
		t.Error("a round is not due while its costly candidates took no more time than the others")
	}
	w.execTime = 4 * time.Second
	w.focused = []int{0}
	if !w.cmpDue(cmpEvery - 1) {
		t.Error("a round is not due with a focus")
	}
}
