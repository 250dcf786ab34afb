// Command latency measures what a user of `fuzzls serve` waits for, against the
// goals of issue 4, and prints them as a table with pass/fail:
//
//	go run ./bench/latency [-reps 5] [-parallel 1] [-v]
//
// It builds the real fuzzls binary, starts `fuzzls serve` over pipes and talks
// LSP to it with a client written on go.lsp.dev/protocol's client side, on
// temporary copies of testdata/calc (FuzzEval; its bug is a division by zero):
//
//   - save → fuzzing again: calc.go is edited harmlessly (a comment line added
//     or removed at the top, which moves every block by a line) and saved the
//     way an editor does (didChange, the file written by rename, didSave); the
//     time until the session is "fuzzing" on the new build, seen by polling
//     the fuzzls.status command (the engine's own state) and by the
//     fuzzls/status notification (what a client sees unprompted).
//   - save → coverage: until the first fuzzls/coverage notification that
//     belongs to the new build (its covered ranges sit on the moved lines).
//   - crash → diagnostic: the crashing input "0/0" is put in the seed corpus
//     (testdata/fuzz/FuzzEval), so a worker hits it among its first inputs;
//     measured from the start of that worker process (/proc/<pid>/stat, 10 ms
//     resolution; an upper bound: it includes the worker's start-up and the
//     corpus replay) and from the moment the engine recorded the crash (the
//     crash file's modification time; the engine writes it just before its
//     CrashEvent) to the publishDiagnostics reaching the client.
//   - idle CPU: utime+stime of the daemon over 10 s with no session running,
//     once right after initialize and once after a session was stopped.
//   - the editor's share: CPU-bound work on every core at normal priority,
//     timed on an idle machine and while the daemon fuzzes with a worker per
//     core (its workers run niced, so the work should barely slow down).
//
// Each save also gets its phases (batch delay, the engine's build, seeds and
// worker start, the engine's coverage tick) so that a missed goal says where
// the time goes, and the toolchain floor (`go test -c` of the unmodified
// package after the same edit) is measured alongside.
package main

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"fuzzls.dev/fuzzls/internal/lspclient"
	"fuzzls.dev/fuzzls/internal/proc"
	"fuzzls.dev/fuzzls/internal/testws"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// Goals of issue 4.
const (
	goalFuzzing  = 1500 * time.Millisecond
	goalCoverage = 2500 * time.Millisecond
	goalCrash    = time.Second
	goalIdleCPU  = 20 * time.Millisecond // per 10 s: 0.2% of a core
)

var (
	reps     = flag.Int("reps", 5, "repetitions of each measurement")
	parallel = flag.Int("parallel", 1, "worker processes (the machine is shared)")
	verbose  = flag.Bool("v", false, "copy the daemon's log to stderr")
	keep     = flag.Bool("keep", false, "keep the temporary directory")
)

