package engine

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"fuzzls.dev/fuzzls/engine/failure"
	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/internal/testws"
	"fuzzls.dev/fuzzls/protocol"
)

// TestCalc is the README's example: the calculator's division by zero is found,
// reported at the panic line, minimized, and the saved input makes go test fail.
func TestCalc(t *testing.T) {
	dir := copyTree(t, "../testdata/calc")
	before := treeHash(t, dir)
	s, rec := fuzzOnce(t, dir, "FuzzEval", Options{Parallel: 2})
	crashes := s.Crashes()
	if len(crashes) != 1 {
		t.Fatalf("got %d crashes, want 1; events: %v", len(crashes), rec.events)
	}
	c := crashes[0]
	if c.Kind != protocol.KindPanic {
		t.Errorf("kind = %q, want panic", c.Kind)
	}
	wantFile := filepath.Join(dir, "calc.go")
	if c.File != wantFile || c.Line != markerLine(t, wantFile, "// BUG") {
		t.Errorf("location = %s:%d, want %s:%d", c.File, c.Line, wantFile, markerLine(t, wantFile, "// BUG"))
	}
	if !c.Minimized {
		t.Errorf("not minimized")
	}
	vals, err := fuzzrt.Unmarshal([]byte(c.Input))
	if err != nil {
		t.Fatalf("input %q: %v", c.Input, err)
	}
	if got := vals[0].(string); len(got) > 4 {
		t.Errorf("minimized input %q is longer than needed (\"0/0\" fails)", got)
	}
	if after := treeHash(t, dir); after != before {
		t.Errorf("the run changed the user's tree")
	}
	// The saved input, as a seed in a scratch copy, makes go test fail.
	seedDir := filepath.Join(dir, "testdata", "fuzz", "FuzzEval")
	os.MkdirAll(seedDir, 0o755)
	if err := os.WriteFile(filepath.Join(seedDir, fuzzrt.FileName([]byte(c.Input))), []byte(c.Input), 0o644); err != nil {
		t.Fatal(err)
	}
	if failed, out := goTestFails(t, dir, "FuzzEval"); !failed {
		t.Errorf("go test passed on the minimized input:\n%s", out)
	}
	_ = time.Second
}

// TestCrashKinds checks that each kind of failure is caught, classified and located
// at the line marked "MARK:<kind>" in testdata/crashers.
func TestCrashKinds(t *testing.T) {
	dir := copyTree(t, "../testdata/crashers")
	tests := []struct {
		desc, target string
		kind         failure.Kind
		marker, file string
	}{
		{"panic in the fuzz function's goroutine", "FuzzPanic", protocol.KindPanic, "MARK:panic", "crashers.go"},
		{"t.Fatalf", "FuzzError", protocol.KindError, "MARK:error", "crashers_test.go"},
		{"panic in a goroutine the target started", "FuzzGoroutinePanic", protocol.KindGoroutinePanic, "MARK:goroutine-panic", "crashers.go"},
		{"stack overflow", "FuzzFatal", protocol.KindFatal, "MARK:fatal", "crashers.go"},
		{"map written by two goroutines the target started", "FuzzMapWrites", protocol.KindFatal, "MARK:concurrent-map-writes", "crashers.go"},
		{"os.Exit", "FuzzExit", protocol.KindExit, "MARK:exit", "crashers.go"},
		{"log.Fatalf", "FuzzLogFatal", protocol.KindExit, "MARK:logfatal", "crashers.go"},
		{"hang", "FuzzHang", protocol.KindHang, "MARK:hang", "crashers.go"},
		{"busy loop with a comparison", "FuzzSpin", protocol.KindHang, "MARK:spin", "crashers.go"},
		{"endless loop busy in the functions it calls", "FuzzChurn", protocol.KindHang, "MARK:churn", "crashers.go"},
		{"unbounded allocation", "FuzzAlloc", protocol.KindOOM, "MARK:oom", "crashers.go"},
		{"one allocation past the limit, never touched", "FuzzBigAlloc", protocol.KindOOM, "MARK:bigalloc", "crashers.go"},
	}
	for _, tc := range tests {
		t.Run(tc.target, func(t *testing.T) {
			// The default (adaptive) hang limit throughout: a hang is suspected
			// after half a second and confirmed at go test's bound, and a 1 GB
			// stack that takes seconds to overflow or an allocation still growing
			// is not mistaken for one.
			var timeout time.Duration
			rss := 0 // the default 2 GiB leaves room for a 1 GB stack to overflow
			if tc.kind == protocol.KindOOM {
				rss = 300
			}
			s, _ := fuzzOnce(t, dir, tc.target, Options{Parallel: 1, Timeout: timeout, MinimizeTime: 5 * time.Second, RSSLimitMB: rss})
			cs := s.Crashes()
			if len(cs) != 1 {
				t.Fatalf("%s: got %d crashes, want 1", tc.desc, len(cs))
			}
			c := cs[0]
			file := filepath.Join(dir, tc.file)
			line := markerLine(t, file, tc.marker)
			if c.Kind != tc.kind || c.File != file || (c.Line != line && !((tc.kind == protocol.KindHang || tc.kind == protocol.KindOOM) && c.Line >= line && c.Line <= line+3)) {
				t.Errorf("%s: got %s at %s:%d, want %s at %s:%d\nmessage: %s\noutput:\n%s", tc.desc, c.Kind, c.File, c.Line, tc.kind, file, line, c.Message, truncate(c.Output, 3000))
			}
			if c.Flaky {
				t.Errorf("%s: reported flaky; every replay of it fails", tc.desc)
			}
			vals, err := fuzzrt.Unmarshal([]byte(c.Input))
			if err != nil || len(vals) != 1 || len(vals[0].(string)) < 4 || vals[0].(string)[:4] != "boom" {
				t.Errorf("%s: input %q does not trigger the bug (%v)", tc.desc, c.Input, err)
			}
		})
	}
}

