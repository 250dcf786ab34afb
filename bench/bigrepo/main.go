// Command bigrepo measures fuzzls in the editor on a big real repository,
// go-ethereum, as a user meets it, against the goals of issue 29, with go
// test's own build times of the same package beside them as the reference:
//
//	go run ./bench/bigrepo [-module github.com/ethereum/go-ethereum@v1.17.10] [-hold 60s] [-v]
//
// The module comes from the module proxy (go mod download) into a writable
// copy. A real `fuzzls serve` runs over pipes in its root, as an editor starts
// it, and the client (internal/lspclient) does what a user does:
//
//   - opens the target's test file and asks its code lenses;
//   - starts the target, with Go's build cache and fuzzls's cache both cold
//     (fresh directories), and times the first fuzzls/coverage; the reference
//     is `go test -c` of the package on its own cold build cache;
//   - saves a non-test file of the package with a new function (didChange,
//     an atomic write, didSave) and times until the session fuzzes the new
//     build; the reference is `go test -c` after the same edit;
//   - restarts the daemon on the same caches and times the first coverage
//     again (warm);
//   - starts four more targets and reads the daemon's resident memory
//     (VmRSS; its workers are other processes) with one and with five
//     fuzzing, its inotify watches, and the number and size of its
//     notifications;
//   - with -all, "Fuzz all" (fuzzls.start without arguments): every target
//     of the repository builds and fuzzes on the same workers, while code
//     lens and hover requests are timed and the processes of the targets'
//     binaries counted; its memory then;
//   - with -soak d, one target fuzzes for d while the daemon's memory is read
//     every minute: it must stay flat.
//
// The daemon's memory is its resident memory and its heap in use after a
// collection (the daemon writes a heap profile on SIGUSR1, and says the
// heap's size in its log: the profiles stay in the temporary directory with
// -keep); with several sessions, both are also given per session, over the
// idle daemon's.
//
// With -memory, only that: the target and -others start at once (with -all,
// every target) and their sessions' memory is read, with Go's own build cache, for each fuzzls of
// -fuzzls in turn (-rounds times, alternated), so that two trees compare in
// one command; -dir keeps the copy and fuzzls's cache for the next run:
//
//	go run ./bench/bigrepo -memory -dir /tmp/geth -fuzzls old/fuzzls,new/fuzzls -rounds 2 -others ...
//
// Every figure with a goal is printed with it and pass/FAIL; the exit status
// is 1 when one is missed.
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
	"slices"
	"strconv"
	"strings"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"fuzzls.dev/fuzzls/internal/lspclient"
	"fuzzls.dev/fuzzls/internal/proc"
	"fuzzls.dev/fuzzls/internal/testws"
	fproto "fuzzls.dev/fuzzls/protocol"
)

var (
	module   = flag.String("module", "github.com/ethereum/go-ethereum@v1.17.10", "the repository, as a module path@version")
	pkg      = flag.String("pkg", "trie", "the fuzzed package, relative to the module root")
	target   = flag.String("target", "FuzzStackTrie", "its fuzz target")
	testFile = flag.String("testfile", "trie/stacktrie_fuzzer_test.go", "the file that declares it")
	saveFile = flag.String("save", "trie/stacktrie.go", "a non-test file of the package that the save edits")
	others   = flag.String("others", "trie/trie_test.go:FuzzTrie,rlp/iterator_test.go:FuzzIteratorCount,common/bitutil/compress_test.go:FuzzEncoder,common/bitutil/compress_test.go:FuzzDecoder",
		"the four other targets fuzzed at once, file:Target")
	parallel = flag.Int("parallel", 2, "worker processes in all")
	hold     = flag.Duration("hold", 60*time.Second, "how long one target, then five, fuzz before memory is read")
	saves    = flag.Int("saves", 3, "saves of the non-test file")
	verbose  = flag.Bool("v", false, "copy the daemon's log to stderr")
	keep     = flag.Bool("keep", false, "keep the temporary directory")
	all      = flag.Bool("all", false, `then "Fuzz all": every target of the repository at once`)
	soak     = flag.Duration("soak", 0, "then one target fuzzes this long, the daemon's memory read every minute")
	memOnly  = flag.Bool("memory", false, "only the daemon's memory with the target and -others fuzzing, on Go's own build cache")
	dirFlag  = flag.String("dir", "", "with -memory: the directory of the copy and fuzzls's cache, kept and reused (default: a temporary one)")
	bins     = flag.String("fuzzls", "", "with -memory: the fuzzls executables to measure, comma-separated (default: one built from this tree)")
	rounds   = flag.Int("rounds", 1, "with -memory: how many times each executable is measured, alternated")
)