func main() {
	flag.Parse()
	root, err := lspclient.ModuleRoot()
	check(err)
	tmp, err := os.MkdirTemp("", "fuzzls-latency-")
	check(err)
	if *keep {
		fmt.Fprintln(os.Stderr, "temporary directory:", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	step("building fuzzls")
	bin, err := lspclient.Build(root, tmp)
	check(err)
	calc := filepath.Join(root, "testdata", "calc")

	var rows []row
	idleFresh := measureIdle(bin, tmp, calc)
	saves, idleAfter, found := measureSaves(bin, tmp, calc)
	floor := measureFloor(tmp, calc)
	crashes := measureCrashes(bin, tmp, calc)
	shareIdle, shareFuzzing := measureEditorShare(bin, tmp, calc)

	med := func(f func(saveRun) time.Duration) time.Duration {
		var ds []time.Duration
		for _, s := range saves {
			ds = append(ds, f(s))
		}
		return median(ds)
	}
	rows = append(rows,
		row{"save → fuzzing again (fuzzls.status)", goalFuzzing, med(func(s saveRun) time.Duration { return s.fuzzing }), true},
		row{"save → fuzzing again (fuzzls/status notification)", goalFuzzing, med(func(s saveRun) time.Duration { return s.fuzzingNote }), true},
		row{"save → first fuzzls/coverage of the new build", goalCoverage, med(func(s saveRun) time.Duration { return s.coverage }), true},
	)
	var fromWorker, fromRecord []time.Duration
	for _, c := range crashes {
		fromWorker = append(fromWorker, c.fromWorker)
		fromRecord = append(fromRecord, c.fromRecord)
	}
	rows = append(rows,
		row{"crash → diagnostic (from the worker's start)", goalCrash, median(fromWorker), true},
		row{"crash → diagnostic (from the engine's crash record)", goalCrash, median(fromRecord), true},
		row{"crash found by fuzzing → diagnostic (record; 1 run)", goalCrash, found, true},
		row{"idle CPU over 10 s, fresh daemon", goalIdleCPU, idleFresh, true},
		row{"idle CPU over 10 s, after a session stopped", goalIdleCPU, idleAfter, true},
	)

	fmt.Printf("\nPhases of a save (medians of %d; each from the save):\n", len(saves))
	fmt.Printf("  %-52s %8s\n", "rebuild requested (batch delay; progress begin)", ms(med(func(s saveRun) time.Duration { return s.flushed })))
	fmt.Printf("  %-52s %8s\n", "build done (BuildEvent; progress end)", ms(med(func(s saveRun) time.Duration { return s.built })))
	fmt.Printf("  %-52s %8s\n", "  of which the engine's build (BuildEvent.Seconds)", ms(med(func(s saveRun) time.Duration { return s.engineBuild })))
	fmt.Printf("  %-52s %8s\n", "  toolchain floor: go test -c after the same edit", ms(floor))
	fmt.Printf("  %-52s %8s\n", "fuzzing (seeds run, workers started)", ms(med(func(s saveRun) time.Duration { return s.fuzzing })))
	fmt.Printf("  %-52s %8s\n", "first fuzzls/status saying fuzzing", ms(med(func(s saveRun) time.Duration { return s.fuzzingNote })))
	fmt.Printf("  %-52s %8s\n", "first fuzzls/coverage of the new build", ms(med(func(s saveRun) time.Duration { return s.coverage })))
	fmt.Printf("\nEach save (ms): flushed built(engine) fuzzing notified coverage\n")
	for i, s := range saves {
		fmt.Printf("  %d: %6s %6s(%s) %6s %6s %6s\n", i+1, ms(s.flushed), ms(s.built), ms(s.engineBuild), ms(s.fuzzing), ms(s.fuzzingNote), ms(s.coverage))
	}
	fmt.Printf("Each seeded crash (ms): from the worker's start (10 ms resolution), from the crash record\n")
	for i, c := range crashes {
		fmt.Printf("  %d: %6s %6s\n", i+1, ms(c.fromWorker), ms(c.fromRecord))
	}

	fmt.Printf("\nThe editor's share of the machine: CPU-bound work on every core at normal priority\n")
	fmt.Printf("  took %s on an idle machine and %s while the daemon fuzzed with a worker per core (%.2f×)\n",
		ms(shareIdle), ms(shareFuzzing), float64(shareFuzzing)/float64(shareIdle))

	fmt.Printf("\n%-52s %10s %10s  %s\n", "measurement (median)", "goal", "measured", "")
	failed := false
	for _, r := range rows {
		verdict := "pass"
		if r.got > r.goal {
			verdict = "FAIL"
			if r.counts {
				failed = true
			}
		}
		goal, got := "≤ "+ms(r.goal), ms(r.got)
		if strings.HasPrefix(r.name, "idle") {
			goal, got = "≤ "+ms(r.goal)+" CPU", ms(r.got)+" CPU"
		}
		fmt.Printf("%-52s %10s %10s  %s\n", r.name, goal, got, verdict)
	}
	if failed {
		os.Exit(1)
	}
}

type row struct {
	name      string
	goal, got time.Duration
	counts    bool
}

// saveRun is one save, each time measured from the save.
type saveRun struct {
	flushed     time.Duration // the daemon asked the engine to rebuild
	built       time.Duration // the BuildEvent reached the client
	engineBuild time.Duration // the engine's own build time
	fuzzing     time.Duration // fuzzls.status says fuzzing on the new build
	fuzzingNote time.Duration // a fuzzls/status notification says so
	coverage    time.Duration // first fuzzls/coverage of the new build
}

// measureSaves starts FuzzEval, lets it find and minimize its crash, then saves
// calc.go reps times.
func measureSaves(bin, tmp, calc string) (runs []saveRun, idle, found time.Duration) {
	step("save latency: starting FuzzEval")
	dir := copyTree(calc, filepath.Join(tmp, "saves"))
	d := startDaemon(bin, filepath.Join(tmp, "saves.log"))
	defer d.close()
	d.initialize(dir, filepath.Join(tmp, "saves-cache"))
	calcGo := filepath.Join(dir, "calc.go")
	testGo := filepath.Join(dir, "calc_test.go")
	text := mustRead(calcGo)
	d.open(calcGo, text)
	start := time.Now()
	d.command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(testGo)), Target: "FuzzEval"})
	d.await("fuzzing with coverage", 3*time.Minute, func() bool {
		return d.LastState() == fproto.StateFuzzing && len(d.Coverage) > 0
	})
	fmt.Fprintf(os.Stderr, "  first build and coverage after %v\n", time.Since(start).Round(time.Millisecond))
	// Let the division by zero be found and minimized, so that minimization does
	// not compete with the saves.
	calcURI := uri.File(calcGo)
	err := d.Await("the crash found and minimized", 90*time.Second, func() bool {
		for _, ev := range d.Diags {
			if ev.URI == calcURI {
				for _, dg := range ev.Diags {
					if m, _ := dg.Message.(protocol.String); dg.Code == protocol.String("panic") && !strings.Contains(string(m), "minimizing") {
						return true
					}
				}
			}
		}
		return false
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "  %v; measuring anyway\n", err)
	} else {
		var got time.Time
		d.Locked(func() {
			for _, ev := range d.Diags {
				if ev.URI == calcURI && len(ev.Diags) > 0 {
					got = ev.T
					break
				}
			}
		})
		found = got.Sub(firstCrashFile(filepath.Join(tmp, "saves-cache")))
	}
	time.Sleep(2 * time.Second)

	version := int32(1)
	for i := range *reps {
		// Toggle a comment line at the top: every block moves by one line, so
		// coverage of the new build is told from the old one's.
		if strings.HasPrefix(text, "// edited\n") {
			text = strings.TrimPrefix(text, "// edited\n")
		} else {
			text = "// edited\n" + text
		}
		delta := 1
		if !strings.HasPrefix(text, "// edited\n") {
			delta = -1
		}
		version++
		var nProg, nStatus, nCov int
		var want []uint32
		d.Locked(func() {
			nProg, nStatus, nCov = len(d.ProgressNotes), len(d.Status), len(d.Coverage)
			want = shifted(blockLines(d.Coverage, calcURI), delta)
		})
		if len(want) == 0 {
			fatalf("no coverage of calc.go before the save")
		}

		saved := time.Now()
		d.change(calcGo, version, text)
		check(lspclient.WriteFile(calcGo, text))
		d.save(calcGo)

		var r saveRun
		d.await("the rebuild's progress end", 2*time.Minute, func() bool {
			for _, p := range d.ProgressNotes[nProg:] {
				if strings.HasPrefix(p.V, "begin:Rebuilding") && r.flushed == 0 {
					r.flushed = p.T.Sub(saved)
				}
				if m := builtRE.FindStringSubmatch(p.V); m != nil && r.flushed != 0 {
					r.built = p.T.Sub(saved)
					secs, _ := strconv.ParseFloat(m[1], 64)
					r.engineBuild = time.Duration(secs * float64(time.Second))
					return true
				}
				if strings.HasPrefix(p.V, "end:build failed") {
					fatalf("the harmless edit did not build:\n%s", text)
				}
			}
			return false
		})
		// The engine's state is "building" from the rebuild's start until the
		// seeds ran: after its BuildEvent, "fuzzing" is the new build's.
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			if d.statusNow() == fproto.StateFuzzing {
				r.fuzzing = time.Since(saved)
				break
			}
			if time.Now().After(deadline) {
				fatalf("not fuzzing a minute after the rebuild")
			}
		}
		d.await("a fuzzls/status notification saying fuzzing", time.Minute, func() bool {
			for _, st := range d.Status[nStatus:] {
				if st.T.Sub(saved) >= r.built-time.Millisecond && len(st.V.Sessions) == 1 && st.V.Sessions[0].State == fproto.StateFuzzing {
					r.fuzzingNote = st.T.Sub(saved)
					return true
				}
			}
			return false
		})
		d.await("coverage of the new build", time.Minute, func() bool {
			for _, cp := range d.Coverage[nCov:] {
				for _, f := range cp.V.Files {
					if f.URI == string(calcURI) && len(f.Covered) > 0 && slices.Equal(lines(f), want) {
						r.coverage = cp.T.Sub(saved)
						return true
					}
				}
			}
			return false
		})
		fmt.Fprintf(os.Stderr, "  save %d: fuzzing after %v, coverage after %v\n", i+1, r.fuzzing.Round(time.Millisecond), r.coverage.Round(time.Millisecond))
		runs = append(runs, r)
		time.Sleep(1500 * time.Millisecond) // let the coverage throttle and stats settle
	}

	step("idle CPU after stopping the session")
	d.command(fproto.CommandStop, fproto.TargetArgs{URI: string(uri.File(testGo)), Target: "FuzzEval"})
	time.Sleep(2 * time.Second)
	return runs, d.cpu(10 * time.Second), found
}