// TestOOMOnEveryWorker: an allocation past the memory limit that the target never
// touches is not resident on a fresh worker (the runtime clears only reused
// memory), so resident memory alone catches it on some workers and not others.
// The worker's allocation check fails it on every one: each replay here starts a new
// worker and runs the input once.
func TestOOMOnEveryWorker(t *testing.T) {
	dir := copyTree(t, "../testdata/crashers")
	s, _ := fuzzOnce(t, dir, "FuzzBigAlloc", Options{Parallel: 1, MinimizeTime: 5 * time.Second, RSSLimitMB: 300})
	cs := s.Crashes()
	if len(cs) != 1 || cs[0].Kind != protocol.KindOOM || cs[0].Flaky {
		t.Fatalf("crashes = %+v, want one oom, not flaky", cs)
	}
	if want := "over the limit of 300 MiB"; !strings.Contains(cs[0].Message, want) {
		t.Errorf("message %q does not say %q", cs[0].Message, want)
	}
	file := filepath.Join(dir, "crashers.go")
	line := markerLine(t, file, "MARK:bigalloc")
	for i := range 3 {
		f, ok := replayFresh(t, s, cs[0].Input)
		if !ok || f == nil || f.Kind != protocol.KindOOM || f.File != file || f.Line != line {
			t.Fatalf("replay %d on a fresh worker: %+v (ran: %v), want an oom at %s:%d", i, f, ok, file, line)
		}
	}
}

// TestGarbageIsNoOOM: a target that churns through more than the memory limit
// in large objects, each dropped before the next, is not reported.
func TestGarbageIsNoOOM(t *testing.T) {
	dir := copyTree(t, "../testdata/crashers")
	s, _ := fuzzOnce(t, dir, "FuzzGarbage", Options{Parallel: 1, FuzzExecs: 30, RSSLimitMB: 300})
	if cs := s.Crashes(); len(cs) != 0 {
		t.Fatalf("a target never holding more than 4 MiB was reported: %s %s\n%s", cs[0].Kind, cs[0].Message, truncate(cs[0].Output, 2000))
	}
	if n := s.Stats().Execs; n < 30 {
		t.Fatalf("%d executions, want 30", n)
	}
}

// TestHangReplaysAgree: a hang whose loop spends its time in the functions it
// calls is located at the loop on every replay, each on a fresh worker; one stack
// taken at one moment would be in one callee or the other.
func TestHangReplaysAgree(t *testing.T) {
	dir := copyTree(t, "../testdata/crashers")
	s, _ := fuzzOnce(t, dir, "FuzzChurn", Options{Parallel: 1, MinimizeTime: time.Second})
	cs := s.Crashes()
	if len(cs) != 1 || cs[0].Kind != protocol.KindHang {
		t.Fatalf("crashes = %+v, want one hang", cs)
	}
	file := filepath.Join(dir, "crashers.go")
	line := markerLine(t, file, "MARK:churn")
	for i := range 4 {
		f, ok := replayFresh(t, s, cs[0].Input)
		if !ok || f == nil || f.Kind != protocol.KindHang || f.File != file || f.Line < line || f.Line > line+3 {
			t.Fatalf("replay %d on a fresh worker: %+v (ran: %v), want a hang in the loop at %s:%d", i, f, ok, file, line)
		}
	}
}

// TestAdaptiveHangLimit checks that the default hang limit suspects a hang after
// about half a second and reports it at go test's bound (the message says which),
// and leaves alone a target whose every input takes longer than half a second.
func TestAdaptiveHangLimit(t *testing.T) {
	dir := copyTree(t, "../testdata/crashers")
	t.Run("hang", func(t *testing.T) {
		s, _ := fuzzOnce(t, dir, "FuzzHang", Options{Parallel: 1, MinimizeTime: time.Second})
		cs := s.Crashes()
		if len(cs) != 1 || cs[0].Kind != protocol.KindHang || cs[0].Message != "input ran longer than 10s" {
			t.Fatalf("crashes = %+v, want one hang after 10s", cs)
		}
	})
	t.Run("slow target", func(t *testing.T) {
		s, _ := fuzzOnce(t, dir, "FuzzSlow", Options{Parallel: 1, FuzzExecs: 6})
		if cs := s.Crashes(); len(cs) != 0 {
			t.Fatalf("a target taking 0.7 s per input was reported: %+v", cs[0])
		}
		if n := s.Stats().Execs; n < 6 {
			t.Fatalf("%d executions, want 6", n)
		}
	})
}

