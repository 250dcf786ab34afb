package fuzzrt

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"
)

// Goroutine leaks: an input that leaves goroutines blocked for good (a channel
// never closed, a lock never released, a context never cancelled). Off unless the
// coordinator sets EnvLeaks. After each execution that passed, the worker compares
// the number of goroutines with the number between executions; that one counter
// is all the per-execution path reads. Only when it grew are stacks looked at:
//   - goroutines that end within leakGrace are no leak (work finishing late);
//   - what is still there may be started once and kept (a pool, a cache's janitor,
//     a lazily started logger), so the input runs twice more: a leak leaves more
//     goroutines each time, while something started once does not, and then
//     counts as part of the process;
//   - the report holds the goroutines the two runs left, told apart by their ids
//     in dumps taken before and after, blocked ones only (a goroutine still
//     running is a hang's business), each with its "created by" frame: the line
//     that started it, where the coordinator places the failure.

const (
	// EnvLeaks turns the check on in a worker ("1").
	EnvLeaks = "FUZZLS_LEAKS"
	// LeakPrefix starts the failure text of an input that leaks goroutines.
	LeakPrefix = "fuzzls: goroutine leak: "

	leakGrace   = 100 * time.Millisecond
	leakReruns  = 2
	maxLeakText = 16 << 10
)

type leakCheck struct {
	base int // goroutines alive between executions
}

func newLeakCheck() *leakCheck {
	if os.Getenv(EnvLeaks) != "1" {
		return nil
	}
	return &leakCheck{base: runtime.NumGoroutine()}
}

// check runs after an execution that passed; rerun runs the same input again. It
// returns the failure text of a leak, or "".
func (l *leakCheck) check(rerun func()) string {
	if l == nil {
		return ""
	}
	n := runtime.NumGoroutine()
	for i := 0; n > l.base && i < 4; i++ {
		// testing's goroutine that ran the input signals its end before it
		// exits: a yield or two lets it go, without a sleep on the fast path.
		runtime.Gosched()
		n = runtime.NumGoroutine()
	}
	if n <= l.base {
		l.base = n // something started once may have ended
		return ""
	}
	if n = settle(l.base); n <= l.base {
		return ""
	}
	before := goroutineDump()
	for range leakReruns {
		rerun()
	}
	after := settle(n)
	if after-n < leakReruns {
		l.base = after // started once, not by every run: part of the process now
		return ""
	}
	// Goroutines the reruns started may not have run yet on a loaded machine
	// (still runnable, not blocked): give them the grace to block.
	leaked := newBlockedGoroutines(before, goroutineDump())
	for deadline := time.Now().Add(leakGrace); len(leaked) < after-n && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
		leaked = newBlockedGoroutines(before, goroutineDump())
	}
	if len(leaked) == 0 {
		l.base = after
		return ""
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%seach run of the input leaves %d goroutines blocked (still there after %v)\n", LeakPrefix, (after-n)/leakReruns, leakGrace)
	for _, g := range leaked {
		if b.Len()+len(g) > maxLeakText {
			break
		}
		b.WriteString("\n")
		b.Write(g)
		b.WriteString("\n")
	}
	l.base = after
	return b.String()
}

// settle waits up to leakGrace for the number of goroutines to fall to want and
// returns the last number seen.
func settle(want int) int {
	deadline := time.Now().Add(leakGrace)
	n := runtime.NumGoroutine()
	for n > want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
		n = runtime.NumGoroutine()
	}
	return n
}

func goroutineDump() []byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// newBlockedGoroutines returns the goroutines of dump after that are not in
// before, are blocked (not running or runnable) and were started by a go
// statement (they have a "created by" frame).
func newBlockedGoroutines(before, after []byte) [][]byte {
	old := map[string]bool{}
	for g := range bytes.SplitSeq(before, []byte("\n\n")) {
		old[goroutineID(g)] = true
	}
	var out [][]byte
	for g := range bytes.SplitSeq(after, []byte("\n\n")) {
		id := goroutineID(g)
		if id == "" || old[id] || !bytes.Contains(g, []byte("\ncreated by ")) {
			continue
		}
		header, _, _ := bytes.Cut(g, []byte("\n"))
		if bytes.Contains(header, []byte("[running")) || bytes.Contains(header, []byte("[runnable")) {
			continue
		}
		out = append(out, bytes.TrimSpace(g))
	}
	return out
}

// goroutineID is the id in a goroutine's header line ("goroutine 12 [chan receive]:").
func goroutineID(g []byte) string {
	g = bytes.TrimSpace(g)
	rest, ok := bytes.CutPrefix(g, []byte("goroutine "))
	if !ok {
		return ""
	}
	id, _, _ := bytes.Cut(rest, []byte(" "))
	if _, err := strconv.Atoi(string(id)); err != nil {
		return ""
	}
	return string(id)
}