// firstCrashFile returns the modification time of the oldest crash record in
// the cache: the engine writes it just before it reports the crash.
func firstCrashFile(cache string) time.Time {
	var first time.Time
	_ = filepath.WalkDir(filepath.Join(cache, "crashes"), func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			if fi, err := e.Info(); err == nil && (first.IsZero() || fi.ModTime().Before(first)) {
				first = fi.ModTime()
			}
		}
		return nil
	})
	if first.IsZero() {
		fatalf("no crash file in %s", cache)
	}
	return first
}

// blockLines returns the start lines of every block of the file u in the
// last coverage notification that has ranges for it.
func blockLines(cov []lspclient.Timed[fproto.CoverageParams], u uri.URI) []uint32 {
	for i := len(cov) - 1; i >= 0; i-- {
		for _, f := range cov[i].V.Files {
			if f.URI == string(u) && len(f.Covered)+len(f.Uncovered) > 0 {
				return lines(f)
			}
		}
	}
	return nil
}

func lines(f fproto.FileCoverage) []uint32 {
	var out []uint32
	for _, r := range append(append([]fproto.Range(nil), f.Covered...), f.Uncovered...) {
		out = append(out, r.Start.Line)
	}
	slices.Sort(out)
	return out
}

func shifted(ls []uint32, delta int) []uint32 {
	out := make([]uint32, len(ls))
	for i, l := range ls {
		out[i] = uint32(int(l) + delta)
	}
	return out
}