func TestHangLimitRule(t *testing.T) {
	var h hangLimit
	if got := h.after(); got != hangCap {
		t.Errorf("before any execution: %v, want the cap %v", got, hangCap)
	}
	h.observe(20 * time.Microsecond)
	if got := h.after(); got != hangFloor {
		t.Errorf("fast target: %v, want the floor %v", got, hangFloor)
	}
	h.observe(300 * time.Millisecond)
	h.observe(100 * time.Millisecond) // a faster one does not lower it
	if got := h.after(); got != 3*time.Second {
		t.Errorf("slowest 300ms: %v, want 3s", got)
	}
	h.observe(5 * time.Second)
	if got := h.after(); got != hangCap {
		t.Errorf("slowest 5s: %v, want the cap", got)
	}
	h.reset()
	if got := h.after(); got != hangCap {
		t.Errorf("after reset: %v, want the cap", got)
	}
	fixed := hangLimit{fixed: 2 * time.Second}
	fixed.observe(time.Hour)
	if got := fixed.after(); got != 2*time.Second {
		t.Errorf("-timeout 2s: %v", got)
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// TestWorkspace covers a go.work workspace whose target is in an external test
// package with its own TestMain, a build-tagged file, and a bug in a dependency from
// another workspace module (which is instrumented too).
func TestWorkspace(t *testing.T) {
	dir := copyTree(t, "../testdata/workspace")
	app := filepath.Join(dir, "app")
	targets, err := Discover(t.Context(), BuildFlags{}, app, "./...")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tg := range targets {
		names[tg.Name] = true
	}
	if !names["FuzzParse"] || !names["FuzzLinuxOnly"] {
		t.Errorf("targets = %v, want FuzzParse and the build-tagged FuzzLinuxOnly", targets)
	}
	s, _ := fuzzOnce(t, app, "FuzzParse", Options{Parallel: 2})
	cs := s.Crashes()
	if len(cs) != 1 {
		t.Fatalf("got %d crashes, want 1", len(cs))
	}
	dep := filepath.Join(dir, "lib", "checksum", "checksum.go")
	if c := cs[0]; c.Kind != protocol.KindPanic || c.File != dep || c.Line != markerLine(t, dep, "MARK:dep") {
		t.Errorf("got %s at %s:%d (%s), want a panic at the MARK:dep line of %s", c.Kind, c.File, c.Line, c.Message, dep)
	}
	blocks, hit := s.Coverage()
	depHit := false
	for i, b := range blocks {
		if b.File == dep && hit[i] {
			depHit = true
		}
	}
	if !depHit {
		t.Errorf("no covered block in the dependency %s", dep)
	}
}

// TestBadShape: a target whose argument type cannot be fuzzed gets an error naming it.
func TestBadShape(t *testing.T) {
	dir := copyTree(t, "../testdata/badshapes")
	e := New(Options{CacheDir: t.TempDir()}, nil)
	defer e.Close()
	targets, err := e.Targets(t.Context(), dir, ".")
	if err != nil || len(targets) != 1 {
		t.Fatalf("targets %v, %v", targets, err)
	}
	err = e.Start(targets[0]).Wait()
	if err == nil || !strings.Contains(err.Error(), "FuzzMap") || !strings.Contains(err.Error(), "map[string]int") {
		t.Errorf("error = %v, want one naming FuzzMap and its type", err)
	}
}

// TestKilledWorker: a worker killed from outside is replaced, no failure is
// reported for it, the corpus on disk keeps every entry, and a second run starts
// from the corpus the first one built.
func TestKilledWorker(t *testing.T) {
	dir := copyTree(t, "../testdata/crashers")
	cache := t.TempDir()
	rec := &recorder{}
	e := New(Options{CacheDir: cache, Parallel: 2, KeepFuzzing: true}, rec.observe)
	defer e.Close()
	target := findTarget(t, e, dir, "FuzzNoBug")
	s := e.Start(target)
	waitFor(t, 60*time.Second, func() bool { return len(s.liveWorkers()) == 2 && s.Stats().Execs > 1000 })
	before := corpusFiles(t, corpusDir(cache, target))
	victim := s.liveWorkers()[0]
	victim.cmd.Process.Kill()
	waitFor(t, 30*time.Second, func() bool {
		ws := s.liveWorkers()
		return len(ws) == 2 && ws[0] != victim && ws[1] != victim
	})
	execs := s.Stats().Execs
	waitFor(t, 30*time.Second, func() bool { return s.Stats().Execs > execs+1000 })
	if n := len(s.Crashes()); n != 0 {
		t.Errorf("a killed worker was reported as %d failure(s): %+v", n, s.Crashes()[0])
	}
	s.Stop()
	after := corpusFiles(t, corpusDir(cache, target))
	for f := range before {
		if !after[f] {
			t.Errorf("corpus entry %s lost", f)
		}
	}
	if len(after) == 0 {
		t.Fatal("no corpus saved")
	}
	// A second run starts from that corpus: its coverage is there at once.
	covered := s.Stats().Covered
	s2 := e.Start(target)
	waitFor(t, 60*time.Second, func() bool { return s2.State() == StateFuzzing })
	if n := s2.Stats().Corpus; n < len(after) {
		t.Errorf("second run started with %d corpus entries, the first saved %d", n, len(after))
	}
	waitFor(t, 10*time.Second, func() bool { return s2.Stats().Covered >= covered })
	s2.Stop()
}

func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func corpusFiles(t *testing.T, dir string) map[string]bool {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	out := map[string]bool{}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), partialSuffix) {
			out[e.Name()] = true
		}
	}
	return out
}

