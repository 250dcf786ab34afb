// Command mutators measures what a target's own grammar-aware mutator (package
// fuzzhook) adds: on testdata/expr, whose planted bug needs a valid expression
// nested twelve deep, it runs fuzzls on FuzzExprGrammar (the mutator),
// fuzzls on FuzzExpr (the same target without it) and go test -fuzz on
// FuzzExpr, each for the same time, and prints the medians of their trials
// side by side:
//
//	go run ./bench/mutators [-trials 5] [-budget 60s] [-parallel 1] [-out bench-results]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"fuzzls.dev/fuzzls/bench/internal/engines"
	"fuzzls.dev/fuzzls/internal/testws"
)

// arm is one column of the table: an engine on a target.
type arm struct {
	name, engine, target string
}

var arms = []arm{
	{"fuzzls + grammar mutator", "fuzzls", "FuzzExprGrammar"},
	{"fuzzls", "fuzzls", "FuzzExpr"},
	{"go test -fuzz", "native", "FuzzExpr"},
}

// planted is what the planted bug's failure says.
const planted = "index out of range [12]"

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func main() {
	trials := flag.Int("trials", 5, "trials per arm")
	budget := flag.Duration("budget", 60*time.Second, "fuzzing time per run")
	parallel := flag.Int("parallel", 1, "workers per run")
	out := flag.String("out", "bench-results", "where the report and logs go")
	bin := flag.String("fuzzls", "", "fuzzls binary (default: built from ./cmd/fuzzls)")
	flag.Parse()
	b, err := engines.Setup("mutators", *out, *bin, logf)
	if err != nil {
		logf("%v", err)
		os.Exit(1)
	}
	defer b.Close()
	dir, err := workspace(b.Tmp)
	if err != nil {
		logf("%v", err)
		os.Exit(1)
	}
	var runs []engines.Run
	for trial := 1; trial <= *trials && b.Ctx.Err() == nil; trial++ {
		for _, a := range arms {
			r := runOne(b, a, dir, trial, *budget, *parallel)
			r.Engine = a.name
			logf("trial %d, %s: found %v in %.1fs, %d execs %s", trial, a.name, r.Found, r.TTC, r.Execs, r.Err)
			runs = append(runs, r)
		}
	}
	md := report(runs, *trials, *budget, *parallel, b.Version)
	if path, err := b.Write(md, runs); err != nil {
		logf("%v", err)
	} else {
		logf("report: %s", path)
	}
}

// workspace copies testdata/expr into tmp, with a go.mod that takes package
// fuzzhook from this repository wherever the copy is.
func workspace(tmp string) (string, error) {
	dir := filepath.Join(tmp, "expr")
	if err := testws.CopyTree(filepath.Join("bench", "mutators", "testdata", "expr"), dir, nil); err != nil {
		return "", err
	}
	hook, err := filepath.Abs("fuzzhook")
	if err != nil {
		return "", err
	}
	mod := "module example.com/expr\n\ngo 1.22\n\nrequire fuzzls.dev/fuzzls/fuzzhook v0.0.0\n\nreplace fuzzls.dev/fuzzls/fuzzhook => " + hook + "\n"
	return dir, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644)
}

func runOne(b *engines.Bench, a arm, dir string, trial int, budget time.Duration, parallel int) engines.Run {
	r := engines.Run{Engine: a.engine, Target: a.target, Trial: trial}
	cache, err := os.MkdirTemp(b.Tmp, "cache-")
	if err != nil {
		r.Err = err.Error()
		return r
	}
	defer os.RemoveAll(cache)
	crashers := filepath.Join(dir, "testdata", "fuzz")
	os.RemoveAll(crashers)
	defer os.RemoveAll(crashers)
	r.Log = fmt.Sprintf("%s-%s-%d.log", a.target, a.engine, trial)
	logFile, err := os.Create(filepath.Join(b.Logs, r.Log))
	if err != nil {
		r.Err = err.Error()
		return r
	}
	defer logFile.Close()
	ctx, cancel := context.WithTimeout(b.Ctx, budget+3*time.Minute)
	defer cancel()
	var cmd *exec.Cmd
	if a.engine == "fuzzls" {
		cmd = engines.Command(ctx, dir, b.Fuzzls, "fuzz", "-json", "-fuzztime", budget.String(), "-parallel", strconv.Itoa(parallel),
			"-minimizetime", "1s", "-run", "^"+a.target+"$", "-cachedir", cache, ".")
	} else {
		cmd = engines.Command(ctx, dir, "go", "test", "-run=^$", "-fuzz=^"+a.target+"$", "-fuzztime="+budget.String(),
			"-parallel="+strconv.Itoa(parallel), "-fuzzminimizetime=1s", ".", "-args", "-test.fuzzcachedir="+cache)
	}
	fmt.Fprintf(logFile, "$ %s\n", strings.Join(cmd.Args, " "))
	start := time.Now()
	lines, wait, err := engines.StartLines(cmd)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	var fail string
	if a.engine == "fuzzls" {
		fail = engines.ParseFuzzls(lines, logFile, start, &r)
	} else {
		fail = engines.ParseNative(lines, logFile, start, &r)
	}
	werr := wait()
	r.Wall = time.Since(start).Seconds()
	r.Found = strings.Contains(fail, planted)
	if fail != "" && !r.Found {
		r.Other = engines.FirstLine(fail)
	}
	var ee *exec.ExitError
	if werr != nil && fail == "" && r.Flake == "" && !errors.As(werr, &ee) {
		r.Err = werr.Error()
	}
	return r
}

// report is the markdown table: per arm, the trials that found the bug, the
// median time to it (a trial that did not find it counts as the budget, so a
// median at the budget means most did not), and the median executions.
func report(runs []engines.Run, trials int, budget time.Duration, parallel int, version string) string {
	var s strings.Builder
	fmt.Fprintf(&s, "# Custom mutators (%s)\n\n%s; %d trials of %s, -parallel %d, on bench/mutators/testdata/expr\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), version, trials, budget, parallel)
	s.WriteString("| | found | median time to the bug | median execs |\n| --- | --- | --- | --- |\n")
	for _, a := range arms {
		var ttc []float64
		var execs []int64
		found, n := 0, 0
		for _, r := range runs {
			if r.Engine != a.name {
				continue
			}
			n++
			t := budget.Seconds()
			if r.Found {
				found++
				t = r.TTC
			}
			ttc = append(ttc, t)
			execs = append(execs, r.Execs)
		}
		med := "-"
		if len(ttc) > 0 {
			slices.Sort(ttc)
			slices.Sort(execs)
			if m := ttc[len(ttc)/2]; found > len(ttc)/2 {
				med = fmt.Sprintf("%.2f s", m)
			} else {
				med = fmt.Sprintf("not found (> %s)", budget)
			}
		}
		me := int64(0)
		if len(execs) > 0 {
			me = execs[len(execs)/2]
		}
		fmt.Fprintf(&s, "| %s | %d/%d | %s | %d |\n", a.name, found, n, med, me)
	}
	return s.String()
}
