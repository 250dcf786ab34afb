package engine

import (
	"testing"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/instrument"
)

// TestHookTable: the workers' reports add up per function, a problem is
// returned (to log) the first time only, and another build starts again.
func TestHookTable(t *testing.T) {
	var h hookTable
	b1, b2 := &instrument.Binary{}, &instrument.Binary{}
	stack := "panic: boom\n\ngoroutine 7 [running]:\nfuzzrt.(*hook).apply.func1()\n\t/x/hooks.go:1 +0x1\npanic({0x1, 0x2})\n\t/go/src/runtime/panic.go:783 +0x132\nexample.com/p.FuzzX.func1({0x0, 0x0, 0x0}, 0x1)\n\t/w/p_test.go:12 +0x25\n"
	if p := h.merge(b1, []fuzzrt.HookStats{{Name: "m", Kind: "mutator", Execs: 10, Finds: 1}}); len(p) != 0 {
		t.Errorf("problems %v", p)
	}
	p := h.merge(b1, []fuzzrt.HookStats{{Name: "m", Kind: "mutator", Execs: 5, Panics: 2, Problem: stack}, {Name: "g", Kind: "generator", Execs: 3}})
	if len(p) != 1 || p[0].Name != "m" {
		t.Fatalf("problems %v, want m's", p)
	}
	if got, want := problemLine(p[0].Problem), "panicked: boom at /w/p_test.go:12 (its input was not run)"; got != want {
		t.Errorf("problemLine: %q, want %q", got, want)
	}
	if p := h.merge(b1, []fuzzrt.HookStats{{Name: "m", Kind: "mutator", Problem: "panic: again"}}); len(p) != 0 {
		t.Errorf("a second problem is logged: %v", p)
	}
	l := h.list(b1)
	if len(l) != 2 || l[0] != (MutatorStats{Name: "m", Kind: "mutator", Execs: 15, Finds: 1, Panics: 2, Problem: stack}) || l[1].Execs != 3 {
		t.Errorf("list %+v", l)
	}
	if l := h.list(b2); l != nil {
		t.Errorf("another build's list: %+v", l)
	}
	h.merge(b2, []fuzzrt.HookStats{{Name: "g", Kind: "generator", Execs: 1}})
	if l := h.list(b2); len(l) != 1 || l[0].Execs != 1 {
		t.Errorf("after a new build: %+v", l)
	}
}