// Goals of issue 29.
const (
	goalColdRatio  = 1.5 // first coverage, cold, against go test -c cold
	goalWarm       = 5 * time.Second
	goalSave       = 2 * time.Second
	goalLens       = 100 * time.Millisecond
	goalRSSOne     = 150 << 20
	goalRSSFive    = 300 << 20
	goalWatches    = 8192 / 2 // half the default per-user limit
	goalNoteBytes  = 1 << 20
	goalNotesPerS  = 5.0
	notesWindowDur = 70 * time.Second
	goalAnswerP95  = time.Second // code lens and hover while every target fuzzes
	goalSoakGrowth = 20 << 20    // the daemon's memory from the soak's second minute to its end
)

func main() {
	flag.Parse()
	root, err := lspclient.ModuleRoot()
	check(err)
	if *memOnly {
		memoryOnly(root)
		return
	}
	tmp, err := os.MkdirTemp("", "fuzzls-bigrepo-")
	check(err)
	if *keep {
		step("temporary directory: %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	step("building fuzzls")
	bin, err := lspclient.Build(root, tmp)
	check(err)
	ws := fetch(tmp)
	r := &report{}

	// go test's reference: its own cold build cache, then the same edit the save makes.
	refCache := filepath.Join(tmp, "gocache-ref")
	r.refCold = goTestC(ws, refCache)
	edit(ws, 1)
	r.refWarm = goTestC(ws, refCache)
	edit(ws, 0)

	goCache := filepath.Join(tmp, "gocache-fuzzls")
	cacheDir := filepath.Join(tmp, "cache-fuzzls")
	d := start(bin, ws, goCache, cacheDir, filepath.Join(tmp, "daemon-1.log"))
	r.rssIdle = d.rss()
	testPath := filepath.Join(ws, *testFile)
	check(d.Open(testPath, mustRead(testPath)))
	r.lens = d.lensTime(testPath)

	step("starting %s on cold caches", *target)
	began := time.Now()
	d.startTarget(testPath, *target)
	r.cold = d.firstCoverage(began, 15*time.Minute)
	step("  first coverage after %v (go test -c cold: %v)", r.cold.Round(time.Millisecond), r.refCold.Round(time.Millisecond))
	fuzzing := began.Add(r.cold) // the notifications are counted from here
	for i := range *saves {
		r.saves = append(r.saves, d.saveOnce(ws, i+1))
	}
	if wait := time.Until(fuzzing.Add(*hold)); wait > 0 {
		time.Sleep(wait)
	}
	r.rssOne = d.rss()
	r.watches = d.watches()
	if wait := time.Until(fuzzing.Add(notesWindowDur)); wait > 0 {
		time.Sleep(wait)
	}
	r.notes = d.notes(fuzzing)
	d.close()

	step("restarting the daemon on the same caches (warm)")
	d = start(bin, ws, goCache, cacheDir, filepath.Join(tmp, "daemon-2.log"))
	r.idle2 = d.mem()
	check(d.Open(testPath, mustRead(testPath)))
	began = time.Now()
	d.startTarget(testPath, *target)
	r.warm = d.firstCoverage(began, 5*time.Minute)
	step("  first coverage after %v", r.warm.Round(time.Millisecond))

	step("starting the other targets")
	r.five = d.startOthers(ws, 15*time.Minute)
	r.rssFive = r.five.rss
	r.sessions = d.sessionStates()
	if *all {
		r.all = d.fuzzAll(testPath)
	}
	if *soak > 0 {
		r.soak = d.soakRSS(testPath, *soak)
	}
	d.close()
	if !r.print() {
		os.Exit(1)
	}
}

// fetch downloads the module and its dependencies and returns a writable copy.
func fetch(tmp string) string {
	step("fetching %s", *module)
	out, err := exec.Command("go", "mod", "download", "-json", *module).Output()
	check(err)
	var m struct{ Dir, Error string }
	check(json.Unmarshal(out, &m))
	if m.Error != "" {
		fatalf("%s: %s", *module, m.Error)
	}
	ws, err := testws.CopyDir(m.Dir, filepath.Join(tmp, "ws"))
	check(err)
	check(filepath.WalkDir(ws, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if e.IsDir() {
			mode = 0o755
		}
		return os.Chmod(p, mode)
	}))
	cmd := exec.Command("go", "mod", "download")
	cmd.Dir = ws
	cmd.Stderr = os.Stderr
	check(cmd.Run())
	return ws
}

// goTestC times `go test -c` of the package with Go's build cache in cache.
func goTestC(ws, cache string) time.Duration {
	cmd := exec.Command("go", "test", "-c", "-o", os.DevNull, "./"+*pkg)
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "GOCACHE="+cache)
	cmd.Stderr = os.Stderr
	t := time.Now()
	check(cmd.Run())
	d := time.Since(t)
	step("go test -c ./%s: %v", *pkg, d.Round(time.Millisecond))
	return d
}

