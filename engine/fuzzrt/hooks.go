package fuzzrt

import (
	"errors"
	"flag"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"time"
)

// The user's own mutators and generators (package fuzzhook, its own module in
// fuzzls's repository). Neither package imports the other: in a worker, Main
// defines the flag hookFlag, whose value's Get returns the function that takes
// a registration; fuzzhook looks the flag up and, without it (under go test),
// does nothing. A worker fuzzes one target, so every registration it receives
// is its target's.

// hookFlag is the flag fuzzhook looks up (fuzzhook.hookFlag).
const hookFlag = "fuzzls.hooks"

// Hook kinds, as HookStats.Kind spells them.
const (
	HookMutator   = "mutator"
	HookGenerator = "generator"
)

// HookStats is what a worker says about one user hook: the executions of its
// inputs and the new coverage found by them since its last report, and the
// hook's panics. Problem is said once: the first panic (its value and stack),
// or why the hook cannot be used on the target.
type HookStats struct {
	Name    string // the user's function, as the runtime names it (pkg.FuzzX.func1)
	Kind    string // HookMutator or HookGenerator
	Execs   int64
	Finds   int64
	Panics  int64
	Problem string
}

// hook is one registered mutator (mutate) or generator (gen).
type hook struct {
	name   string
	mutate func([]byte, uint64) []byte
	gen    func(uint64) any
	arg    int  // the argument it makes or changes; -1 until known
	off    bool // unusable on this target (Problem says why)

	execs, finds, panics int64     // totals; executions and finds weigh it against the others
	sent                 HookStats // the totals last reported
	problem              string    // to report, once
}

// hookRegistry is the flag's value: the registrations received.
type hookRegistry struct {
	mu    sync.Mutex
	hooks []*hook
}

func (r *hookRegistry) String() string { return "" }
func (r *hookRegistry) Set(string) error {
	return errors.New("set by package fuzzhook's registrations, not on the command line")
}
func (r *hookRegistry) Get() any { return r.add }

// add takes one registration; the contract is fuzzhook's register.
func (r *hookRegistry) add(_, name string, h any) {
	k := &hook{name: name, arg: -1}
	switch fn := h.(type) {
	case func([]byte, uint64) []byte:
		k.mutate = fn
	case func(uint64) any:
		k.gen = fn
	default:
		return
	}
	r.mu.Lock()
	r.hooks = append(r.hooks, k)
	r.mu.Unlock()
}

// take returns the hooks registered so far.
func (r *hookRegistry) take() []*hook {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hooks
}

// define makes the registry reachable from fuzzhook.
func (r *hookRegistry) define() {
	if flag.Lookup(hookFlag) == nil {
		flag.Var(r, hookFlag, "fuzzls: where package fuzzhook's registrations go")
	}
}

func (k *hook) kind() string {
	if k.gen != nil {
		return HookGenerator
	}
	return HookMutator
}

// hookMix chooses, before each mutation of the loop, between the worker's own
// mutations and the hooks, in proportion to the new coverage each found per
// execution, with a floor so that none is starved: a hook that has not found
// anything for a while still runs hookFloor of the time.
type hookMix struct {
	hooks []*hook
	// own counts the executions and finds of the worker's own mutations.
	ownExecs, ownFinds int64
	cum                []int // cumulative per-mille share of each hook
	next               int64 // when (in own+hook executions) to weigh again
}

const (
	// hookFloor and hookCeil bound one hook's share of the mutations, in per
	// mille: a hook that finds less still explores, and the worker's own
	// mutations (and the comparison rounds) always keep a share.
	hookFloor = 50
	hookCeil  = 800
	// hookPrior is the executions a source is taken to have run with one find
	// before it ran any: a new hook starts at a fair share.
	hookPrior = 100
	// hookReportEvery is how often a worker sends its hooks' figures (and at
	// once on a find, a failure or a first problem): the coordinator kills
	// workers at the end of a run, so what they did since is not counted.
	hookReportEvery = 200 * time.Millisecond
)

