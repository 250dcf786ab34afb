package main

import (
	"strings"
	"testing"
	"time"
)

// TestReportGoals: the goals section says "All met" only when both engines ran
// and fuzzls met every goal; a target run by one engine is named as not checked.
func TestReportGoals(t *testing.T) {
	c := &config{budget: time.Minute, covBudget: 5 * time.Minute, trials: 1, parallel: 2}
	ts := []target{
		{Name: "FuzzMagic32", Pkg: "planted", Expect: "magic"},
		{Name: "FuzzToml", Pkg: "parsers", CoverPkg: "toml"},
	}
	magic := []run{
		{Engine: "fuzzls", Target: "FuzzMagic32", Trial: 1, Found: true, TTC: 0.1},
		{Engine: "native", Target: "FuzzMagic32", Trial: 1},
	}
	cov := func(eng string, blocks int) run {
		return run{Engine: eng, Target: "FuzzToml", Trial: 1, Blocks: blocks, TotalBlocks: 1000, Stmts: blocks, TotalStmts: 1000}
	}
	goals := func(runs []run) string {
		r := report(c, ts, runs, time.Minute)
		_, g, _ := strings.Cut(r, "## Goals")
		g, _, _ = strings.Cut(g, "\n## ")
		return g
	}
	for _, tc := range []struct {
		name string
		runs []run
		want []string
		not  []string
	}{
		{"met", append(magic, cov("fuzzls", 600), cov("native", 400)), []string{"All met."}, []string{"not met", "not checked"}},
		{"missed", append(magic, cov("fuzzls", 450), cov("native", 400)), []string{"not met: FuzzToml: coverage 450 blocks, not 1.2× native's 400"}, []string{"All met", "not checked"}},
		{"one engine", append(magic[:1:1], cov("fuzzls", 600)), []string{"None missed of those checked.", "not checked (one engine only): FuzzMagic32, FuzzToml"}, []string{"All met"}},
	} {
		g := goals(tc.runs)
		for _, w := range tc.want {
			if !strings.Contains(g, w) {
				t.Errorf("%s: goals do not say %q:\n%s", tc.name, w, g)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(g, w) {
				t.Errorf("%s: goals say %q:\n%s", tc.name, w, g)
			}
		}
	}
}