// original is the save file as it came.
var original string

// edit writes the save file with n new functions appended (0: as it came).
func edit(ws string, n int) string {
	path := filepath.Join(ws, *saveFile)
	if original == "" {
		original = mustRead(path)
	}
	text := original
	for i := 1; i <= n; i++ {
		text += fmt.Sprintf("\n// fuzzlsBigrepo%d is new: the save's change.\nfunc fuzzlsBigrepo%d(b []byte) int {\n\tif len(b) > %d {\n\t\treturn int(b[0])\n\t}\n\treturn 0\n}\n", i, i, i)
	}
	check(lspclient.WriteFile(path, text))
	return text
}

type daemon struct {
	*lspclient.Client
	log      *os.File
	version  int32
	cacheDir string
}

// start starts the daemon in ws on Go's build cache goCache ("": the user's),
// writing its heap profile beside its log.
func start(bin, ws, goCache, cacheDir, logPath string) *daemon {
	cmd := exec.Command(bin, "serve")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "FUZZLS_MEMPROFILE="+strings.TrimSuffix(logPath, ".log")+".pprof")
	if goCache != "" {
		cmd.Env = append(cmd.Env, "GOCACHE="+goCache)
	}
	log, err := os.Create(logPath)
	check(err)
	cmd.Stderr = log
	if *verbose {
		cmd.Stderr = io.MultiWriter(log, os.Stderr)
	}
	c, err := lspclient.Start(cmd)
	check(err)
	d := &daemon{Client: c, log: log, version: 1, cacheDir: cacheDir}
	check(d.Initialize(ws, map[string]any{"cacheDir": cacheDir, "parallel": *parallel}))
	return d
}

func (d *daemon) close() {
	_ = d.Close()
	d.log.Close()
}

func (d *daemon) await(what string, timeout time.Duration, cond func() bool) {
	check(d.Await(what, timeout, cond))
}