var builtRE = regexp.MustCompile(`^end:built in ([0-9.]+)s`)

// measureIdle: a daemon with a workspace and no session.
func measureIdle(bin, tmp, calc string) time.Duration {
	step("idle CPU of a fresh daemon")
	dir := copyTree(calc, filepath.Join(tmp, "idle"))
	d := startDaemon(bin, filepath.Join(tmp, "idle.log"))
	defer d.close()
	d.initialize(dir, filepath.Join(tmp, "idle-cache"))
	d.open(filepath.Join(dir, "calc_test.go"), mustRead(filepath.Join(dir, "calc_test.go")))
	time.Sleep(2 * time.Second)
	return d.cpu(10 * time.Second)
}

// measureEditorShare times a fixed amount of CPU-bound work on every core (what
// the editor, gopls and a build do while the user types) with the machine idle,
// then while the daemon fuzzes FuzzEval with a worker per core. The daemon's
// workers run at a lower priority, so the work should take about as long.
func measureEditorShare(bin, tmp, calc string) (idle, fuzzing time.Duration) {
	step("the editor's share of the machine")
	// Size the work to about a second on an idle machine.
	n := 1 << 16
	for cpuWork(n) < 500*time.Millisecond {
		n *= 2
	}
	var idles, fuzzings []time.Duration
	for range *reps {
		idles = append(idles, cpuWork(n))
	}
	dir := copyTree(calc, filepath.Join(tmp, "share"))
	d := startDaemon(bin, filepath.Join(tmp, "share.log"))
	defer d.close()
	d.initializeWith(dir, filepath.Join(tmp, "share-cache"), runtime.NumCPU())
	testGo := filepath.Join(dir, "calc_test.go")
	d.command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(testGo)), Target: "FuzzEval"})
	d.await("fuzzing", 3*time.Minute, func() bool { return d.LastState() == fproto.StateFuzzing })
	time.Sleep(2 * time.Second)
	for range *reps {
		fuzzings = append(fuzzings, cpuWork(n))
	}
	if d.statusNow() != fproto.StateFuzzing {
		fatalf("the session stopped fuzzing during the measurement")
	}
	idle, fuzzing = median(idles), median(fuzzings)
	fmt.Fprintf(os.Stderr, "  idle %v, while fuzzing %v\n", idle.Round(time.Millisecond), fuzzing.Round(time.Millisecond))
	return idle, fuzzing
}

