// Command falsered counts false-red CI runs (golang/go#75804: a fuzz run that
// fails with no input that reproduces). It runs fuzzls's CI mode, `fuzzls fuzz
// -budget B -json -sarif`, several times over targets of bench/targets (planted
// bugs of several kinds, and real parsers) in a scratch copy of the module, each
// run with a fresh cache, while a stress loop of its own keeps the cores busy
// from other processes; and it replays every failure that failed a run with the
// replay fuzzls printed for it (`go test -run=FuzzXxx/<id>`, with -timeout=30s so
// that a hang ends; for the kinds go test does not see, `fuzzls fuzz -run`), its
// input saved into the scratch module's testdata/fuzz/FuzzXxx/. A failure that
// failed a run and does not fail again so is a false red (goal: 0); a run with
// status 1 and no such failure is one too. Runs that ended in fuzzls's own failure
// (status 3) and the flaky failures (warnings) are counted apart.
//
//	go run ./bench/falsered [-runs 4] [-budget 60s] [-load 4] [-parallel 2] [-targets re] [-out bench/results] [-fuzzls bin/fuzzls]
//
// Smoke test: go run ./bench/falsered -runs 1 -budget 20s -targets 'Prefix|TLV'
//
// The results go to -out (gitignored): falsered-<time>.md, falsered-<time>.json
// and each run's output and each replay's in falsered-<time>-logs/.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	"fuzzls.dev/fuzzls/bench/internal/engines"
	"fuzzls.dev/fuzzls/engine"
	efailure "fuzzls.dev/fuzzls/engine/failure"
	"fuzzls.dev/fuzzls/internal/jsonevents"
	"fuzzls.dev/fuzzls/internal/testws"
	"fuzzls.dev/fuzzls/protocol"
)

// targets are the default choice: a planted bug of each kind a run reports
// (panic, index out of range, t.Fatalf, hang, oom). The real parsers
// (-targets '...|Toml|LZ4') take most of a minute to build under load.
const targets = `^Fuzz(Prefix|Magic32|TLV|RoundTrip|Hang|Alloc)$`

// envStress makes the command a stress loop: it spins until its stdin closes.
const envStress = "FALSERED_STRESS"

// failure is a failure a run reported, and what its replay said.
type failure struct {
	Run        int    `json:"run"`
	Target     string `json:"target"`
	Package    string `json:"package"`
	ID         string `json:"id"`
	Kind       string `json:"kind"`
	Message    string `json:"message"`
	Verified   bool   `json:"verified"` // it failed the run
	Flaky      bool   `json:"flaky"`
	Replay     string `json:"replay,omitempty"`
	Reproduced bool   `json:"reproduced"`
	Replayed   string `json:"replayed,omitempty"` // the replay's verdict, for the log
}

// result is one CI run.
type result struct {
	Run      int       `json:"run"`
	Status   int       `json:"status"`
	Wall     float64   `json:"wall"`
	Failures []failure `json:"failures"`
	Notes    []string  `json:"notes,omitempty"` // what fuzzls said it could not do
}

func main() {
	if os.Getenv(envStress) != "" {
		stress()
		return
	}
	runs := flag.Int("runs", 4, "CI runs")
	budget := flag.Duration("budget", 60*time.Second, "each run's -budget, shared by its targets")
	load := flag.Int("load", 2*runtime.NumCPU(), "busy-loop processes running beside the runs")
	parallel := flag.Int("parallel", runtime.NumCPU(), "each run's -parallel")
	targetsRE := flag.String("targets", targets, "the targets of bench/targets to fuzz (a regular expression)")
	out := flag.String("out", "bench/results", "directory for the markdown summary, raw results and logs")
	bin := flag.String("fuzzls", "", "a fuzzls binary to use (default: build ./cmd/fuzzls)")
	flag.Parse()
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "falsered: "+format+"\n", args...) }
	b, err := engines.Setup("falsered", *out, *bin, logf)
	if err != nil {
		logf("%v", err)
		os.Exit(1)
	}
	defer b.Close()
	scratch, err := testws.CopyDir("bench/targets", filepath.Join(b.Tmp, "targets"))
	if err != nil {
		logf("%v", err)
		os.Exit(1)
	}
	re, err := regexp.Compile(*targetsRE)
	if err != nil {
		logf("-targets: %v", err)
		os.Exit(2)
	}
	stop, err := startStress(*load)
	if err != nil {
		logf("stress: %v", err)
		os.Exit(1)
	}
	defer stop()
	logf("%s; %d busy loops on %d cores; %d runs of %v", b.Version, *load, runtime.NumCPU(), *runs, *budget)
	var results []result
	for i := 1; i <= *runs && b.Ctx.Err() == nil; i++ {
		r := ciRun(b, scratch, re.String(), i, *budget, *parallel)
		for j := range r.Failures {
			if f := &r.Failures[j]; f.Verified {
				replay(b, scratch, i, f)
			}
		}
		os.RemoveAll(filepath.Join(b.Tmp, fmt.Sprintf("cache%d", i)))
		results = append(results, r)
		logf("run %d: status %d in %.0fs; %s", i, r.Status, r.Wall, summary(r))
	}
	md := report(results, b.Version, *load, *budget, *parallel, *targetsRE)
	path, err := b.Write(md, results)
	if err != nil {
		logf("%v", err)
		os.Exit(1)
	}
	logf("wrote %s", path)
}