// startOthers starts the targets of -others beside the one fuzzing, waits
// until all fuzz (or fail), then -hold, and reads the daemon's memory.
func (d *daemon) startOthers(ws string, timeout time.Duration) memory {
	list := strings.Split(*others, ",")
	for _, o := range list {
		file, name, ok := strings.Cut(o, ":")
		if !ok {
			fatalf("-others: %q is not file:Target", o)
		}
		d.startTarget(filepath.Join(ws, file), name)
	}
	want := len(list) + 1
	d.await(fmt.Sprintf("%d sessions fuzzing", want), timeout, func() bool {
		ss := lastStatus(d.Client)
		n := 0
		for _, s := range ss {
			switch s.State {
			case fproto.StateFuzzing, fproto.StateError, fproto.StateStopped:
				n++
			}
		}
		return len(ss) == want && n == want
	})
	time.Sleep(*hold)
	return d.mem()
}

// memory is the daemon's memory at one time: resident, and its heap in use
// after a collection; with its sessions and their blocks (the sum of their
// builds').
type memory struct {
	rss, heap        int64
	sessions, blocks int
}

// mem reads the daemon's memory: its heap from the line its log gets when
// SIGUSR1 makes it write a heap profile.
func (d *daemon) mem() memory {
	m := memory{rss: d.rss()}
	if profileSignal == nil {
		fatalf("no signal to ask the daemon's heap with on this system")
	}
	before := strings.Count(mustRead(d.log.Name()), heapLine)
	check(d.Cmd.Process.Signal(profileSignal))
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		log := mustRead(d.log.Name())
		if n := strings.Count(log, heapLine); n > before {
			// Kept under a name of its own: the daemon writes the file again at exit.
			profile := strings.TrimSuffix(d.log.Name(), ".log") + ".pprof"
			check(os.Rename(profile, strings.TrimSuffix(profile, ".pprof")+fmt.Sprintf("-%d.pprof", n)))
			rest := log[strings.LastIndex(log, heapLine)+len(heapLine):]
			mb, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
			check(err)
			m.heap = int64(mb * (1 << 20))
			break
		}
		if time.Now().After(deadline) {
			fatalf("no heap profile a minute after SIGUSR1")
		}
	}
	st, err := d.SessionStatus()
	check(err)
	for _, s := range st.Sessions {
		m.sessions++
		m.blocks += s.Blocks
	}
	return m
}

// heapLine precedes the heap's size in the daemon's log (cmd/fuzzls/memprofile.go).
const heapLine = "heap in use "

// perSession is m's memory over the idle daemon's, a session.
func (m memory) perSession(idle memory) (rss, heap float64) {
	n := float64(max(m.sessions, 1))
	return float64(m.rss-idle.rss) / n / (1 << 20), float64(m.heap-idle.heap) / n / (1 << 20)
}

func (m memory) String() string {
	return fmt.Sprintf("%.0f MB resident, %.1f MB heap", float64(m.rss)/(1<<20), float64(m.heap)/(1<<20))
}

