package engine

import (
	"strings"
	"sync"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/instrument"
)

// hookTable owns what the user's mutators and generators (package fuzzhook,
// fuzzrt/hooks.go) did in a build's fuzzing: the workers' reports summed per
// function. Like blockerState, a report of another build starts it again.
type hookTable struct {
	mu    sync.Mutex
	bin   *instrument.Binary
	stats []MutatorStats
}

// merge adds a worker of bin's report and returns the problems reported for
// the first time in this build (a hook's first panic, an unusable hook), to log.
func (h *hookTable) merge(bin *instrument.Binary, sts []fuzzrt.HookStats) (problems []MutatorStats) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.bin != bin {
		h.bin, h.stats = bin, nil
	}
	for _, st := range sts {
		i := 0
		for i < len(h.stats) && (h.stats[i].Name != st.Name || h.stats[i].Kind != st.Kind) {
			i++
		}
		if i == len(h.stats) {
			h.stats = append(h.stats, MutatorStats{Name: st.Name, Kind: st.Kind})
		}
		m := &h.stats[i]
		m.Execs += st.Execs
		m.Finds += st.Finds
		m.Panics += st.Panics
		if st.Problem != "" && m.Problem == "" {
			m.Problem = st.Problem
			problems = append(problems, *m)
		}
	}
	return problems
}

// list returns bin's figures; none for another build.
func (h *hookTable) list(bin *instrument.Binary) []MutatorStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	if bin == nil || h.bin != bin {
		return nil
	}
	return append([]MutatorStats(nil), h.stats...)
}

// problemLine is a hook's problem in one line: a panic's value and where the
// user's function panicked (the frame after runtime's panic in its stack).
func problemLine(p string) string {
	first, rest, _ := strings.Cut(p, "\n")
	if !strings.HasPrefix(first, "panic: ") {
		return first
	}
	lines := strings.Split(rest, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "panic(") && i+3 < len(lines) {
			loc := strings.TrimSpace(lines[i+3])
			if j := strings.LastIndex(loc, " +0x"); j > 0 {
				loc = loc[:j]
			}
			return "panicked: " + strings.TrimPrefix(first, "panic: ") + " at " + loc + " (its input was not run)"
		}
	}
	return "panicked: " + strings.TrimPrefix(first, "panic: ") + " (its input was not run)"
}