// TestMultiArg: a target with six typed arguments; the failure is minimized across
// all of them and the minimized input makes go test fail.
func TestMultiArg(t *testing.T) {
	dir := copyTree(t, "../testdata/multiarg")
	s, _ := fuzzOnce(t, dir, "FuzzClip", Options{Parallel: 2})
	cs := s.Crashes()
	if len(cs) != 1 {
		t.Fatalf("got %d crashes, want 1", len(cs))
	}
	c := cs[0]
	file := filepath.Join(dir, "rect.go")
	if c.Kind != protocol.KindPanic || c.File != file || c.Line != markerLine(t, file, "// BUG") {
		t.Errorf("got %s at %s:%d, want a panic at the BUG line", c.Kind, c.File, c.Line)
	}
	vals, err := fuzzrt.Unmarshal([]byte(c.Input))
	if err != nil || len(vals) != 6 {
		t.Fatalf("input %q: %v", c.Input, err)
	}
	// Minimal values: y just below -50, x+w just out of the 100 cells, h and scale small.
	x, y, w, h, scale := vals[0].(int32), vals[1].(int32), vals[2].(uint16), vals[3].(uint16), vals[4].(float64)
	if x < 90 || y != -51 || int(x)+int(w) != 100 || h != 1 || scale > 3 {
		t.Errorf("minimized to x=%d y=%d w=%d h=%d scale=%v, want x+w=100, y=-51, h=1, scale≤3 (input %q)", x, y, w, h, scale, c.Input)
	}
	seedDir := filepath.Join(dir, "testdata", "fuzz", "FuzzClip")
	os.MkdirAll(seedDir, 0o755)
	os.WriteFile(filepath.Join(seedDir, "crash"), []byte(c.Input), 0o644)
	if failed, out := goTestFails(t, dir, "FuzzClip"); !failed {
		t.Errorf("go test passed on the minimized input:\n%s", out)
	}
}

// TestKeepFuzzingDedup: with KeepFuzzing, many inputs hitting one bug make one
// report with a count, and a second bug in the same target is reported on its own.
func TestKeepFuzzingDedup(t *testing.T) {
	dir := copyTree(t, "../testdata/crashers")
	s, _ := fuzzOnce(t, dir, "FuzzTwoBugs", Options{Parallel: 2, KeepFuzzing: true, FuzzTime: 8 * time.Second, MinimizeTime: 2 * time.Second})
	cs := s.Crashes()
	kinds := map[failure.Kind]*Crash{}
	for _, c := range cs {
		if kinds[c.Kind] != nil {
			t.Errorf("two reports of kind %s: %s:%d and %s:%d", c.Kind, kinds[c.Kind].File, kinds[c.Kind].Line, c.File, c.Line)
		}
		kinds[c.Kind] = c
	}
	if len(cs) != 2 || kinds[protocol.KindPanic] == nil || kinds[protocol.KindError] == nil {
		t.Fatalf("got %d reports (%v), want one panic and one error", len(cs), kinds)
	}
	if p := kinds[protocol.KindPanic]; p.Count < 2 {
		t.Errorf("the panic was seen %d times; repeats are not counted", p.Count)
	}
	if e := kinds[protocol.KindError]; e.Line != markerLine(t, filepath.Join(dir, "crashers_test.go"), "MARK:twobugs") {
		t.Errorf("error at line %d", e.Line)
	}
}

// TestSharedCores: three targets on two worker slots all get fuzzed, and together
// they never run more than two workers.
func TestSharedCores(t *testing.T) {
	dir := copyTree(t, "../testdata/crashers")
	e := New(Options{CacheDir: t.TempDir(), Parallel: 2, FuzzTime: 12 * time.Second}, nil)
	defer e.Close()
	targets, err := e.Targets(t.Context(), dir, ".")
	if err != nil {
		t.Fatal(err)
	}
	var ss []*Session
	for _, tg := range targets {
		if strings.HasPrefix(tg.Name, "FuzzNoBug") {
			ss = append(ss, e.Start(tg))
		}
	}
	if len(ss) != 3 {
		t.Fatalf("want 3 targets, got %d", len(ss))
	}
	maxLive := 0
	done := make(chan struct{})
	go func() {
		for _, s := range ss {
			s.Wait()
		}
		close(done)
	}()
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-time.After(20 * time.Millisecond):
			n := 0
			for _, s := range ss {
				n += len(s.liveWorkers())
			}
			maxLive = max(maxLive, n)
		}
	}
	if maxLive > 2 {
		t.Errorf("%d workers ran at once on 2 slots", maxLive)
	}
	for _, s := range ss {
		if st := s.Stats(); st.Execs == 0 {
			t.Errorf("%s never ran", st.Target.Name)
		}
	}
}

// TestFlaky: a failure that does not happen again on replay is reported as flaky.
func TestFlaky(t *testing.T) {
	dir := copyTree(t, "../testdata/crashers")
	s, _ := fuzzOnce(t, dir, "FuzzFlaky", Options{Parallel: 1})
	cs := s.Crashes()
	if len(cs) != 1 || !cs[0].Flaky || cs[0].Minimized {
		t.Fatalf("crashes = %+v, want one flaky, not minimized", cs)
	}
}

// TestNativeCacheWarmStart: entries in go test -fuzz's cache ($GOCACHE/fuzz) seed
// the run.
func TestNativeCacheWarmStart(t *testing.T) {
	dir := copyTree(t, "../testdata/crashers")
	// The real GOCACHE (a fresh one would mean a cold build); only this example
	// target's directory in it is touched, and removed afterwards.
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOCACHE", strings.TrimSpace(string(out)))
	native := filepath.Join(strings.TrimSpace(string(out)), "fuzz", "example.com", "crashers", "FuzzSecret")
	os.RemoveAll(native)
	os.MkdirAll(native, 0o755)
	t.Cleanup(func() { os.RemoveAll(native) })
	input := fuzzrt.Marshal([]any{"open sesame, 42 times"})
	os.WriteFile(filepath.Join(native, fuzzrt.FileName(input)), input, 0o644)
	os.WriteFile(filepath.Join(native, "garbage"), []byte("not a corpus file"), 0o644)
	s, _ := fuzzOnce(t, dir, "FuzzSecret", Options{Parallel: 1, FuzzTime: 30 * time.Second, MinimizeTime: time.Second})
	cs := s.Crashes()
	if len(cs) != 1 || cs[0].Message != "secret found" {
		t.Fatalf("crashes = %+v, want the secret", cs)
	}
}