// memoryOnly is -memory: each fuzzls of -fuzzls in turn, -rounds times,
// fuzzes the target and -others at once on the copy in -dir, and the
// daemon's memory is read.
func memoryOnly(root string) {
	dir := *dirFlag
	if dir == "" {
		tmp, err := os.MkdirTemp("", "fuzzls-bigrepo-")
		check(err)
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	dir, err := filepath.Abs(dir)
	check(err)
	check(os.MkdirAll(dir, 0o755))
	list := strings.Split(*bins, ",")
	if *bins == "" {
		step("building fuzzls")
		bin, err := lspclient.Build(root, dir)
		check(err)
		list = []string{bin}
	}
	ws := filepath.Join(dir, "ws")
	if _, err := os.Stat(filepath.Join(ws, "go.mod")); err != nil {
		ws = fetch(dir)
	}
	type row struct {
		bin        string
		idle, busy memory
	}
	var rows []row
	for round := range *rounds {
		for i, bin := range list {
			bin, err := filepath.Abs(bin)
			check(err)
			step("%s (round %d)", bin, round+1)
			d := start(bin, ws, "", filepath.Join(dir, "cache"), filepath.Join(dir, fmt.Sprintf("daemon-%d-%d.log", round+1, i+1)))
			idle := d.mem()
			var busy memory
			if *all {
				busy = d.fuzzAll(filepath.Join(ws, *testFile)).mem
			} else {
				d.startTarget(filepath.Join(ws, *testFile), *target)
				busy = d.startOthers(ws, 45*time.Minute)
			}
			d.close()
			rows = append(rows, row{bin, idle, busy})
			rss, heap := busy.perSession(idle)
			step("  idle %v; %d sessions (%d blocks): %v; a session %.1f MB resident, %.2f MB heap", idle, busy.sessions, busy.blocks, busy, rss, heap)
		}
	}
	what := fmt.Sprintf("%s %s and -others", *pkg, *target)
	if *all {
		what = "every target"
	}
	fmt.Printf("\n%s, %s, %d workers\n\n", *module, what, *parallel)
	fmt.Println("| fuzzls | sessions (blocks) | idle | fuzzing | a session, resident | a session, heap |")
	fmt.Println("| --- | --- | --- | --- | --- | --- |")
	for _, r := range rows {
		rss, heap := r.busy.perSession(r.idle)
		fmt.Printf("| %s | %d (%d) | %v | %v | %.1f MB | %.2f MB |\n", r.bin, r.busy.sessions, r.busy.blocks, r.idle, r.busy, rss, heap)
	}
}

func (d *daemon) startTarget(file, name string) {
	_, err := d.Command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(file)), Target: name})
	check(err)
}

// lensTime is the median time of five textDocument/codeLens requests.
func (d *daemon) lensTime(path string) time.Duration {
	var ts []time.Duration
	for range 5 {
		t := time.Now()
		lenses, err := d.Server.CodeLens(context.Background(), &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(path)}})
		check(err)
		ts = append(ts, time.Since(t))
		if len(lenses) == 0 {
			fatalf("no code lens in %s", path)
		}
	}
	return median(ts)
}

// firstCoverage waits for a fuzzls/coverage notification of the target that
// arrived after since, and returns how long after since it came.
func (d *daemon) firstCoverage(since time.Time, timeout time.Duration) time.Duration {
	var got time.Duration
	d.await("the first coverage of "+*target, timeout, func() bool {
		for _, c := range d.Coverage {
			if c.T.After(since) && c.V.Target.Name == *target {
				got = c.T.Sub(since)
				return true
			}
		}
		for _, s := range lastStatus(d.Client) {
			if s.Name == *target && s.State == fproto.StateError {
				fatalf("%s: %s", *target, s.Message)
			}
		}
		return false
	})
	return got
}

// saveOnce saves the non-test file with i new functions, as an editor does,
// and returns how long until the session fuzzes the new build.
func (d *daemon) saveOnce(ws string, i int) time.Duration {
	path := filepath.Join(ws, *saveFile)
	var nProg int
	d.Locked(func() { nProg = len(d.ProgressNotes) })
	saved := time.Now()
	text := edit(ws, i)
	d.version++
	check(d.Change(path, d.version, text))
	check(d.Save(path))
	d.await("the rebuild after save "+strconv.Itoa(i), 5*time.Minute, func() bool {
		for _, p := range d.ProgressNotes[nProg:] {
			if strings.HasPrefix(p.V, "end:build failed") {
				fatalf("the save did not build: %s", p.V)
			}
			if strings.HasPrefix(p.V, "end:built") {
				return true
			}
		}
		return false
	})
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		st, err := d.SessionStatus()
		check(err)
		for _, s := range st.Sessions {
			if s.Name == *target && s.State == fproto.StateFuzzing {
				took := time.Since(saved)
				step("  save %d: fuzzing again after %v (changed blocks %d)", i, took.Round(time.Millisecond), s.Changed)
				return took
			}
		}
		if time.Now().After(deadline) {
			fatalf("not fuzzing a minute after save %d", i)
		}
	}
}