// stress spins until stdin closes: the load of another process.
func stress() {
	runtime.GOMAXPROCS(1)
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	for x := uint64(0); ; x++ {
		if x == 0 {
			runtime.Gosched()
		}
	}
}

// startStress starts n busy-loop processes (this command again); the function
// returned ends them (their stdin closes, so they end with this process too).
func startStress(n int) (stop func(), err error) {
	var ins []io.Closer
	var cmds []*exec.Cmd
	stop = func() {
		for _, in := range ins {
			in.Close()
		}
		for _, c := range cmds {
			c.Wait()
		}
	}
	for range n {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), envStress+"=1")
		in, err := cmd.StdinPipe()
		if err != nil {
			stop()
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			stop()
			return nil, err
		}
		ins, cmds = append(ins, in), append(cmds, cmd)
	}
	return stop, nil
}

// ciRun runs fuzzls's CI mode once over the chosen targets, with a fresh cache,
// and reads what it reported.
func ciRun(b *engines.Bench, scratch, targets string, n int, budget time.Duration, parallel int) result {
	r := result{Run: n}
	cache := filepath.Join(b.Tmp, fmt.Sprintf("cache%d", n)) // the failures' inputs: removed once replayed
	sarif := filepath.Join(b.Logs, fmt.Sprintf("run%d.sarif", n))
	log, err := os.Create(filepath.Join(b.Logs, fmt.Sprintf("run%d.log", n)))
	if err != nil {
		r.Status = -1
		return r
	}
	defer log.Close()
	cmd := engines.Command(b.Ctx, scratch, b.Fuzzls, "fuzz", "-budget", budget.String(), "-parallel", fmt.Sprint(parallel),
		"-json", "-sarif", sarif, "-cachedir", cache, "-run", targets, "./...")
	fmt.Fprintf(log, "$ %s\n", strings.Join(cmd.Args, " "))
	start := time.Now()
	lines, wait, err := engines.StartLines(cmd)
	if err != nil {
		fmt.Fprintf(log, "%v\n", err)
		r.Status = -1
		return r
	}
	last := map[string]*jsonevents.Crash{} // the last event of each failure
	var order []string
	for l := range lines {
		fmt.Fprintf(log, "%7.3f %s\n", l.T.Sub(start).Seconds(), l.S)
		var c jsonevents.Crash
		if json.Unmarshal([]byte(l.S), &c) != nil || c.Event != jsonevents.EventCrash || c.Kind == protocol.KindSlow {
			continue
		}
		if last[c.ID] == nil {
			order = append(order, c.ID)
		}
		last[c.ID] = &c
	}
	err = wait()
	r.Wall = time.Since(start).Seconds()
	r.Status = exitCode(err)
	for _, id := range order {
		c := last[id]
		r.Failures = append(r.Failures, failure{Run: n, Target: c.Target, Package: c.Package, ID: c.ID, Kind: c.Kind,
			Message: engines.FirstLine(c.Message), Verified: c.Verified, Flaky: c.Flaky, Replay: c.Path})
	}
	r.Notes = sarifNotes(sarif)
	return r
}

// replay runs the replay fuzzls printed for f, its input copied into the scratch
// module's testdata/fuzz (and removed after), and records whether it failed.
func replay(b *engines.Bench, scratch string, n int, f *failure) {
	saved := f.Replay
	data, err := os.ReadFile(saved)
	if err != nil {
		f.Replayed = "no saved input: " + err.Error()
		return
	}
	pkg := strings.TrimPrefix(f.Package, "example.com/benchtargets/")
	seed := filepath.Base(saved)
	dir := filepath.Join(scratch, pkg, "testdata", "fuzz", f.Target)
	os.MkdirAll(dir, 0o755)
	file := filepath.Join(dir, seed)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		f.Replayed = err.Error()
		return
	}
	defer os.Remove(file)
	c := &engine.Crash{Kind: efailure.Kind(f.Kind), Target: engine.Target{Name: f.Target}}
	line, _ := c.ReplayCommand(seed)
	if strings.HasPrefix(line, "go test") {
		line += " -timeout=30s" // a hang ends, failing, at three times go test -fuzz's bound
	} else {
		line = strings.Replace(line, "fuzzls fuzz", engine.ShellQuote(b.Fuzzls)+" fuzz -cachedir "+engine.ShellQuote(filepath.Join(b.Tmp, "replaycache")), 1)
	}
	f.Replay = line
	ctx, cancel := context.WithTimeout(b.Ctx, 3*time.Minute)
	defer cancel()
	cmd := engines.Command(ctx, filepath.Join(scratch, pkg), "sh", "-c", line)
	out, err := cmd.CombinedOutput()
	code := exitCode(err)
	f.Reproduced = code != 0 && ctx.Err() == nil
	f.Replayed = fmt.Sprintf("exit status %d", code)
	logPath := filepath.Join(b.Logs, fmt.Sprintf("run%d-%s-%s.replay", n, f.Target, f.ID))
	os.WriteFile(logPath, []byte(fmt.Sprintf("$ cd %s && %s\n%s", cmd.Dir, line, out)), 0o644)
}