// TestCorpusMinimization: minimizing keeps every covered block reachable from the
// kept entries and deletes the dropped ones from the cache.
func TestCorpusMinimization(t *testing.T) {
	dir := copyTree(t, "../testdata/crashers")
	cache := t.TempDir()
	s, _ := fuzzOnce(t, dir, "FuzzNoBugBytes", Options{Parallel: 2, CacheDir: cache, FuzzTime: 4 * time.Second})
	t.Logf("stats %+v", s.Stats())
	// Add redundant entries: copies of what is there with the same coverage.
	var extra []entry
	for i, en := range s.corpus.list() {
		dup := entry{input: string(fuzzrt.Marshal([]any{[]byte(fmt.Sprintf("dup-%d", i))})), cov: en.cov}
		extra = append(extra, dup)
	}
	for _, en := range extra {
		s.corpus.add(en.input, en.cov)
		WriteCorpusFile(corpusDir(cache, s.target), en.input)
	}
	want := map[uint32]bool{}
	for _, en := range s.corpus.list() {
		for _, c := range en.cov {
			want[c] = true
		}
	}
	before, after := s.corpus.minimize()
	if after >= before {
		t.Fatalf("nothing dropped: %d → %d", before, after)
	}
	got := map[uint32]bool{}
	for _, en := range s.corpus.list() {
		for _, c := range en.cov {
			got[c] = true
		}
	}
	if len(got) != len(want) {
		t.Errorf("minimized corpus reaches %d (block, bucket) pairs, the full one %d", len(got), len(want))
	}
	if n := len(corpusFiles(t, corpusDir(cache, s.target))); n > after {
		t.Errorf("%d files left in the cache for %d entries", n, after)
	}
}

// TestModuleDependencies: a module that requires other modules (a TOML parser from
// the module cache): the dependency is instrumented in a copy, so its blocks are
// covered, and the module cache is left as it was.
func TestModuleDependencies(t *testing.T) {
	dir := copyTree(t, "../bench/targets")
	s, _ := fuzzOnce(t, filepath.Join(dir, "parsers"), "FuzzToml", Options{Parallel: 2, FuzzTime: 5 * time.Second})
	if n := len(s.Crashes()); n != 0 {
		t.Fatalf("%d crashes in the TOML parser: %+v", n, s.Crashes()[0])
	}
	blocks, hit := s.Coverage()
	depHit := 0
	for i, b := range blocks {
		if strings.Contains(b.File, "toml@") && hit[i] {
			depHit++
		}
	}
	if depHit < 50 {
		t.Errorf("%d covered blocks in the TOML parser; it is not instrumented", depHit)
	}
	if st := s.Stats(); st.Corpus < 10 {
		t.Errorf("corpus of %d entries after 5 s: no feedback from the dependency", st.Corpus)
	}
}

// TestAutoDictionary: testdata/fuzz/FuzzXxx.dict is read, and its tokens reach the
// mutators: a token that appears nowhere in the code, nor in a comparison whose
// operand is in the input, is found through it.
func TestAutoDictionary(t *testing.T) {
	dir := copyTree(t, "../testdata/crashers")
	os.MkdirAll(filepath.Join(dir, "testdata", "fuzz"), 0o755)
	os.WriteFile(filepath.Join(dir, "testdata", "fuzz", "FuzzSecret.dict"), []byte("# the secret\nsecret=\"open sesame, 42 times\"\n"), 0o644)
	s, _ := fuzzOnce(t, dir, "FuzzSecret", Options{Parallel: 2, FuzzTime: 30 * time.Second, MinimizeTime: time.Second})
	if cs := s.Crashes(); len(cs) != 1 || cs[0].Message != "secret found" {
		t.Fatalf("crashes = %+v, want the secret, found through the dictionary", cs)
	}
	os.WriteFile(filepath.Join(dir, "testdata", "fuzz", "FuzzSecret.dict"), []byte("secret=unquoted\n"), 0o644)
	e := New(Options{CacheDir: t.TempDir()}, nil)
	defer e.Close()
	err := e.Start(s.Target()).Wait()
	if err == nil || !strings.Contains(err.Error(), "FuzzSecret.dict") {
		t.Errorf("a malformed dictionary gave %v, want an error naming the file", err)
	}
}

// TestBaselineCoverage: the target's own body (its f.Add calls) counts as covered,
// though it runs before any input.
func TestBaselineCoverage(t *testing.T) {
	dir := copyTree(t, "../testdata/calc")
	s, _ := fuzzOnce(t, dir, "FuzzEval", Options{Parallel: 1, MinimizeTime: time.Second})
	test := filepath.Join(dir, "calc_test.go")
	addLine := markerLine(t, test, `f.Add("1+2")`)
	blocks, hit := s.Coverage()
	found := false
	for i, b := range blocks {
		if b.File == test && b.StartLine <= addLine && addLine <= b.EndLine {
			found = true
			if !hit[i] {
				t.Errorf("the block of f.Add (%d:%d-%d:%d) is not covered", b.StartLine, b.StartCol, b.EndLine, b.EndCol)
			}
		}
	}
	if !found {
		t.Errorf("no block covers line %d of calc_test.go", addLine)
	}
}