// rss is the daemon's resident memory in bytes.
func (d *daemon) rss() int64 {
	n, err := proc.RSS(d.Cmd.Process.Pid)
	check(err)
	return n
}

// watches counts the daemon's inotify watches (its fdinfo's "inotify wd:" lines).
func (d *daemon) watches() int {
	dir := fmt.Sprintf("/proc/%d/fdinfo", d.Cmd.Process.Pid)
	fds, err := os.ReadDir(dir)
	check(err)
	n := 0
	for _, fd := range fds {
		data, err := os.ReadFile(filepath.Join(dir, fd.Name()))
		if err != nil {
			continue
		}
		n += strings.Count(string(data), "inotify wd:")
	}
	return n
}

type noteStats struct {
	coverage, status int
	bytes, largest   int
	perSecond        float64
}

// notes counts the notifications that came in the window after since (the
// first coverage), and the sizes of all of them.
func (d *daemon) notes(since time.Time) noteStats {
	var s noteStats
	d.Locked(func() {
		for _, c := range d.Coverage {
			if c.T.Sub(since) <= notesWindowDur {
				s.coverage++
			}
		}
		for _, st := range d.Status {
			if st.T.Sub(since) <= notesWindowDur {
				s.status++
			}
		}
		for _, sizes := range d.NoteBytes {
			for _, b := range sizes {
				s.bytes += b
				s.largest = max(s.largest, b)
			}
		}
	})
	s.perSecond = float64(s.coverage+s.status) / notesWindowDur.Seconds()
	return s
}

func (d *daemon) sessionStates() []string {
	st, err := d.SessionStatus()
	check(err)
	var out []string
	for _, s := range st.Sessions {
		out = append(out, fmt.Sprintf("%s.%s %s (%d/%d blocks, %.0f execs/s)", s.Package, s.Name, s.State, s.Covered, s.Blocks, s.ExecsPerSec))
	}
	slices.Sort(out)
	return out
}

func lastStatus(c *lspclient.Client) []fproto.SessionStatus {
	if len(c.Status) == 0 {
		return nil
	}
	return c.Status[len(c.Status)-1].V.Sessions
}

// allStats is what "Fuzz all" showed.
type allStats struct {
	targets, fuzzing, failed int           // sessions in all, fuzzing, not built or in error
	took                     time.Duration // until every session fuzzed or failed
	answers                  []time.Duration
	maxProcs                 int // processes of the targets' binaries at once
	rss                      int64
	mem                      memory
	failures                 []string
}

// fuzzAll starts every target of the workspace and waits until each fuzzes
// or fails to build, timing code lens and hover requests on the test file at
// path all along and counting the processes of the targets' binaries.
func (d *daemon) fuzzAll(path string) allStats {
	step("Fuzz all")
	var a allStats
	began := time.Now()
	if _, err := d.Command(fproto.CommandStart, nil); err != nil {
		fatalf("fuzzls.start (all): %v", err)
	}
	text := mustRead(path)
	pos := protocol.Position{Line: uint32(strings.Count(text[:strings.Index(text, "func "+*target)], "\n")), Character: 6}
	doc := protocol.TextDocumentIdentifier{URI: uri.File(path)}
	for deadline := began.Add(45 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		t := time.Now()
		_, err := d.Server.CodeLens(context.Background(), &protocol.CodeLensParams{TextDocument: doc})
		check(err)
		_, err = d.Server.Hover(context.Background(), &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{TextDocument: doc, Position: pos}})
		check(err)
		a.answers = append(a.answers, time.Since(t))
		a.maxProcs = max(a.maxProcs, testProcesses(d.cacheDir))
		st, err := d.SessionStatus()
		check(err)
		a.targets, a.fuzzing, a.failed = len(st.Sessions), 0, 0
		a.failures = a.failures[:0]
		for _, s := range st.Sessions {
			switch s.State {
			case fproto.StateFuzzing:
				a.fuzzing++
			case fproto.StateError, fproto.StateStopped:
				a.failed++
				a.failures = append(a.failures, fmt.Sprintf("%s.%s: %s %s", s.Package, s.Name, s.State, firstLine(s.Message)))
			}
		}
		if a.targets > 5 && a.fuzzing+a.failed == a.targets {
			break
		}
		if time.Now().After(deadline) {
			step("  not all fuzzing after 45 minutes: %d of %d", a.fuzzing, a.targets)
			break
		}
	}
	a.took = time.Since(began)
	time.Sleep(*hold)
	a.mem = d.mem()
	a.rss = a.mem.rss
	step("  %d targets: %d fuzzing, %d not, after %v", a.targets, a.fuzzing, a.failed, a.took.Round(time.Second))
	return a
}

