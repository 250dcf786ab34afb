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
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
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

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

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
	root, err := moduleRoot()
	check(err)
	tmp, err := os.MkdirTemp("", "fuzzls-latency-")
	check(err)
	if *keep {
		fmt.Fprintln(os.Stderr, "temporary directory:", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	bin := filepath.Join(tmp, "fuzzls")
	step("building fuzzls")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/fuzzls")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		fatalf("go build: %v\n%s", err, out)
	}
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
		return d.lastState() == fproto.StateFuzzing && len(d.coverage) > 0
	})
	fmt.Fprintf(os.Stderr, "  first build and coverage after %v\n", time.Since(start).Round(time.Millisecond))
	// Let the division by zero be found and minimized, so that minimization does
	// not compete with the saves.
	calcURI := uri.File(calcGo)
	err := d.awaitErr("the crash found and minimized", 90*time.Second, func() bool {
		for _, ev := range d.diags {
			if ev.uri == calcURI {
				for _, dg := range ev.diags {
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
		d.mu.Lock()
		var got time.Time
		for _, ev := range d.diags {
			if ev.uri == calcURI && len(ev.diags) > 0 {
				got = ev.t
				break
			}
		}
		d.mu.Unlock()
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
		d.mu.Lock()
		nProg, nStatus, nCov := len(d.progress), len(d.status), len(d.coverage)
		want := shifted(blockLines(d.coverage, calcURI), delta)
		d.mu.Unlock()
		if len(want) == 0 {
			fatalf("no coverage of calc.go before the save")
		}

		saved := time.Now()
		d.change(calcGo, version, text)
		writeAtomic(calcGo, text)
		d.save(calcGo)

		var r saveRun
		d.await("the rebuild's progress end", 2*time.Minute, func() bool {
			for _, p := range d.progress[nProg:] {
				if strings.HasPrefix(p.v, "begin:Rebuilding") && r.flushed == 0 {
					r.flushed = p.t.Sub(saved)
				}
				if m := builtRE.FindStringSubmatch(p.v); m != nil && r.flushed != 0 {
					r.built = p.t.Sub(saved)
					secs, _ := strconv.ParseFloat(m[1], 64)
					r.engineBuild = time.Duration(secs * float64(time.Second))
					return true
				}
				if strings.HasPrefix(p.v, "end:build failed") {
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
			for _, st := range d.status[nStatus:] {
				if st.t.Sub(saved) >= r.built-time.Millisecond && len(st.v.Sessions) == 1 && st.v.Sessions[0].State == fproto.StateFuzzing {
					r.fuzzingNote = st.t.Sub(saved)
					return true
				}
			}
			return false
		})
		d.await("coverage of the new build", time.Minute, func() bool {
			for _, cp := range d.coverage[nCov:] {
				for _, f := range cp.v.Files {
					if f.URI == string(calcURI) && len(f.Covered) > 0 && slices.Equal(lines(f), want) {
						r.coverage = cp.t.Sub(saved)
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
func blockLines(cov []timed[fproto.CoverageParams], u uri.URI) []uint32 {
	for i := len(cov) - 1; i >= 0; i-- {
		for _, f := range cov[i].v.Files {
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
	d.await("fuzzing", 3*time.Minute, func() bool { return d.lastState() == fproto.StateFuzzing })
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
			for _, ev := range d.diags {
				if ev.uri == calcURI && len(ev.diags) > 0 {
					got = ev.t
					return true
				}
			}
			return false
		})
		// The fuzz worker is the oldest child still running (the seeds run has
		// ended; the minimizer started after the crash).
		var workerStart time.Time
		for _, pid := range children(d.cmd.Process.Pid) {
			if t, err := procStart(pid); err == nil && (workerStart.IsZero() || t.Before(workerStart)) {
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
		writeAtomic(calcGo, text)
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

// timed is something the client received, and when.
type timed[T any] struct {
	t time.Time
	v T
}

type diagEvent struct {
	t     time.Time
	uri   uri.URI
	diags []protocol.Diagnostic
}

// daemon is a running `fuzzls serve` and the client talking to it.
type daemon struct {
	protocol.UnimplementedClient

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	conn   jsonrpc2.Conn
	server protocol.Server
	ctx    context.Context
	cancel context.CancelFunc
	log    *os.File

	mu       sync.Mutex
	changed  chan struct{}
	diags    []diagEvent
	status   []timed[fproto.StatusParams]
	coverage []timed[fproto.CoverageParams]
	progress []timed[string] // "begin:title", "end:message"
}

func startDaemon(bin, logPath string) *daemon {
	d := &daemon{changed: make(chan struct{})}
	d.cmd = exec.Command(bin, "serve")
	var err error
	d.stdin, err = d.cmd.StdinPipe()
	check(err)
	stdout, err := d.cmd.StdoutPipe()
	check(err)
	d.log, err = os.Create(logPath)
	check(err)
	if *verbose {
		d.cmd.Stderr = io.MultiWriter(d.log, os.Stderr)
	} else {
		d.cmd.Stderr = d.log
	}
	check(d.cmd.Start())
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.conn = jsonrpc2.NewConn(jsonrpc2.NewHeaderStream(pipes{stdout, d.stdin}), jsonrpc2.WithCodec(codec{}))
	h := protocol.ClientHandler(d, d.custom)
	d.conn.Go(d.ctx, protocol.CancelHandler(func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		if req.IsCall() {
			jsonrpc2.Async(ctx)
		}
		return h(ctx, req)
	}))
	d.server = protocol.ServerDispatcher(d.conn)
	return d
}

func (d *daemon) close() {
	ctx, cancel := context.WithTimeout(d.ctx, 10*time.Second)
	defer cancel()
	_ = d.server.Shutdown(ctx)
	_ = d.server.Exit(ctx)
	d.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = d.cmd.Process.Kill()
		<-done
	}
	d.cancel()
	d.conn.Close()
	d.log.Close()
}

func (d *daemon) initialize(dir, cacheDir string) { d.initializeWith(dir, cacheDir, *parallel) }

func (d *daemon) initializeWith(dir, cacheDir string, workers int) {
	yes := true
	params := &protocol.InitializeParams{
		Capabilities: protocol.ClientCapabilities{
			Window: &protocol.WindowClientCapabilities{WorkDoneProgress: &yes},
			Workspace: &protocol.WorkspaceClientCapabilities{
				ApplyEdit: &yes,
				CodeLens:  &protocol.CodeLensWorkspaceClientCapabilities{RefreshSupport: &yes},
			},
		},
	}
	params.WorkspaceFolders = protocol.NewNullable([]protocol.WorkspaceFolder{{URI: uri.File(dir), Name: filepath.Base(dir)}})
	opts := map[string]any{"cacheDir": cacheDir, "parallel": workers}
	raw, err := json.Marshal(opts)
	check(err)
	params.InitializationOptions = raw
	if _, err := d.server.Initialize(d.ctx, params); err != nil {
		fatalf("initialize: %v", err)
	}
	check(d.server.Initialized(d.ctx, &protocol.InitializedParams{}))
}

func (d *daemon) command(name string, arg any) json.RawMessage {
	params := &protocol.ExecuteCommandParams{Command: name}
	if arg != nil {
		raw, err := json.Marshal(arg)
		check(err)
		params.Arguments = []protocol.LSPAny{raw}
	}
	var res json.RawMessage
	if err := protocol.Call(d.ctx, d.conn, protocol.MethodWorkspaceExecuteCommand, params, &res); err != nil {
		fatalf("%s: %v", name, err)
	}
	return res
}

// statusNow is the state of the one session, asked with fuzzls.status.
func (d *daemon) statusNow() string {
	var st fproto.StatusParams
	check(json.Unmarshal(d.command(fproto.CommandStatus, nil), &st))
	if len(st.Sessions) != 1 {
		return ""
	}
	return st.Sessions[0].State
}

// lastState is the state in the last fuzzls/status notification (d.mu held).
func (d *daemon) lastState() string {
	if len(d.status) == 0 || len(d.status[len(d.status)-1].v.Sessions) != 1 {
		return ""
	}
	return d.status[len(d.status)-1].v.Sessions[0].State
}

func (d *daemon) open(path, text string) {
	check(d.server.DidOpen(d.ctx, &protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{
		URI: uri.File(path), LanguageID: "go", Version: 1, Text: text,
	}}))
}

func (d *daemon) change(path string, version int32, text string) {
	check(d.server.DidChange(d.ctx, &protocol.DidChangeTextDocumentParams{
		TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri.File(path)}, Version: version},
		ContentChanges: []protocol.TextDocumentContentChangeEvent{&protocol.TextDocumentContentChangeWholeDocument{Text: text}},
	}))
}

func (d *daemon) save(path string) {
	check(d.server.DidSave(d.ctx, &protocol.DidSaveTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(path)}}))
}

// cpu returns the daemon's CPU time (user + system, its own threads) over span.
func (d *daemon) cpu(span time.Duration) time.Duration {
	before := procCPU(d.cmd.Process.Pid)
	time.Sleep(span)
	return procCPU(d.cmd.Process.Pid) - before
}

func (d *daemon) update(f func()) {
	d.mu.Lock()
	f()
	close(d.changed)
	d.changed = make(chan struct{})
	d.mu.Unlock()
}

func (d *daemon) await(what string, timeout time.Duration, cond func() bool) {
	if err := d.awaitErr(what, timeout, cond); err != nil {
		fatalf("%v", err)
	}
}

// awaitErr waits until cond (called with d.mu held) holds.
func (d *daemon) awaitErr(what string, timeout time.Duration, cond func() bool) error {
	deadline := time.After(timeout)
	for {
		d.mu.Lock()
		ok := cond()
		ch := d.changed
		d.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-deadline:
			return fmt.Errorf("timed out after %v waiting for %s", timeout, what)
		}
	}
}

// The client's side of LSP: record with the time of arrival.

func (d *daemon) PublishDiagnostics(ctx context.Context, p *protocol.PublishDiagnosticsParams) error {
	t := time.Now()
	d.update(func() { d.diags = append(d.diags, diagEvent{t, p.URI, p.Diagnostics}) })
	return nil
}

func (d *daemon) ShowMessage(ctx context.Context, p *protocol.ShowMessageParams) error { return nil }
func (d *daemon) LogMessage(ctx context.Context, p *protocol.LogMessageParams) error   { return nil }
func (d *daemon) WorkDoneProgressCreate(ctx context.Context, p *protocol.WorkDoneProgressCreateParams) error {
	return nil
}
func (d *daemon) CodeLensRefresh(ctx context.Context) error { return nil }
func (d *daemon) RegisterCapability(ctx context.Context, p *protocol.RegistrationParams) error {
	return nil
}

func (d *daemon) Progress(ctx context.Context, p *protocol.ProgressParams) error {
	t := time.Now()
	var v struct {
		Kind    string `json:"kind"`
		Title   string `json:"title"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(p.Value, &v)
	s := v.Kind + ":" + v.Message
	if v.Kind == "begin" {
		s = "begin:" + v.Title
	}
	d.update(func() { d.progress = append(d.progress, timed[string]{t, s}) })
	return nil
}

// custom receives fuzzls's own notifications.
func (d *daemon) custom(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	t := time.Now()
	switch req.Method() {
	case fproto.MethodCoverage:
		var p fproto.CoverageParams
		if err := json.Unmarshal(req.Params(), &p); err != nil {
			return nil, err
		}
		d.update(func() { d.coverage = append(d.coverage, timed[fproto.CoverageParams]{t, p}) })
		return nil, nil
	case fproto.MethodStatus:
		var p fproto.StatusParams
		if err := json.Unmarshal(req.Params(), &p); err != nil {
			return nil, err
		}
		d.update(func() { d.status = append(d.status, timed[fproto.StatusParams]{t, p}) })
		return nil, nil
	}
	return jsonrpc2.MethodNotFoundHandler(ctx, req)
}

type pipes struct {
	io.ReadCloser
	io.WriteCloser
}

func (p pipes) Close() error { return errors.Join(p.ReadCloser.Close(), p.WriteCloser.Close()) }

// codec is go.lsp.dev/protocol's union-aware codec, raw messages passed through.
type codec struct{}

func (codec) Marshal(v any) ([]byte, error) {
	if m, ok := v.(jsonrpc2.RawMessage); ok {
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	}
	return protocol.Marshal(v)
}

func (codec) Unmarshal(data []byte, v any) error {
	if p, ok := v.(*jsonrpc2.RawMessage); ok {
		*p = append(jsonrpc2.RawMessage(nil), data...)
		return nil
	}
	return protocol.Unmarshal(data, v)
}

// /proc helpers.

const clockTick = 10 * time.Millisecond // USER_HZ is 100 on Linux

// procFields returns the fields of /proc/pid/stat after the command name.
func procFields(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	return strings.Fields(s[i+1:]), nil
}

// procCPU is utime+stime of pid (field 14 and 15 of stat; here 11 and 12).
func procCPU(pid int) time.Duration {
	f, err := procFields(pid)
	check(err)
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * clockTick
}

// procStart is when pid started (field 22 of stat: ticks since boot), as wall time.
func procStart(pid int) (time.Time, error) {
	f, err := procFields(pid)
	if err != nil {
		return time.Time{}, err
	}
	ticks, err := strconv.ParseInt(f[19], 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	data, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return time.Time{}, err
	}
	now := time.Now()
	up, err := strconv.ParseFloat(strings.Fields(string(data))[0], 64)
	if err != nil {
		return time.Time{}, err
	}
	boot := now.Add(-time.Duration(up * float64(time.Second)))
	return boot.Add(time.Duration(ticks) * clockTick), nil
}

// children lists the running (not zombie) children of pid.
func children(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, err := procFields(n)
		if err != nil || len(f) < 2 || f[0] == "Z" {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == pid {
			out = append(out, n)
		}
	}
	return out
}

// Files.

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run from inside the fuzzls module")
	}
	return filepath.Dir(mod), nil
}

func copyTree(src, dst string) string {
	check(filepath.WalkDir(src, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if e.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	}))
	dst, err := filepath.EvalSymlinks(dst)
	check(err)
	return dst
}

// writeAtomic saves as editors do: a temporary file renamed into place.
func writeAtomic(path, text string) {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".swp")
	check(os.WriteFile(tmp, []byte(text), 0o644))
	check(os.Rename(tmp, path))
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
