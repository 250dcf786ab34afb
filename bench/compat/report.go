package main

import (
	"fmt"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"fuzzls.dev/fuzzls/bench/internal/stats"
)

// row is one target on one Go version: each engine's recorded runs, in trial
// order.
type row struct {
	t      target
	v      string
	fz, nt []result
}

// built are the runs that built and ran the target.
func built(rs []result) []result {
	var out []result
	for _, r := range rs {
		if r.Built && r.Skipped == "" {
			out = append(out, r)
		}
	}
	return out
}

// stmts are the statements of the runs whose corpus was replayed.
func stmts(rs []result) []float64 {
	var out []float64
	for _, r := range built(rs) {
		if r.Stmts > 0 {
			out = append(out, float64(r.Stmts))
		}
	}
	return out
}

// perWorker are the runs' executions per second per worker, of the runs that
// fuzzed (not those whose time ran out in go test's baseline).
func perWorker(rs []result) []float64 {
	var out []float64
	for _, r := range built(rs) {
		if rate(r) != "—" && r.Parallel > 0 {
			out = append(out, float64(r.Execs)/r.Fuzzed/float64(r.Parallel))
		}
	}
	return out
}

// curve is the median statements at each checkpoint over the runs that have all
// of them; nil for none.
func curve(rs []result) []float64 {
	var out []float64
	for i := range checkpoints {
		var at []float64
		for _, r := range built(rs) {
			if len(r.Curve) == len(checkpoints) {
				at = append(at, float64(r.Curve[i]))
			}
		}
		if len(at) == 0 {
			return nil
		}
		out = append(out, stats.Median(at))
	}
	return out
}

// reach is the earliest checkpoint at which fuzzls's median statements reach
// go test's final median, as a fraction of -fuzztime; +Inf when none does, NaN
// when either is not known.
func (w row) reach() float64 {
	fc, nt := curve(w.fz), stats.Median(stmts(w.nt))
	if fc == nil || math.IsNaN(nt) {
		return math.NaN()
	}
	for i, s := range fc {
		if s >= nt {
			return checkpoints[i]
		}
	}
	return math.Inf(1)
}

// ratio is a/b as "1.23×", "—" when either is not known.
func ratio(a, b float64) string {
	if math.IsNaN(a) || math.IsNaN(b) || b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// med is the median of xs with prec decimals, "—" for none.
func med(xs []float64, prec int) string {
	if len(xs) == 0 {
		return "—"
	}
	return strconv.FormatFloat(stats.Median(xs), 'f', prec, 64)
}

// builds is ✓ when every run built, ✗ when none, else how many did.
func builds(rs []result) string {
	switch n := len(built(rs)); {
	case len(rs) == 0:
		return "—"
	case n == len(rs):
		return "✓"
	case n == 0:
		return "✗"
	default:
		return fmt.Sprintf("%d/%d ✓", n, len(rs))
	}
}

// failures is "none", or the count by kind over the runs ("2 panic, 1 hang"),
// and in how many runs when there are several.
func failures(rs []result) string {
	rs = built(rs)
	if len(rs) == 0 {
		return "—"
	}
	kinds := map[string]int{}
	var order []string
	failed := 0
	for _, r := range rs {
		if len(r.Failures) > 0 {
			failed++
		}
		for _, f := range r.Failures {
			k, _, _ := strings.Cut(f, ":")
			if kinds[k] == 0 {
				order = append(order, k)
			}
			kinds[k]++
		}
	}
	if failed == 0 {
		return "none"
	}
	var parts []string
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
	}
	s := strings.Join(parts, ", ")
	if len(rs) > 1 {
		s += fmt.Sprintf(" (in %d of %d runs)", failed, len(rs))
	}
	return s
}

func fraction(f float64) string {
	switch {
	case math.IsNaN(f):
		return "—"
	case math.IsInf(f, 1):
		return "not reached"
	}
	return "≤ " + strconv.FormatFloat(f, 'g', 3, 64)
}