// sarifNotes are the SARIF file's tool execution notifications: what fuzzls
// said kept it from fuzzing.
func sarifNotes(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return []string{"no SARIF file: " + err.Error()}
	}
	var log struct {
		Runs []struct {
			Invocations []struct {
				ToolExecutionNotifications []struct{ Message struct{ Text string } }
			}
		}
	}
	json.Unmarshal(data, &log)
	var notes []string
	for _, r := range log.Runs {
		for _, inv := range r.Invocations {
			for _, n := range inv.ToolExecutionNotifications {
				notes = append(notes, n.Message.Text)
			}
		}
	}
	return notes
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// falseRed reports whether a run failed without a failure that reproduces:
// status 1 and none of its failures that failed it fails again.
func falseRed(r result) bool {
	if r.Status != 1 {
		return false
	}
	for _, f := range r.Failures {
		if f.Verified && f.Reproduced {
			return false
		}
	}
	return true
}

func summary(r result) string {
	var parts []string
	for _, f := range r.Failures {
		what := "flaky (warning)"
		switch {
		case f.Verified && f.Reproduced:
			what = "reproduced"
		case f.Verified:
			what = "NOT REPRODUCED: " + f.Replayed
		case !f.Flaky:
			what = "unchecked (warning)"
		}
		parts = append(parts, fmt.Sprintf("%s %s: %s", f.Target, f.Kind, what))
	}
	if len(r.Notes) > 0 {
		parts = append(parts, fmt.Sprintf("%d notifications", len(r.Notes)))
	}
	if len(parts) == 0 {
		return "no failure"
	}
	return strings.Join(parts, "; ")
}

// report is the markdown summary.
func report(results []result, version string, load int, budget time.Duration, parallel int, targets string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## False-red CI runs, %s\n\n", time.Now().Format("2006-01-02"))
	fmt.Fprintf(&b, "%s; %d CPUs, %d busy-loop processes beside; each run `fuzzls fuzz -budget %v -parallel %d -json -sarif` over `%s` with a fresh cache.\n\n",
		version, runtime.NumCPU(), load, budget, parallel, targets)
	status := map[int]int{}
	var red, reproduced, notReproduced, flaky, unchecked, falseReds int
	type row struct{ verified, reproduced, flaky int }
	byTarget := map[string]*row{}
	kinds := map[string]map[string]bool{}
	for _, r := range results {
		status[r.Status]++
		if falseRed(r) {
			falseReds++
		}
		for _, f := range r.Failures {
			t := byTarget[f.Target]
			if t == nil {
				t = &row{}
				byTarget[f.Target] = t
				kinds[f.Target] = map[string]bool{}
			}
			kinds[f.Target][f.Kind] = true
			switch {
			case f.Verified:
				red++
				t.verified++
				if f.Reproduced {
					reproduced++
					t.reproduced++
				} else {
					notReproduced++
				}
			case f.Flaky:
				flaky++
				t.flaky++
			default:
				unchecked++
			}
		}
	}
	fmt.Fprintf(&b, "| runs | status 0 | status 1 | status 2 | status 3 (fuzzls's own failure) | failures that failed a run | reproduced by the printed replay | not reproduced | false-red runs | flaky (warnings) | unchecked (warnings) |\n")
	fmt.Fprintf(&b, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	fmt.Fprintf(&b, "| %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d |\n\n", len(results), status[0], status[1], status[2], status[3],
		red, reproduced, notReproduced, falseReds, flaky, unchecked)
	names := make([]string, 0, len(byTarget))
	for n := range byTarget {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) > 0 {
		fmt.Fprintf(&b, "| target | kinds | failures that failed a run | reproduced | flaky |\n| --- | --- | --- | --- | --- |\n")
		for _, n := range names {
			t := byTarget[n]
			var ks []string
			for k := range kinds[n] {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %d |\n", n, strings.Join(ks, ", "), t.verified, t.reproduced, t.flaky)
		}
		b.WriteString("\n")
	}
	for _, r := range results {
		for _, note := range r.Notes {
			fmt.Fprintf(&b, "- run %d (status %d): %s\n", r.Run, r.Status, engines.FirstLine(note))
		}
	}
	return b.String()
}