// TestStopWaitsForMinimization: with KeepFuzzing a crash is minimized beside
// fuzzing; Stop returns only once that minimization is over, so nothing is
// written into the cache (nor a replay worker left running) after it. Stopping
// cancels the minimization within milliseconds, so without the wait this fails
// only when the race is lost (as the daemon's TestExitWhenInputCloses did in CI:
// its cache directory was written while being removed).
func TestStopWaitsForMinimization(t *testing.T) {
	dir := copyTree(t, "../testdata/crashers")
	cache := t.TempDir()
	rec := &recorder{}
	e := New(Options{CacheDir: cache, Parallel: 1, KeepFuzzing: true, MinimizeTime: 30 * time.Second}, rec.observe)
	defer e.Close()
	// each replay of FuzzHang's input hangs: minimizing takes a while
	s := e.Start(findTarget(t, e, dir, "FuzzHang"))
	waitFor(t, 90*time.Second, func() bool { return len(s.Crashes()) > 0 })
	s.Stop()
	before := treeHash(t, cache)
	for _, c := range s.Crashes() {
		if !c.Minimized && !c.Flaky {
			t.Errorf("Stop returned while %s was still being minimized", c.Kind)
		}
	}
	time.Sleep(time.Second)
	if treeHash(t, cache) != before {
		t.Error("the cache changed after Stop returned: a minimization outlived its session")
	}
}

// findTarget returns the target named name in the package at dir.
func findTarget(t *testing.T, e *Engine, dir, name string) Target {
	t.Helper()
	targets, err := e.Targets(t.Context(), dir, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		if tg.Name == name {
			return tg
		}
	}
	t.Fatalf("no target %s in %s", name, dir)
	return Target{}
}

// TestInternalPackages: the harness may not import an internal package outside
// the target's tree, whether of the workspace (codec/internal/frame, reached from
// tool/) or of a dependency module (unpack/internal/lzx, a local replace, as
// lz4's decoder is internal to its module); both are instrumented and reached
// through bridges, so the bugs behind their byte-by-byte tags are found, which
// takes feedback from inside them. The dependency's crash and coverage name its
// own files, not the instrumented copy the binary ran.
func TestInternalPackages(t *testing.T) {
	dir := copyTree(t, "../testdata/layered")
	s, _ := fuzzOnce(t, dir, "FuzzRead", Options{Parallel: 2, KeepFuzzing: true, FuzzTime: 15 * time.Second, MinimizeTime: time.Second})
	frame := filepath.Join(dir, "codec", "internal", "frame", "frame.go")
	msgs := map[string]*Crash{}
	for _, c := range s.Crashes() {
		msgs[c.Message] = c
	}
	if c := msgs["frame: tag parsed past its end"]; c == nil || c.File != frame || c.Line != markerLine(t, frame, "MARK:frame") {
		t.Errorf("the workspace internal package's bug: %+v, want a crash at MARK:frame", c)
	}
	// The dependency's copy is what ran; its crash and its blocks are named by
	// the dependency's own file, which is in the user's tree here.
	lzx := filepath.Join(dir, "third_party", "unpack", "internal", "lzx", "lzx.go")
	if c := msgs["lzx: block header overruns"]; c == nil || c.File != lzx || c.Line != markerLine(t, lzx, "MARK:lzx") {
		t.Errorf("the dependency's internal package's bug: %+v, want a crash at MARK:lzx", c)
	}
	blocks, hit := s.Coverage()
	covered := map[string]int{}
	for i, b := range blocks {
		if hit[i] {
			covered[b.File]++
		}
	}
	for _, f := range []string{frame, lzx} {
		if covered[f] < 5 {
			t.Errorf("%d covered blocks in %s, want its whole tag: %v", covered[f], f, covered)
		}
	}
}

// TestTestFileDeletedAndRestored: a test file deleted and then restored (what git
// stash and a branch switch do) fails one build with "no test files", and the
// next build after it is back succeeds: the package load is not kept from when
// the file was gone.
func TestTestFileDeletedAndRestored(t *testing.T) {
	dir := copyTree(t, "../testdata/calc")
	rec := &recorder{}
	e := New(Options{CacheDir: t.TempDir(), Parallel: 1, Persistent: true, KeepFuzzing: true}, rec.observe)
	t.Cleanup(e.Close)
	targets, err := e.Targets(t.Context(), dir, ".")
	if err != nil || len(targets) != 1 {
		t.Fatalf("targets: %v, %v", targets, err)
	}
	builds := func() []*BuildEvent {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		var out []*BuildEvent
		for _, ev := range rec.events {
			if b, ok := ev.(*BuildEvent); ok {
				out = append(out, b)
			}
		}
		return out
	}
	awaitBuild := func(n int, ok bool) {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if b := builds(); len(b) > n {
				if (b[n].Err == nil) != ok {
					t.Fatalf("build %d: error %v, want ok=%v", n+1, b[n].Err, ok)
				}
				return
			}
		}
		t.Fatalf("no build %d", n+1)
	}
	s := e.Start(targets[0])
	defer s.Stop()
	awaitBuild(0, true)
	testGo := filepath.Join(dir, "calc_test.go")
	data, err := os.ReadFile(testGo)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(testGo)
	s.Rebuild()
	awaitBuild(1, false)
	if err := os.WriteFile(testGo, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s.Rebuild()
	awaitBuild(2, true)
}

// TestStdPackage: a standard library package's own target, run in GOROOT/src as a
// Go contributor would (html's FuzzEscapeUnescape), is found and fuzzed, its own
// blocks covered, and GOROOT left as it was. Under GOTOOLCHAIN=go1.27.3 the GOROOT
// is in the module cache, whose files the go command refuses to overlay: that
// build takes the other road (instrument/std.go).
func TestStdPackage(t *testing.T) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "src", "html")
	before := treeHash(t, dir)
	s, _ := fuzzOnce(t, dir, "FuzzEscapeUnescape", Options{Parallel: 1, FuzzTime: 3 * time.Second})
	if n := len(s.Crashes()); n != 0 {
		t.Fatalf("%d crashes: %+v", n, s.Crashes()[0])
	}
	blocks, hit := s.Coverage()
	covered := 0
	for i, b := range blocks {
		if hit[i] && b.File == filepath.Join(dir, "escape.go") {
			covered++
		}
	}
	if covered < 10 {
		t.Errorf("%d covered blocks in html/escape.go", covered)
	}
	if treeHash(t, dir) != before {
		t.Errorf("the run changed GOROOT/src/html")
	}
}