// testProcesses counts the processes running a test binary of the daemon's
// (a *.test under its cache directory, dir): not those of other work on the
// machine.
func testProcesses(dir string) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && strings.HasSuffix(exe, ".test") && strings.HasPrefix(exe, dir+string(filepath.Separator)) {
			n++
		}
	}
	return n
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// soakRSS stops every session but the target's and reads the daemon's memory
// every minute for span.
func (d *daemon) soakRSS(path string, span time.Duration) []int64 {
	step("soak: %s alone for %v", *target, span)
	if _, err := d.Command(fproto.CommandStop, nil); err != nil {
		fatalf("fuzzls.stop (all): %v", err)
	}
	d.startTarget(path, *target)
	var rss []int64
	for end := time.Now().Add(span); time.Now().Before(end); {
		time.Sleep(min(time.Minute, time.Until(end)))
		rss = append(rss, d.rss())
		step("  %v: %.0f MB", time.Duration(len(rss))*time.Minute, float64(rss[len(rss)-1])/(1<<20))
	}
	return rss
}

type report struct {
	refCold, refWarm time.Duration
	lens             time.Duration
	cold, warm       time.Duration
	saves            []time.Duration
	rssIdle          int64
	rssOne, rssFive  int64
	idle2, five      memory // the second daemon idle, and with the target and -others fuzzing
	watches          int
	notes            noteStats
	sessions         []string
	all              allStats
	soak             []int64
}