// cpuWork hashes n blocks of 1 KiB on each core and returns the time it took.
func cpuWork(n int) time.Duration {
	start := time.Now()
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var block [1024]byte
			for i := range n {
				block[i%len(block)]++
				sum := sha256.Sum256(block[:])
				block[0] ^= sum[0]
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

type crashRun struct{ fromWorker, fromRecord time.Duration }

// measureCrashes: a fresh daemon, workspace and cache each time, with the
// crashing input in the seed corpus.
func measureCrashes(bin, tmp, calc string) []crashRun {
	var runs []crashRun
	for i := range *reps {
		step(fmt.Sprintf("crash → diagnostic %d/%d", i+1, *reps))
		dir := copyTree(calc, filepath.Join(tmp, fmt.Sprintf("crash%d", i)))
		seedDir := filepath.Join(dir, "testdata", "fuzz", "FuzzEval")
		check(os.MkdirAll(seedDir, 0o755))
		check(os.WriteFile(filepath.Join(seedDir, "divzero"), []byte("go test fuzz v1\nstring(\"0/0\")\n"), 0o644))
		cache := filepath.Join(tmp, fmt.Sprintf("crash%d-cache", i))
		d := startDaemon(bin, filepath.Join(tmp, fmt.Sprintf("crash%d.log", i)))
		d.initialize(dir, cache)
		calcURI := uri.File(filepath.Join(dir, "calc.go"))
		testGo := filepath.Join(dir, "calc_test.go")
		d.command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(testGo)), Target: "FuzzEval"})
		var got time.Time
		d.await("the crash diagnostic", 3*time.Minute, func() bool {
			for _, ev := range d.Diags {
				if ev.URI == calcURI && len(ev.Diags) > 0 {
					got = ev.T
					return true
				}
			}
			return false
		})
		// The fuzz worker is the oldest child still running (the seeds run has
		// ended; the minimizer started after the crash).
		var workerStart time.Time
		for _, pid := range proc.Children(d.Cmd.Process.Pid) {
			if t, err := proc.Start(pid); err == nil && (workerStart.IsZero() || t.Before(workerStart)) {
				workerStart = t
			}
		}
		recorded := firstCrashFile(cache)
		if workerStart.IsZero() {
			fatalf("no worker process")
		}
		r := crashRun{fromWorker: got.Sub(workerStart), fromRecord: got.Sub(recorded)}
		fmt.Fprintf(os.Stderr, "  from the worker's start %v, from the crash record %v\n", r.fromWorker.Round(time.Millisecond), r.fromRecord.Round(time.Millisecond))
		runs = append(runs, r)
		d.close()
	}
	return runs
}