// TestCacheClearedWhileFuzzing: the user clears the cache directory while a
// session fuzzes; killed workers are replaced and the next build fuzzes again:
// the directories the engine needs are made anew.
func TestCacheClearedWhileFuzzing(t *testing.T) {
	dir := copyTree(t, "../testdata/crashers")
	cache := t.TempDir()
	s := startPersistent(t, dir, "FuzzNoBug", Options{CacheDir: cache})
	awaitExecs := func(what string, more int64) {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if s.Stats().Execs > more && s.State() == StateFuzzing {
				return
			}
		}
		s.mu.Lock()
		err := s.err
		s.mu.Unlock()
		t.Fatalf("%s: no executions past %d (state %s, error %v)", what, more, s.State(), err)
	}
	awaitExecs("first build", 0)
	ents, _ := os.ReadDir(cache)
	for _, en := range ents {
		os.RemoveAll(filepath.Join(cache, en.Name()))
	}
	for _, pid := range workerPIDs() {
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
	}
	awaitExecs("after the cache was cleared and the workers killed", s.Stats().Execs+1000)
	s.Rebuild()
	time.Sleep(time.Second)
	awaitExecs("after a rebuild on the cleared cache", s.Stats().Execs+1000)
}

// TestOrphanTempDirs: scratch directories of a process that is gone (a daemon
// killed with SIGKILL) are removed by the next engine on the cache; a live
// process's are kept.
func TestOrphanTempDirs(t *testing.T) {
	cache := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(cache, "tmp", fmt.Sprintf("w%d-123", dead.Process.Pid))
	live := filepath.Join(cache, "tmp", fmt.Sprintf("w%d-456", os.Getppid()))
	for _, d := range []string{gone, live} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "mem"), []byte("x"), 0o644)
	}
	New(Options{CacheDir: cache}, nil).Close()
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("a gone process's directory is still there (%v)", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live process's directory was removed: %v", err)
	}
}

// TestDiskFull: a file system of the cache is full from the start (a small
// tmpfs): no process dies of SIGBUS (the test's own, the coordinator, maps every
// worker's shared memory); the engine says once what is full and where, tries
// again less and less often (not every few seconds for good), and fuzzing starts
// when room is made, with no save. A build that needs room to write the test
// binary (its sources fit) says the disk is full: no compile error of the user's.
func TestDiskFull(t *testing.T) {
	for _, tc := range []struct {
		name, dir string // dir: the cache's subdirectory on the full disk, "" all of it
		room      int64  // bytes left free
		said      string
		maxTries  int // of what the full disk stops, in the 20 s after the first: 0 = not counted
	}{
		{"tmp", "tmp", 0, "no room to start a worker: the file system of", 6},   // workers' shared memory
		{"build", "build", 0, "no room to build: the file system of", 5},        // the build's sources
		{"binary", "build", 1 << 20, "no room to build: the file system of", 0}, // the test binary
		{"cache", "", 0, "no room to build: the file system of", 5},             // all of it
		{"corpus", "corpus", 0, "saving corpus entr", 0},                        // new entries, each failing to be saved
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			full, filler := testws.FullDisk(t, tc.room)
			dir := copyTree(t, "../testdata/crashers")
			cache := t.TempDir()
			if tc.dir == "" {
				cache = filepath.Join(full, "cache")
			} else if err := os.Symlink(full, filepath.Join(cache, tc.dir)); err != nil {
				t.Fatal(err)
			}
			// The tries: builds (their events), workers' starts (their
			// scratch directories, made on the full disk, w<pid>-…).
			var mu sync.Mutex
			var builds []error
			starts := 0
			watcher, err := fsnotify.NewWatcher()
			if err != nil {
				t.Fatal(err)
			}
			defer watcher.Close()
			watcher.Add(full)
			go func() {
				for ev := range watcher.Events {
					if ev.Has(fsnotify.Create) && strings.HasPrefix(filepath.Base(ev.Name), "w") {
						mu.Lock()
						starts++
						mu.Unlock()
					}
				}
			}()
			var log testws.Buffer
			s := startPersistentObserved(t, dir, "FuzzNoBug", Options{CacheDir: cache, Log: &log}, func(ev Event) {
				if b, ok := ev.(*BuildEvent); ok {
					mu.Lock()
					builds = append(builds, b.Err)
					mu.Unlock()
				}
			})
			for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(log.String(), tc.said); time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("no word of the full disk; log:\n%s", log.String())
				}
			}
			mu.Lock()
			buildsBefore, startsBefore := len(builds), starts
			mu.Unlock()
			wait := 4 * time.Second // several tries
			if tc.maxTries > 0 {
				wait = 20 * time.Second
			}
			time.Sleep(wait)
			if n := strings.Count(log.String(), tc.said); n != 1 {
				t.Errorf("the full disk was said %d times, want once:\n%s", n, log.String())
			}
			mu.Lock()
			tries := starts - startsBefore + 1
			if tc.dir != "tmp" {
				tries = len(builds) - buildsBefore + 1
			}
			var be *BuildError
			for _, err := range builds {
				if errors.As(err, &be) {
					t.Errorf("the full disk is a build error of the user's code: %v", err)
					break
				}
			}
			mu.Unlock()
			if tc.maxTries > 0 && tries > tc.maxTries {
				t.Errorf("%d tries in the %v after the first on a full disk, want at most %d (backing off)", tries, wait, tc.maxTries)
			}
			os.Remove(filler) // room, and no save: fuzzing starts by itself
			for deadline := time.Now().Add(time.Minute); s.Stats().Execs == 0; time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("no executions after room was made (state %s); log:\n%s", s.State(), log.String())
				}
			}
			if tc.dir == "corpus" { // the entries kept in memory are saved once there is room
				ents := corpusDir(cache, s.Target())
				for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
					files, _ := os.ReadDir(ents)
					if strings.Contains(log.String(), "corpus entries saved again") && len(files) > 0 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("the corpus was not saved after room was made (%d files); log:\n%s", len(files), log.String())
					}
				}
			}
		})
	}
}