// print writes the table and says whether every goal was met.
func (r *report) print() bool {
	ok := true
	row := func(name, goal, got string, pass bool) {
		verdict := "pass"
		if !pass {
			verdict, ok = "FAIL", false
		}
		if goal == "" {
			verdict = ""
		}
		fmt.Printf("| %s | %s | %s | %s |\n", name, goal, got, verdict)
	}
	mb := func(b int64) string { return fmt.Sprintf("%.0f MB", float64(b)/(1<<20)) }
	fmt.Printf("\n%s, %s %s, %d workers\n\n", *module, *pkg, *target, *parallel)
	fmt.Println("| measurement | goal | measured | |")
	fmt.Println("| --- | --- | --- | --- |")
	row("go test -c, cold build cache (reference)", "", secs(r.refCold), true)
	row("go test -c after the save's edit (reference)", "", secs(r.refWarm), true)
	row("code lenses of the test file (median of 5)", "≤ "+secs(goalLens), secs(r.lens), r.lens <= goalLens)
	ratio := float64(r.cold) / float64(r.refCold)
	row("first coverage after start, cold caches", fmt.Sprintf("≤ %.1f× go test -c", goalColdRatio), fmt.Sprintf("%s (%.2f×)", secs(r.cold), ratio), ratio <= goalColdRatio)
	row("first coverage after start, warm caches", "≤ "+secs(goalWarm), secs(r.warm), r.warm <= goalWarm)
	save := median(r.saves)
	row(fmt.Sprintf("save of %s → fuzzing again (median of %d)", filepath.Base(*saveFile), len(r.saves)), "≤ "+secs(goalSave), secs(save), save <= goalSave)
	row("daemon memory, idle", "", mb(r.rssIdle), true)
	row("daemon memory, one target fuzzing", "≤ "+mb(goalRSSOne), mb(r.rssOne), r.rssOne <= goalRSSOne)
	row("daemon memory, five targets fuzzing", "≤ "+mb(goalRSSFive), mb(r.rssFive), r.rssFive <= goalRSSFive)
	perSession := func(m memory) string {
		rss, heap := m.perSession(r.idle2)
		return fmt.Sprintf("idle %v; %v: %.1f MB resident, %.2f MB heap a session (%d blocks in all)", r.idle2, m, rss, heap, m.blocks)
	}
	row(fmt.Sprintf("daemon memory a session, %d sessions", r.five.sessions), "", perSession(r.five), true)
	row("inotify watches", fmt.Sprintf("≤ %d", goalWatches), strconv.Itoa(r.watches), r.watches <= goalWatches)
	n := r.notes
	row(fmt.Sprintf("notifications in the %v after the first coverage, saves included (coverage, status)", notesWindowDur), fmt.Sprintf("≤ %.0f/s", goalNotesPerS),
		fmt.Sprintf("%d, %d: %.1f/s", n.coverage, n.status, n.perSecond), n.perSecond <= goalNotesPerS)
	row("largest notification", "≤ "+mb(goalNoteBytes), fmt.Sprintf("%.2f MB (%.1f MB in all)", float64(n.largest)/(1<<20), float64(n.bytes)/(1<<20)), n.largest <= goalNoteBytes)
	if a := r.all; a.targets > 0 {
		p95 := percentile(a.answers, 0.95)
		row(fmt.Sprintf("Fuzz all: %d targets fuzzing (%d did not build or stopped)", a.fuzzing, a.failed), "all that build", fmt.Sprintf("%d of %d after %s", a.fuzzing, a.targets, secs(a.took)), a.fuzzing+a.failed == a.targets)
		row(fmt.Sprintf("Fuzz all: code lens + hover, 95th percentile of %d", len(a.answers)), "≤ "+secs(goalAnswerP95), secs(p95), p95 <= goalAnswerP95)
		row("Fuzz all: test binaries running at once (workers and seeds runs)", fmt.Sprintf("≤ %d + seeds runs", *parallel), strconv.Itoa(a.maxProcs), a.maxProcs <= *parallel+2)
		row("Fuzz all: daemon memory", "", mb(a.rss), true)
		row(fmt.Sprintf("Fuzz all: daemon memory a session, %d sessions", a.mem.sessions), "", perSession(a.mem), true)
		for _, f := range a.failures {
			fmt.Println("  not fuzzing: " + f)
		}
	}
	if n := len(r.soak); n >= 3 {
		growth := r.soak[n-1] - r.soak[1]
		row(fmt.Sprintf("daemon memory over %d minutes, one target (2nd minute → last; max)", n), "growth ≤ "+mb(goalSoakGrowth),
			fmt.Sprintf("%s → %s (%+.0f MB); max %s", mb(r.soak[1]), mb(r.soak[n-1]), float64(growth)/(1<<20), mb(slices.Max(r.soak))), growth <= goalSoakGrowth)
	}
	fmt.Println("\nSessions at the end:")
	for _, s := range r.sessions {
		fmt.Println("  " + s)
	}
	return ok
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// percentile is the p-th percentile (0 < p ≤ 1) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func mustRead(path string) string {
	data, err := os.ReadFile(path)
	check(err)
	return string(data)
}

func step(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bigrepo: "+format+"\n", args...)
}

func check(err error) {
	if err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bigrepo: "+format+"\n", args...)
	os.Exit(2)
}
