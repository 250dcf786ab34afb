package fuzzrt

import (
	"flag"
	"strings"
	"testing"
)

// TestHookMix: a hook's share of the mutations follows the new coverage it
// found per execution, between hookFloor and hookCeil, and the worker's own
// mutations always keep a share.
func TestHookMix(t *testing.T) {
	share := func(x *hookMix, k *hook) float64 {
		r := NewRand(1)
		n := 0
		for range 100000 {
			if x.pick(r) == k {
				n++
			}
		}
		return float64(n) / 100000
	}
	good := &hook{name: "good", mutate: func(b []byte, _ uint64) []byte { return b }}
	bad := &hook{name: "bad", mutate: func(b []byte, _ uint64) []byte { return b }}
	x := &hookMix{hooks: []*hook{good, bad}}
	x.bind([]string{"int", "[]uint8"})
	if good.arg != 1 || bad.arg != 1 {
		t.Fatalf("bound to arguments %d and %d, want 1 (the []byte)", good.arg, bad.arg)
	}
	if g, b := share(x, good), share(x, bad); g < 0.25 || g > 0.42 || b < 0.25 || b > 0.42 {
		t.Errorf("before any execution: shares %.2f and %.2f, want a third each", g, b)
	}
	// good finds one in ten, bad nothing, the worker's own one in a thousand.
	good.execs, good.finds = 10000, 1000
	bad.execs = 10000
	x.ownExecs, x.ownFinds = 10000, 10
	x.weigh()
	if g := share(x, good); g < 0.75 || g > 0.85 {
		t.Errorf("the hook that finds: share %.2f, want hookCeil", g)
	}
	if b := share(x, bad); b < 0.04 || b > 0.06 {
		t.Errorf("the hook that finds nothing: share %.2f, want hookFloor", b)
	}
	x.weigh()
	if own := 1 - share(x, good) - share(x, bad); own < 0.1 {
		t.Errorf("the worker's own mutations: share %.2f", own)
	}
}

// TestHookApply: a mutator changes a string argument as bytes, a generator
// binds to the first argument of its value's type, and a panic is caught and
// kept with its stack; a hook with no argument to work on says why.
func TestHookApply(t *testing.T) {
	types := []string{"int", "string", "[]uint8"}
	r := NewRand(1)
	m := &hook{mutate: func(b []byte, _ uint64) []byte { return append(b, '!') }}
	g := &hook{gen: func(uint64) any { return []byte("made") }}
	x := &hookMix{hooks: []*hook{m, g}}
	x.bind(types)
	vals := []any{1, "s", []byte("b")}
	if !m.apply(vals, r, types) || vals[1] != "s!" {
		t.Errorf("mutator: %v", vals)
	}
	if !g.apply(vals, r, types) || g.arg != 2 || string(vals[2].([]byte)) != "made" {
		t.Errorf("generator: %v, bound to %d", vals, g.arg)
	}
	p := &hook{mutate: func([]byte, uint64) []byte { panic("mine") }, arg: 1}
	if p.apply(vals, r, types) || p.panics != 1 || !strings.HasPrefix(p.problem, "panic: mine\n") || !strings.Contains(p.problem, "hooks_test.go") {
		t.Errorf("panic: applied, %d panics, problem %q", p.panics, p.problem)
	}
	st := (&hookMix{hooks: []*hook{p}}).report()
	if len(st) != 1 || st[0].Panics != 1 || st[0].Problem == "" {
		t.Errorf("report %+v", st)
	}
	if again := (&hookMix{hooks: []*hook{p}}).report(); again != nil {
		t.Errorf("reported again: %+v", again)
	}
	n := &hook{gen: func(uint64) any { return 1.5 }, arg: -1} // as the registry makes it
	if n.apply(vals, r, types) || !n.off || !strings.Contains(n.problem, "no argument of type float64") {
		t.Errorf("generator of a type the target does not take: off %v, problem %q", n.off, n.problem)
	}
}

// TestHookRegistry: the flag package fuzzhook looks up hands registrations to
// the registry, as fuzzhook's register calls it.
func TestHookRegistry(t *testing.T) {
	var r hookRegistry
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.Var(&r, hookFlag, "")
	add, ok := fs.Lookup(hookFlag).Value.(flag.Getter).Get().(func(string, string, any))
	if !ok {
		t.Fatalf("the flag's Get is %T, not fuzzhook's func(string, string, any)", fs.Lookup(hookFlag).Value.(flag.Getter).Get())
	}
	add("FuzzX", "m", func([]byte, uint64) []byte { return nil })
	add("FuzzX", "g", func(uint64) any { return 1 })
	add("FuzzX", "not a hook", 3)
	if hs := r.take(); len(hs) != 2 || hs[0].kind() != HookMutator || hs[1].kind() != HookGenerator {
		t.Errorf("registered %v", hs)
	}
	if err := fs.Set(hookFlag, "x"); err == nil {
		t.Error("the flag takes a value on the command line")
	}
}