// measureFloor times `go test -c` of the plain package after the same kind of
// edit: what the toolchain alone needs, with a warm build cache.
func measureFloor(tmp, calc string) time.Duration {
	step("toolchain floor")
	dir := copyTree(calc, filepath.Join(tmp, "floor"))
	calcGo := filepath.Join(dir, "calc.go")
	text := mustRead(calcGo)
	var ds []time.Duration
	for i := range *reps + 1 {
		text = fmt.Sprintf("// edit %d\n", i) + text
		check(lspclient.WriteFile(calcGo, text))
		cmd := exec.Command("go", "test", "-c", "-vet=off", "-o", filepath.Join(tmp, "floor.test"))
		cmd.Dir = dir
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			fatalf("go test -c: %v\n%s", err, out)
		}
		if i > 0 { // the first warms the cache for this directory
			ds = append(ds, time.Since(start))
		}
	}
	return median(ds)
}

// daemon is a running `fuzzls serve` and the client talking to it; its
// methods end the program on an error.
type daemon struct {
	*lspclient.Client
	log *os.File
}

func startDaemon(bin, logPath string) *daemon {
	cmd := exec.Command(bin, "serve")
	log, err := os.Create(logPath)
	check(err)
	if *verbose {
		cmd.Stderr = io.MultiWriter(log, os.Stderr)
	} else {
		cmd.Stderr = log
	}
	c, err := lspclient.Start(cmd)
	check(err)
	return &daemon{c, log}
}

func (d *daemon) close() {
	_ = d.Close()
	d.log.Close()
}

func (d *daemon) initialize(dir, cacheDir string) { d.initializeWith(dir, cacheDir, *parallel) }

func (d *daemon) initializeWith(dir, cacheDir string, workers int) {
	check(d.Initialize(dir, map[string]any{"cacheDir": cacheDir, "parallel": workers}))
}

func (d *daemon) command(name string, arg any) json.RawMessage {
	res, err := d.Command(name, arg)
	check(err)
	return res
}

// statusNow is the state of the one session, asked with fuzzls.status.
func (d *daemon) statusNow() string {
	st, err := d.StateNow()
	check(err)
	return st
}

func (d *daemon) open(path, text string) { check(d.Open(path, text)) }

func (d *daemon) change(path string, version int32, text string) {
	check(d.Change(path, version, text))
}

func (d *daemon) save(path string) { check(d.Save(path)) }

// cpu returns the daemon's CPU time (user + system, its own threads) over span.
func (d *daemon) cpu(span time.Duration) time.Duration {
	t, err := d.CPU(span)
	check(err)
	return t
}

func (d *daemon) await(what string, timeout time.Duration, cond func() bool) {
	check(d.Await(what, timeout, cond))
}

// Files.

func copyTree(src, dst string) string {
	dst, err := testws.CopyDir(src, dst)
	check(err)
	return dst
}

func mustRead(path string) string {
	data, err := os.ReadFile(path)
	check(err)
	return string(data)
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

func step(s string) { fmt.Fprintln(os.Stderr, "latency:", s) }

func check(err error) {
	if err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "latency: "+format+"\n", args...)
	os.Exit(2)
}