// weigh recomputes the shares from the rates of finds.
func (x *hookMix) weigh() {
	rate := func(execs, finds int64) float64 { return float64(finds+1) / float64(execs+hookPrior) }
	sum := rate(x.ownExecs, x.ownFinds)
	for _, k := range x.hooks {
		if !k.off {
			sum += rate(k.execs+k.panics, k.finds)
		}
	}
	x.cum = x.cum[:0]
	total := 0
	for _, k := range x.hooks {
		share := 0
		if !k.off {
			share = min(hookCeil, max(hookFloor, int(1000*rate(k.execs+k.panics, k.finds)/sum)))
		}
		total = min(total+share, 900)
		x.cum = append(x.cum, total)
	}
	x.next = x.runs() + 256
}

// runs counts the mutations made so far, the hooks' panicked ones included.
func (x *hookMix) runs() int64 {
	n := x.ownExecs
	for _, k := range x.hooks {
		n += k.execs + k.panics
	}
	return n
}

// pick returns the hook to use for the next mutation, nil for the worker's own.
func (x *hookMix) pick(r *Rand) *hook {
	if len(x.hooks) == 0 {
		return nil
	}
	if x.runs() >= x.next {
		x.weigh()
	}
	p := r.Intn(1000)
	for i, c := range x.cum {
		if p < c {
			return x.hooks[i]
		}
	}
	return nil
}

// bind finds the argument each hook works on: a mutator's the first []byte or
// string, a generator's the first of its value's type (known at its first call).
func (x *hookMix) bind(types []string) {
	for _, k := range x.hooks {
		k.arg = -1
		if k.mutate == nil {
			continue
		}
		for i, t := range types {
			if t == "[]uint8" || t == "string" {
				k.arg = i
				break
			}
		}
		if k.arg < 0 {
			k.off = true
			k.problem = fmt.Sprintf("the target takes no []byte or string argument: arguments (%s)", joinTypes(types))
		}
	}
	x.weigh()
}

func joinTypes(types []string) string {
	s := ""
	for i, t := range types {
		if i > 0 {
			s += ", "
		}
		s += t
	}
	return s
}

// apply changes vals (a private copy) with k and reports whether there is an
// input to run: not when k panicked or turned out unusable.
func (k *hook) apply(vals []any, r *Rand, types []string) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			buf := make([]byte, 16<<10)
			buf = buf[:runtime.Stack(buf, false)]
			k.panics++
			if k.problem == "" && k.sent.Problem == "" {
				k.problem = fmt.Sprintf("panic: %v\n\n%s", v, buf)
			}
			ok = false
		}
	}()
	seed := r.Uint64()
	if k.gen != nil {
		v := k.gen(seed)
		if k.arg < 0 {
			name := "nil"
			if v != nil {
				name = TypeName(reflect.TypeOf(v))
				for i, t := range types {
					if t == name {
						k.arg = i
						break
					}
				}
			}
			if k.arg < 0 {
				k.off = true
				k.problem = fmt.Sprintf("the target takes no argument of type %s: arguments (%s)", name, joinTypes(types))
				return false
			}
		}
		if reflect.TypeOf(v) != reflect.TypeOf(vals[k.arg]) {
			return false
		}
		vals[k.arg] = v
		return true
	}
	switch v := vals[k.arg].(type) {
	case []byte:
		vals[k.arg] = cut(k.mutate(v, seed))
	case string:
		vals[k.arg] = string(cut(k.mutate([]byte(v), seed)))
	}
	return true
}

// cut bounds a hook's result to the largest input the runtime runs.
func cut(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b[:min(len(b), MaxInput)]
}

// report returns what changed since the last report, and marks it sent; nil
// when nothing did.
func (x *hookMix) report() []HookStats {
	var out []HookStats
	for _, k := range x.hooks {
		d := HookStats{Name: k.name, Kind: k.kind(), Execs: k.execs - k.sent.Execs, Finds: k.finds - k.sent.Finds, Panics: k.panics - k.sent.Panics, Problem: k.problem}
		if d.Execs == 0 && d.Finds == 0 && d.Panics == 0 && d.Problem == "" {
			continue
		}
		k.sent.Execs, k.sent.Finds, k.sent.Panics = k.execs, k.finds, k.panics
		if k.problem != "" {
			k.sent.Problem, k.problem = k.problem, ""
		}
		out = append(out, d)
	}
	return out
}