// startPersistent starts target of the workspace at dir in a daemon-like
// session (one worker, persistent, keep fuzzing) of an engine with opts, both
// stopped when the test ends.
func startPersistent(t *testing.T, dir, target string, opts Options) *Session {
	t.Helper()
	return startPersistentObserved(t, dir, target, opts, nil)
}

// startPersistentObserved is startPersistent with an engine that reports to observe.
func startPersistentObserved(t *testing.T, dir, target string, opts Options, observe func(Event)) *Session {
	t.Helper()
	opts.Parallel, opts.Persistent, opts.KeepFuzzing = 1, true, true
	e := New(opts, observe)
	t.Cleanup(e.Close)
	targets, err := e.Targets(t.Context(), dir, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		if tg.Name == target {
			s := e.Start(tg)
			t.Cleanup(s.Stop)
			return s
		}
	}
	t.Fatalf("no target %s in %s", target, dir)
	return nil
}

// TestManySeedsEachNew: 1,000 seeds of 512 bytes, each reaching a block of its
// own, on two workers. Each worker reports every seed as new while it runs its
// first corpus, and the coordinator forwards each to the other, which reads no
// request before its first corpus is done: the coordinator must never wait on a
// worker's pipe, or both wait on each other for good (expr's 19,546 seeds did).
func TestManySeedsEachNew(t *testing.T) {
	const n = 1000
	dir := t.TempDir()
	var src strings.Builder
	src.WriteString("package big\n\nfunc Lookup(b []byte) int {\n\tif len(b) < 2 {\n\t\treturn -1\n\t}\n\tswitch int(b[0])<<8 | int(b[1]) {\n")
	for i := range n {
		fmt.Fprintf(&src, "\tcase %d:\n\t\treturn %d\n", i, i)
	}
	src.WriteString("\t}\n\treturn -1\n}\n")
	test := fmt.Sprintf(`package big

import "testing"

func FuzzBig(f *testing.F) {
	for i := range %d {
		b := make([]byte, 512)
		b[0], b[1] = byte(i>>8), byte(i)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { Lookup(b) })
}
`, n)
	for name, data := range map[string]string{"go.mod": "module example.com/big\n\ngo 1.22\n", "big.go": src.String(), "big_test.go": test} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// No cleanup closes this engine: one that waits for good must not hang the
	// test's end too.
	e := New(Options{CacheDir: t.TempDir(), Parallel: 2, FuzzTime: 2 * time.Second, MinimizeTime: time.Second}, func(Event) {})
	targets, err := e.Targets(t.Context(), dir, ".")
	if err != nil || len(targets) != 1 {
		t.Fatalf("targets: %v, %v", targets, err)
	}
	s := e.Start(targets[0])
	done := make(chan error, 1)
	go func() { done <- s.Wait() }()
	select {
	case err := <-done:
		e.Close()
		if err != nil {
			t.Fatalf("session: %v", err)
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("the session did not end 3 minutes after a 2 s fuzzing budget: coordinator and workers wait on each other")
	}
	if st := s.Stats(); st.Corpus < n {
		t.Errorf("corpus of %d entries, want the %d seeds", st.Corpus, n)
	}
}

// TestLeaks: with Options.Leaks, an input that leaves a goroutine blocked on each
// run is a leak at the line that starts it, minimized and not flaky; goroutines
// that end soon after the input, or one started once per process, are no leak.
func TestLeaks(t *testing.T) {
	dir := copyTree(t, "../testdata/crashers")
	s, _ := fuzzOnce(t, dir, "FuzzLeak", Options{Parallel: 1, Leaks: true, MinimizeTime: 5 * time.Second})
	cs := s.Crashes()
	if len(cs) != 1 {
		t.Fatalf("FuzzLeak: %d crashes, want 1", len(cs))
	}
	file := filepath.Join(dir, "crashers.go")
	if c := cs[0]; c.Kind != protocol.KindLeak || c.File != file || c.Line != markerLine(t, file, "MARK:leak") || c.Flaky || !c.Minimized {
		t.Errorf("FuzzLeak: %s at %s:%d (flaky %v, minimized %v), want a minimized leak at MARK:leak\n%s", c.Kind, c.File, c.Line, c.Flaky, c.Minimized, c.Output)
	}
	for _, target := range []string{"FuzzLinger", "FuzzStartOnce"} {
		s, _ := fuzzOnce(t, dir, target, Options{Parallel: 1, Leaks: true, FuzzExecs: 3000})
		if cs := s.Crashes(); len(cs) != 0 {
			t.Errorf("%s: %s reported: %s", target, cs[0].Kind, cs[0].Output)
		}
		if s.Stats().Execs < 3000 {
			t.Errorf("%s: %d executions, want 3000", target, s.Stats().Execs)
		}
	}
}
