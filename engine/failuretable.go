package engine

import (
	"sync"

	"fuzzls.dev/fuzzls/engine/failure"
)

// failureTable is a session's distinct failures: each Crash with the failure
// as first found (what a repeat or a replay must be the same as), the repeats
// counted, and the build's first slow input, a warning. Its lock guards the
// Crashes too: the failure's life (failures.go) changes them through update.
// It is a leaf: no method calls out while holding it, but for the functions
// given to record, update and slowInput, which must not lock anything.
type failureTable struct {
	mu      sync.Mutex
	crashes []*Crash
	firsts  map[*Crash]*failure.Failure
	byKey   map[string]*Crash // fuzzrt.FailureKey of a failure's output → its crash, for the workers' repeats
	slow    *Crash            // the build's first slow input (see Session.onSlow)
	known   map[string]bool   // the inputs of the build's seeds in testdata/fuzz (Crash.Known)
}

func newFailureTable() *failureTable {
	return &failureTable{firsts: map[*Crash]*failure.Failure{}, byKey: map[string]*Crash{}}
}

// newBuild takes the seeds of a new build (their inputs in testdata/fuzz), and
// forgets its slow input, which it returns (nil if none): the new build may be
// faster.
func (t *failureTable) newBuild(known map[string]bool) (slow *Crash) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.known = known
	slow, t.slow = t.slow, nil
	return slow
}

// record takes a failure, output key (fuzzrt.FailureKey), on input: when it is
// one already recorded (failure.Failure.Same as its first) its count grows;
// else newCrash makes its Crash (Known set here), recorded with f. It returns
// the crash and whether it is new.
func (t *failureTable) record(f *failure.Failure, key, input string, newCrash func() *Crash) (*Crash, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.crashes {
		if t.firsts[c].Same(f) {
			c.Count++
			t.byKey[key] = c
			return c, false
		}
	}
	c := newCrash()
	c.Known = t.known[input]
	t.firsts[c] = f
	t.byKey[key] = c
	t.crashes = append(t.crashes, c)
	return c, true
}

// repeat counts n more of the failure whose output has key (a worker's count
// of the repeats it did not send).
func (t *failureTable) repeat(key string, n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.byKey[key]; c != nil {
		c.Count += n
	}
}

// slowInput keeps newSlow's Crash as the build's slow input unless it has one,
// whose count grows. It returns the slow input and whether it is new.
func (t *failureTable) slowInput(newSlow func() *Crash) (*Crash, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.slow != nil {
		t.slow.Count++
		return t.slow, false
	}
	t.slow = newSlow()
	return t.slow, true
}

// update changes c under the lock and returns a copy of it, as it is then.
func (t *failureTable) update(c *Crash, change func(c *Crash)) *Crash {
	t.mu.Lock()
	defer t.mu.Unlock()
	if change != nil {
		change(c)
	}
	cc := *c
	return &cc
}

// fixed forgets c: its input passes on a new build.
func (t *failureTable) fixed(c *Crash) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, x := range t.crashes {
		if x == c {
			t.crashes = append(t.crashes[:i], t.crashes[i+1:]...)
			break
		}
	}
	delete(t.firsts, c)
	for k, x := range t.byKey {
		if x == c {
			delete(t.byKey, k)
		}
	}
}

// list returns the recorded crashes themselves (read them through update).
func (t *failureTable) list() []*Crash {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]*Crash(nil), t.crashes...)
}

// first returns the failure c was first found as.
func (t *failureTable) first(c *Crash) *failure.Failure {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.firsts[c]
}

// count is the number of distinct failures (a slow input is none).
func (t *failureTable) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.crashes)
}

// snapshot returns copies of the crashes, and last of the slow input if there
// is one.
func (t *failureTable) snapshot() []*Crash {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*Crash, 0, len(t.crashes)+1)
	for _, c := range t.crashes {
		cc := *c
		out = append(out, &cc)
	}
	if t.slow != nil {
		cc := *t.slow
		out = append(out, &cc)
	}
	return out
}