// report is the markdown tables, the summary over targets and the notes.
func report(c *config, ts []target, versions []string, rs []result, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Compatibility: real projects' own fuzz targets, fuzzls vs go test -fuzz\n\n")
	load, _ := os.ReadFile("/proc/loadavg")
	lf := strings.Fields(string(load))
	trials := 0
	for _, r := range rs {
		trials = max(trials, r.Trial)
	}
	fmt.Fprintf(&b, "%s · %s · %s/%s · %d CPUs (load %s) · -fuzztime %s per target, engine, Go version and trial · up to %d trials · -parallel %d · %s in all (runs recorded before not counted)\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), c.version, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(),
		strings.Join(lf[:min(3, len(lf))], " "), c.fuzztime, trials, c.parallel, took.Round(time.Second))
	byVersion := map[string]int{}
	for _, r := range rs {
		if r.Engine == "fuzzls" {
			byVersion[r.Fuzzls]++
		}
	}
	if len(byVersion) > 1 {
		b.WriteString("The fuzzls runs recorded were made by more than one build:")
		for _, v := range slices.Sorted(maps.Keys(byVersion)) {
			fmt.Fprintf(&b, " %s (%d runs);", v, byVersion[v])
		}
		b.WriteString(" the figures mix them.\n\n")
	}
	b.WriteString("Trials: runs of fuzzls / of go test. Builds: ✓ or ✗ (the message is in the notes). Execs/s per worker: the median over the runs. Failures: how many fuzzls reported (it goes on after one) and go test's (it stops at its first), by kind. Statements: of the module's packages the test imports (std: the package), covered by a `go test -coverprofile` replay of the engine's corpus with the target's own seeds; the median over the runs, the ratio of the medians, Mann-Whitney U's two-sided p and Vargha-Delaney's A12 (the probability that a fuzzls run covers more than a go test run; ties count a half). Reached: the earliest fraction of -fuzztime at which fuzzls's median covers go test's final median (entries replayed by when their files were written).\n\n")
	b.WriteString("| target | module | kind | Go | trials | builds fuzzls | builds go test | execs/s/worker fuzzls | execs/s/worker go test | ratio | failures fuzzls | failures go test | statements | fuzzls | go test | ratio | p | A12 | fuzzls reached go test's final |\n")
	b.WriteString("| --- | --- | --- | --- | :-: | :-: | :-: | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	var rows []row
	for _, t := range ts {
		for _, v := range versions {
			w := row{t: t, v: v}
			for _, r := range rs {
				if r.Target == t.id() && r.Go == v {
					if r.Engine == "fuzzls" {
						w.fz = append(w.fz, r)
					} else {
						w.nt = append(w.nt, r)
					}
				}
			}
			if len(w.fz)+len(w.nt) > 0 {
				slices.SortFunc(w.fz, func(a, b result) int { return a.Trial - b.Trial })
				slices.SortFunc(w.nt, func(a, b result) int { return a.Trial - b.Trial })
				rows = append(rows, w)
			}
		}
	}
	var notes []string
	var broken []string // targets go test fuzzes and fuzzls does not
	var covRatios, speedRatios, reaches []float64
	ahead, behind, neither := 0, 0, 0
	for _, w := range rows {
		t, v := w.t, w.v
		all := append(append([]result(nil), w.fz...), w.nt...)
		mod := all[0].Module
		if all[0].Skipped != "" {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | skipped: %s |||||||||||||||\n", t.Name+" ("+t.Pkg+")", mod, t.Kind, v, all[0].Skipped)
			continue
		}
		fs, ns := stmts(w.fz), stmts(w.nt)
		fw, nw := perWorker(w.fz), perWorker(w.nt)
		p, a12 := "—", "—"
		if len(fs) > 0 && len(ns) > 0 {
			pv, av := stats.MannWhitneyP(fs, ns), stats.A12(fs, ns)
			p, a12 = fmt.Sprintf("%.3g", pv), fmt.Sprintf("%.2f", av)
			covRatios = append(covRatios, stats.Median(fs)/stats.Median(ns))
			switch {
			case pv < 0.05 && av > 0.71:
				ahead++
			case pv < 0.05 && av < 0.29:
				behind++
			default:
				neither++
			}
		}
		if len(fw) > 0 && len(nw) > 0 {
			speedRatios = append(speedRatios, stats.Median(fw)/stats.Median(nw))
		}
		reach := w.reach()
		if !math.IsNaN(reach) {
			reaches = append(reaches, reach)
		}
		total := 0
		for _, r := range all {
			total = max(total, r.TotalStmts)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d/%d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			t.Name+" ("+t.Pkg+")", mod, t.Kind, v, len(w.fz), len(w.nt), builds(w.fz), builds(w.nt),
			med(fw, 0), med(nw, 0), ratio(stats.Median(fw), stats.Median(nw)),
			failures(w.fz), failures(w.nt), count(total), med(fs, 1), med(ns, 1), ratio(stats.Median(fs), stats.Median(ns)),
			p, a12, fraction(reach))
		if len(built(w.nt)) > 0 && len(built(w.fz)) < len(w.fz) {
			for _, f := range w.fz {
				if !f.Built {
					broken = append(broken, fmt.Sprintf("%s on %s, trial %d: %s", t.id(), v, f.Trial, f.Err))
				}
			}
		}
		for _, r := range all {
			at := fmt.Sprintf("%s, %s, %s", t.id(), v, map[string]string{"fuzzls": "fuzzls", "native": "go test"}[r.Engine])
			if len(w.fz) > 1 || len(w.nt) > 1 {
				at += fmt.Sprintf(", trial %d", r.Trial)
			}
			if r.Err != "" {
				notes = append(notes, fmt.Sprintf("%s: %s", at, r.Err))
			}
			for _, fl := range r.Failures {
				notes = append(notes, fmt.Sprintf("%s found: %s", at, strings.ReplaceAll(fl, "|", `\|`)))
			}
			if r.Baseline != "" && len(r.Failures) == 0 {
				notes = append(notes, fmt.Sprintf("%s: the time ran out while it was gathering baseline coverage (%s seeds run): it never fuzzed", at, strings.TrimSuffix(r.Baseline, ",")))
			}
			if r.Flake != "" {
				notes = append(notes, fmt.Sprintf("%s: %s", at, r.Flake))
			}
			for _, wn := range r.Warnings { // the build's: the same in every trial
				if n := fmt.Sprintf("%s, %s, fuzzls warned: %s", t.id(), v, wn); !slices.Contains(notes, n) {
					notes = append(notes, n)
				}
			}
		}
	}

	b.WriteString("\n## Summary over targets\n\n")
	fmt.Fprintf(&b, "Over %d rows (a target on a Go version) with coverage from both engines:\n\n", len(covRatios))
	if len(covRatios) > 0 {
		fmt.Fprintf(&b, "- Coverage, ratio of the median statements fuzzls/go test: median %.2f× (from %.2f× to %.2f×).\n",
			stats.Median(covRatios), slices.Min(covRatios), slices.Max(covRatios))
	}
	fmt.Fprintf(&b, "- fuzzls significantly ahead (p < 0.05, A12 > 0.71) on %d, significantly behind (p < 0.05, A12 < 0.29) on %d, neither on %d. With fewer than 4 runs of each engine no p is below 0.05.\n", ahead, behind, neither)
	if len(reaches) > 0 {
		notReached := 0
		for _, f := range reaches {
			if math.IsInf(f, 1) {
				notReached++
			}
		}
		// the upper middle for an even count: a checkpoint by which at least half the rows reached
		slices.Sort(reaches)
		fmt.Fprintf(&b, "- Speed to coverage: fuzzls's median reaches go test's final median coverage at %s of -fuzztime on the median row (checkpoints %v; not reached within -fuzztime on %d of %d rows).\n",
			fraction(reaches[len(reaches)/2]), checkpoints, notReached, len(reaches))
	}
	if len(speedRatios) > 0 {
		fmt.Fprintf(&b, "- Throughput per worker, ratio of the median execs/s fuzzls/go test: min %.2f×, median %.2f× over %d rows.\n",
			slices.Min(speedRatios), stats.Median(speedRatios), len(speedRatios))
	}

	b.WriteString("\n## Coverage over time\n\nMedian statements covered by the entries each engine had found by each fraction of -fuzztime (with the seeds).\n\n| target | Go | engine |")
	for _, cp := range checkpoints {
		fmt.Fprintf(&b, " %g |", cp)
	}
	b.WriteString("\n| --- | --- | --- |" + strings.Repeat(" ---: |", len(checkpoints)) + "\n")
	for _, w := range rows {
		for _, e := range []struct {
			name string
			rs   []result
		}{{"fuzzls", w.fz}, {"go test", w.nt}} {
			if cv := curve(e.rs); cv != nil {
				fmt.Fprintf(&b, "| %s | %s | %s |", w.t.Name+" ("+w.t.Pkg+")", w.v, e.name)
				for _, s := range cv {
					fmt.Fprintf(&b, " %s |", strconv.FormatFloat(s, 'f', -1, 64))
				}
				b.WriteString("\n")
			}
		}
	}

	b.WriteString("\n## Every target go test fuzzes, fuzzls fuzzes\n\n")
	if len(broken) == 0 {
		b.WriteString("Holds for every target measured.\n")
	}
	for _, s := range broken {
		fmt.Fprintf(&b, "- does not hold: %s\n", s)
	}
	if len(notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, s := range notes {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	return b.String()
}

func count(n int) string {
	if n == 0 {
		return "—"
	}
	return strconv.Itoa(n)
}
