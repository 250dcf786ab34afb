package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fuzzls.dev/fuzzls/bench/internal/engines"
)

func run(eng string, trial, stmts int, curve ...int) result {
	return result{Run: engines.Run{Engine: eng, Target: "m.FuzzX", Trial: trial, Stmts: stmts, TotalStmts: 100, Execs: 1000, Fuzzed: 10},
		Go: "go1.26.8", FuzzTime: "10s", Parallel: 2, Built: true, Curve: curve, Module: "m@v1"}
}

// TestStateResume: a run is recorded at once; reopened with -resume its key is
// done and a line cut short by a crash is ignored, not fatal, and not joined to
// the next; reopened without, the file is moved aside with its runs.
func TestStateResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.jsonl")
	st, err := openState(path, false)
	if err != nil {
		t.Fatal(err)
	}
	r1, r2 := run("fuzzls", 1, 50), run("native", 1, 40)
	if err := st.add(r1); err != nil {
		t.Fatal(err)
	}
	st.Close()
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"engine":"native","targ`) // a crash mid-line
	f.Close()

	st, err = openState(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.runs) != 1 || !st.done[r1.key()] || st.done[r2.key()] {
		t.Fatalf("resumed: %d runs, done %v; want r1 only", len(st.runs), st.done)
	}
	if err := st.add(r2); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = openState(path, true)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if len(st.runs) != 2 || !st.done[r2.key()] {
		t.Fatalf("after the cut line, a run added: %d runs recorded, want 2", len(st.runs))
	}
	other := r1
	other.FuzzTime = "5m"
	if st.done[other.key()] {
		t.Error("a run of another -fuzztime counts as recorded")
	}

	st, err = openState(path, false)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	aside, _ := filepath.Glob(strings.TrimSuffix(path, ".jsonl") + "-*.jsonl")
	if len(st.runs) != 0 || len(aside) != 1 {
		t.Fatalf("without -resume: %d runs, %v moved aside; want none and one file", len(st.runs), aside)
	}
	if data, _ := os.ReadFile(aside[0]); strings.Count(string(data), `"engine"`) != 3 {
		t.Errorf("the file moved aside lost runs:\n%s", data)
	}
}

// TestReach: the earliest checkpoint at which fuzzls's median curve reaches go
// test's final median; never, when it does not; unknown without curves.
func TestReach(t *testing.T) {
	nt := []result{run("native", 1, 30), run("native", 2, 34), run("native", 3, 32)} // final median 32
	for _, tc := range []struct {
		fz   []result
		want float64
	}{
		{[]result{run("fuzzls", 1, 40, 10, 20, 32, 35, 40), run("fuzzls", 2, 40, 10, 31, 33, 35, 40), run("fuzzls", 3, 40, 10, 20, 31, 35, 40)}, 0.2},
		{[]result{run("fuzzls", 1, 40, 32, 32, 32, 32, 40)}, 0.05},
		{[]result{run("fuzzls", 1, 31, 10, 20, 30, 31, 31)}, math.Inf(1)},
	} {
		if got := (row{fz: tc.fz, nt: nt}).reach(); got != tc.want {
			t.Errorf("reach = %v, want %v", got, tc.want)
		}
	}
	if got := (row{fz: []result{run("fuzzls", 1, 40)}, nt: nt}).reach(); !math.IsNaN(got) {
		t.Errorf("reach without a curve = %v, want NaN", got)
	}
}

// TestReportSummary: the per-target statistics and the counts over targets.
func TestReportSummary(t *testing.T) {
	c := &config{fuzztime: 10 * time.Second, parallel: 2}
	a := target{Module: "m", Version: "v1", Pkg: ".", Name: "FuzzX", Kind: "k"}
	var rs []result
	for i, s := range []int{50, 52, 51, 53, 54} {
		f := run("fuzzls", i+1, s, s, s, s, s, s)
		f.Execs = 4000
		rs = append(rs, f, run("native", i+1, 40+i, 40+i, 40+i, 40+i, 40+i, 40+i))
	}
	rs[0].Fuzzls, rs[2].Fuzzls = "fuzzls v1", "fuzzls v2"
	rs[0].Warnings, rs[2].Warnings = []string{"no hooks in p"}, []string{"no hooks in p"}
	md := report(c, []target{a}, []string{"go1.26.8"}, rs, time.Minute)
	if n := strings.Count(md, "warned: no hooks in p"); n != 1 {
		t.Errorf("the build's warning is noted %d times, want once", n)
	}
	for _, want := range []string{
		"| 5/5 | ✓ | ✓ | 200 | 50 | 4.00× | none | none | 100 | 52.0 | 42.0 | 1.24× | 0.00794 | 1.00 | ≤ 0.05 |",
		"median 1.24×",
		"ahead (p < 0.05, A12 > 0.71) on 1, significantly behind (p < 0.05, A12 < 0.29) on 0, neither on 0",
		"at ≤ 0.05 of -fuzztime on the median row",
		"min 4.00×, median 4.00× over 1 rows",
		" (3 runs); fuzzls v1 (1 runs); fuzzls v2 (1 runs); the figures mix them",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}
