package daemon

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/internal/lspclient"
	"fuzzls.dev/fuzzls/internal/proc"
	"fuzzls.dev/fuzzls/internal/testws"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// The LSP side of scale (issue 29): storms of edits, branch switches, many
// modules and many targets, on the real engine over pipes.

// latencies times requests sent while something else goes on.
type latencies struct {
	mu  sync.Mutex
	all []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, d)
}

// get returns the worst time, the 95th percentile and the count.
func (l *latencies) get() (worst, p95 time.Duration, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	all := slices.Clone(l.all)
	slices.Sort(all)
	if len(all) == 0 {
		return 0, 0, 0
	}
	return all[len(all)-1], all[len(all)*95/100], len(all)
}

// probe sends a codeLens request for lensFile and a hover on hoverFile every
// 50 ms until stop is closed, timing each answer.
func probe(t *testing.T, c *lspConn, lensFile, hoverFile string, stop <-chan struct{}) (*latencies, *sync.WaitGroup) {
	l := &latencies{}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			start := time.Now()
			if _, err := c.Server.CodeLens(c.Ctx, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(lensFile)}}); err != nil {
				t.Errorf("codeLens: %v", err)
				return
			}
			if _, err := c.Server.Hover(c.Ctx, &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
				TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(hoverFile)}, Position: protocol.Position{Line: 2},
			}}); err != nil {
				t.Errorf("hover: %v", err)
				return
			}
			l.add(time.Since(start))
		}
	})
	return l, &wg
}

// heapSampler records the largest HeapInuse of this process (the daemon runs
// in it) every 20 ms until stop is closed.
func heapSampler(stop <-chan struct{}) func() uint64 {
	var mu sync.Mutex
	var peak uint64
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			mu.Lock()
			peak = max(peak, ms.HeapInuse)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() uint64 { <-done; mu.Lock(); defer mu.Unlock(); return peak }
}

func heapInuse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// countLogs counts the log lines of c containing s.
func countLogs(c *lspConn, s string) (n int) {
	c.Locked(func() {
		for _, l := range c.logs() {
			if strings.Contains(l, s) {
				n++
			}
		}
	})
	return n
}

// logText is the log the server sent, a line a message.
func (c *lspConn) logText() (s string) {
	c.Locked(func() { s = strings.Join(c.logs(), "\n") })
	return s
}

// awaitFuzzing waits until fuzzls/status has want sessions, all fuzzing.
func awaitFuzzing(t *testing.T, c *lspConn, want int, timeout time.Duration) {
	t.Helper()
	poll(t, fmt.Sprintf("%d sessions fuzzing", want), timeout, func() bool {
		st := c.status()
		n := 0
		for _, s := range st.Sessions {
			if s.State == fproto.StateFuzzing {
				n++
			}
		}
		return n == want
	})
}

const bigLines = 20000

// bigWorkspace is a module whose big.go has a table of 20,000 lines, and its
// target FuzzBig.
func bigWorkspace(t *testing.T) (dir string, lines []string) {
	lines = []string{"package big", "", "var table = [...]int{"}
	for i := range bigLines - 6 {
		lines = append(lines, fmt.Sprintf("\t%d, // entry %d of the table, long enough to be a line", i, i))
	}
	lines = append(lines, "}", "", "func Lookup(i int) int { if i < 0 || i >= len(table) { return -1 }; return table[i] }", "")
	dir = testws.Write(t, map[string]string{
		"go.mod": "module example.com/big\n\ngo 1.22\n",
		"big.go": strings.Join(lines, "\n"),
		"big_test.go": `package big

import "testing"

func FuzzBig(f *testing.F) {
	f.Add(1)
	f.Fuzz(func(t *testing.T, i int) { Lookup(i) })
}
`,
	})
	return dir, lines
}

// 5,000 didChange notifications (whole texts, single and multiple
// incremental changes, inserting, replacing and deleting lines) in a burst
// on a 20,000-line file while its target fuzzes: code lens and hover stay
// prompt during and after, the heap does not balloon, the daemon's text is
// the client's, and the save after it rebuilds once.
func TestDidChangeStorm(t *testing.T) {
	requireEngine(t)
	dir, lines := bigWorkspace(t)
	bigGo, testGo := filepath.Join(dir, "big.go"), filepath.Join(dir, "big_test.go")
	var srv *server
	p := startInProcess(t, Options{BatchDelay: 200 * time.Millisecond, started: func(s *server) { srv = s }})
	p.initialize(dir, map[string]any{"parallel": 1, "cacheDir": t.TempDir()})
	c := p.lspConn
	if _, err := p.Command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(testGo)), Target: "FuzzBig"}); err != nil {
		t.Fatal(err)
	}
	awaitFuzzing(t, c, 1, 2*time.Minute)
	builds := countLogs(c, "built example.com/big in")
	p.open(bigGo)
	base := heapInuse()

	stop := make(chan struct{})
	lat, wg := probe(t, c, testGo, bigGo, stop)
	peak := heapSampler(stop)
	start := time.Now()
	for i := range 5000 {
		k := 3 + (i*7919)%(len(lines)-10) // a line of the table
		var changes []protocol.TextDocumentContentChangeEvent
		switch {
		case i%500 == 0: // the whole text
			lines[k] = fmt.Sprintf("\t%d, // whole %d", i, i)
			changes = append(changes, &protocol.TextDocumentContentChangeWholeDocument{Text: strings.Join(lines, "\n")})
		case i%10 == 3: // insert a line, then replace a word of it
			lines = append(lines[:k], append([]string{fmt.Sprintf("\t%d, // inserted", i)}, lines[k:]...)...)
			changes = append(changes,
				&protocol.TextDocumentContentChangePartial{Range: protocol.Range{Start: protocol.Position{Line: uint32(k)}, End: protocol.Position{Line: uint32(k)}}, Text: "\tX, // inserted\n"},
				&protocol.TextDocumentContentChangePartial{Range: protocol.Range{Start: protocol.Position{Line: uint32(k), Character: 1}, End: protocol.Position{Line: uint32(k), Character: 2}}, Text: fmt.Sprint(i)})
		case i%10 == 7: // delete a line
			lines = append(lines[:k], lines[k+1:]...)
			changes = append(changes, &protocol.TextDocumentContentChangePartial{Range: protocol.Range{Start: protocol.Position{Line: uint32(k)}, End: protocol.Position{Line: uint32(k + 1)}}})
		default: // replace a line's text
			old := lines[k]
			lines[k] = fmt.Sprintf("\t%d, // é edit %d", i, i)
			changes = append(changes, &protocol.TextDocumentContentChangePartial{Range: protocol.Range{Start: protocol.Position{Line: uint32(k)}, End: protocol.Position{Line: uint32(k), Character: utf16Count(old)}}, Text: lines[k]})
		}
		if err := p.Server.DidChange(p.Ctx, &protocol.DidChangeTextDocumentParams{
			TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri.File(bigGo)}, Version: int32(i + 2)},
			ContentChanges: changes,
		}); err != nil {
			t.Fatal(err)
		}
	}
	sent := time.Since(start)
	// A request answered after the storm was applied: everything before it
	// on the wire was read first.
	after := time.Now()
	if _, err := p.Server.CodeLens(p.Ctx, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(testGo)}}); err != nil {
		t.Fatal(err)
	}
	afterLat := time.Since(after)
	close(stop)
	wg.Wait()
	worst, p95, n := lat.get()
	peakHeap := peak()
	t.Logf("5,000 didChange in %v; %d probes during, 95th percentile %v, worst %v; codeLens after %v; heap in use %d MB before, peak %d MB",
		sent.Round(time.Millisecond), n, p95.Round(time.Millisecond), worst.Round(time.Millisecond), afterLat.Round(time.Millisecond), base>>20, peakHeap>>20)
	if worst > time.Second || afterLat > time.Second {
		t.Errorf("codeLens/hover took %v during the storm and %v after it, want under 1s", worst, afterLat)
	}
	if peakHeap > base+200<<20 {
		t.Errorf("heap in use peaked at %d MB during the storm, %d MB before", peakHeap>>20, base>>20)
	}
	want := strings.Join(lines, "\n")
	srv.mu.Lock()
	got := srv.docs[pathKey(bigGo)].text
	version := srv.docs[pathKey(bigGo)].version
	srv.mu.Unlock()
	if got != want || version != 5001 {
		t.Fatalf("after the storm the daemon has version %d, %d bytes, want 5001, %d bytes (equal: %v)", version, len(got), len(want), got == want)
	}
	if n := countLogs(c, "built example.com/big in"); n != builds {
		t.Errorf("%d builds during the storm, want none before the save", n-builds)
	}

	// The save: the watcher's events and didSave are one rebuild.
	p.save(t, bigGo, want)
	poll(t, "the rebuild after the save", 2*time.Minute, func() bool { return countLogs(c, "built example.com/big in") > builds })
	time.Sleep(2 * time.Second) // a second rebuild would come within this
	if n := countLogs(c, "built example.com/big in") - builds; n != 1 {
		t.Errorf("the save made %d builds, want 1", n)
	}
	awaitFuzzing(t, c, 1, time.Minute)
}

// save writes text to path as an editor does (a temporary file renamed into
// place) and sends didSave.
func (c *lspConn) save(t *testing.T, path, text string) {
	t.Helper()
	if err := lspclient.WriteFile(path, text); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
}

// git runs git in dir.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// A `git checkout` of a branch that changes 500 files in 25 packages (the
// first and the last of which the fuzzed package imports) and adds a package, while the target
// fuzzes: the watcher's burst is one rebuild, and fuzzing resumes. Then a
// checkout back with a pause longer than the batcher's longest wait in the
// middle (a smudge filter that sleeps on one file, as a slow disk or a big
// repository would): still one rebuild, once git has let go of its index lock.
func TestGitCheckoutOneRebuild(t *testing.T) {
	requireEngine(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	files := map[string]string{
		".gitattributes": "gen/g12/f000.go filter=slow\n",
		"go.mod":         "module example.com/w\n\ngo 1.22\n",
		"target/target.go": `package target

import (
	"example.com/w/gen/g00"
	"example.com/w/gen/g24"
)

func Check(b []byte) int { return g00.F000(len(b)) + g24.F019(len(b)) }
`,
		"target/target_test.go": `package target

import "testing"

func FuzzCheck(f *testing.F) {
	f.Add([]byte("x"))
	f.Fuzz(func(t *testing.T, b []byte) { Check(b) })
}
`,
	}
	genFile := func(pkg, file int, extra string) string {
		return fmt.Sprintf("package g%02d\n\nfunc F%03d(i int) int { return i + %d }\n%s", pkg, file, file, extra)
	}
	for pkg := range 25 {
		for file := range 20 {
			files[fmt.Sprintf("gen/g%02d/f%03d.go", pkg, file)] = genFile(pkg, file, "")
		}
	}
	dir := testws.Write(t, files)
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "main")
	git(t, dir, "checkout", "-q", "-b", "other")
	for pkg := range 25 {
		for file := range 20 {
			path := filepath.Join(dir, fmt.Sprintf("gen/g%02d/f%03d.go", pkg, file))
			if err := os.WriteFile(path, []byte(genFile(pkg, file, fmt.Sprintf("\nfunc G%03d() int { return %d }\n", file, file))), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "gen", "new", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gen", "new", "sub", "new.go"), []byte("package sub\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "other")
	git(t, dir, "checkout", "-q", "main")

	p := startInProcess(t, Options{})
	p.initialize(dir, map[string]any{"parallel": 1, "cacheDir": t.TempDir()})
	c := p.lspConn
	testGo := filepath.Join(dir, "target", "target_test.go")
	if _, err := p.Command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(testGo)), Target: "FuzzCheck"}); err != nil {
		t.Fatal(err)
	}
	awaitFuzzing(t, c, 1, 2*time.Minute)
	const built = "built example.com/w/target in"
	builds, rebuilds := countLogs(c, built), countLogs(c, "rebuilding FuzzCheck")
	execs := c.status().Sessions[0].Execs

	start := time.Now()
	git(t, dir, "checkout", "-q", "other")
	t.Logf("git checkout took %v", time.Since(start).Round(time.Millisecond))
	poll(t, "the rebuild after the checkout", 2*time.Minute, func() bool { return countLogs(c, built) > builds })
	t.Logf("built again %v after the checkout began", time.Since(start).Round(time.Millisecond))
	time.Sleep(5 * time.Second) // the batcher's longest wait: a second rebuild would have begun
	if n, m := countLogs(c, built)-builds, countLogs(c, "rebuilding FuzzCheck")-rebuilds; n != 1 || m != 1 {
		t.Errorf("the checkout of 500 files made %d rebuilds (%d builds), want 1; the log:\n%s", m, n, c.logText())
	}
	fuzzingAgain := func() {
		poll(t, "fuzzing again", time.Minute, func() bool {
			st := c.status()
			return len(st.Sessions) == 1 && st.Sessions[0].State == fproto.StateFuzzing && st.Sessions[0].Execs > execs
		})
		execs = c.status().Sessions[0].Execs
	}
	fuzzingAgain()

	git(t, dir, "config", "filter.slow.smudge", "sleep 6; cat")
	git(t, dir, "config", "filter.slow.clean", "cat")
	builds, rebuilds = countLogs(c, built), countLogs(c, "rebuilding FuzzCheck")
	start = time.Now()
	git(t, dir, "checkout", "-q", "main")
	took := time.Since(start)
	t.Logf("the slow git checkout took %v", took.Round(time.Millisecond))
	if took < 5*time.Second {
		t.Fatalf("the slow checkout took %v, no longer than the batcher waits at most (4 s)", took)
	}
	poll(t, "the rebuild after the slow checkout", 2*time.Minute, func() bool { return countLogs(c, built) > builds })
	time.Sleep(5 * time.Second)
	if n, m := countLogs(c, built)-builds, countLogs(c, "rebuilding FuzzCheck")-rebuilds; n != 1 || m != 1 {
		t.Errorf("the slow checkout of 500 files made %d rebuilds (%d builds), want 1; the log:\n%s", m, n, c.logText())
	}
	fuzzingAgain()
}

// A workspace of two modules joined by go.work, the second using the first's
// package through the workspace alone (no require): each module's target has
// its lens, and fuzzls.start of all of them builds and fuzzes both.
func TestGoWorkModules(t *testing.T) {
	requireEngine(t)
	dir := testws.Write(t, map[string]string{
		"go.work":  "go 1.22\n\nuse (\n\t./a\n\t./b\n)\n",
		"a/go.mod": "module example.com/a\n\ngo 1.22\n",
		"a/lib/lib.go": `package lib

func Double(i int) int { return 2 * i }
`,
		"a/lib/lib_test.go": `package lib

import "testing"

func FuzzDouble(f *testing.F) {
	f.Add(1)
	f.Fuzz(func(t *testing.T, i int) { Double(i) })
}
`,
		"b/go.mod": "module example.com/b\n\ngo 1.22\n",
		"b/use/use.go": `package use

import "example.com/a/lib"

func Quad(i int) int { return lib.Double(lib.Double(i)) }
`,
		"b/use/use_test.go": `package use

import "testing"

func FuzzQuad(f *testing.F) {
	f.Add(1)
	f.Fuzz(func(t *testing.T, i int) { Quad(i) })
}
`,
	})
	p := startInProcess(t, Options{})
	p.initialize(dir, map[string]any{"parallel": 2, "cacheDir": t.TempDir()})
	c := p.lspConn
	for _, f := range []string{"a/lib/lib_test.go", "b/use/use_test.go"} {
		path := filepath.Join(dir, f)
		p.open(path)
		lenses, err := p.Server.CodeLens(p.Ctx, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(path)}})
		if err != nil || len(lenses) != 1 || lenses[0].Command.Command != fproto.CommandStart {
			t.Fatalf("lenses of %s: %v, %+v; want one ▶ Fuzz", f, err, lenses)
		}
		// The lens's own command, as the editor runs it.
		if _, err := p.Command(lenses[0].Command.Command, json.RawMessage(lenses[0].Command.Arguments[0])); err != nil {
			t.Fatalf("%s: %v", lenses[0].Command.Title, err)
		}
	}
	awaitFuzzing(t, c, 2, 3*time.Minute)
	st := c.status()
	if st.Sessions[0].Package != "example.com/a/lib" || st.Sessions[1].Package != "example.com/b/use" {
		t.Errorf("sessions %+v", st.Sessions)
	}
	// Stopped, then all started from the workspace's root, which is no module.
	p.Command(fproto.CommandStop, nil)
	if _, err := p.Command(fproto.CommandStart, nil); err != nil {
		t.Fatalf("start all: %v", err)
	}
	awaitFuzzing(t, c, 2, 3*time.Minute)
}

// A module that vendors its dependency (the dependency's own module removed
// after `go mod vendor`, so only vendor/ has it): the watcher watches nothing
// in vendor/, .git, node_modules nor testdata but testdata/fuzz; a target
// under vendor/ gets no lens; the module's target builds with -mod=vendor
// (go's default with vendor/modules.txt) and fuzzes.
func TestVendorDirectory(t *testing.T) {
	requireEngine(t)
	root := testws.Write(t, map[string]string{
		"dep/go.mod": "module example.com/dep\n\ngo 1.22\n",
		"dep/dep.go": `package dep

func Parse(b []byte) int {
	if len(b) > 2 && b[0] == 'v' {
		return int(b[1])
	}
	return 0
}
`,
		"m/go.mod": "module example.com/m\n\ngo 1.22\n\nrequire example.com/dep v0.0.0\n\nreplace example.com/dep => ../dep\n",
		"m/m.go": `package m

import "example.com/dep"

func Version(b []byte) int { return dep.Parse(b) }
`,
		"m/m_test.go": `package m

import "testing"

func FuzzVersion(f *testing.F) {
	f.Add([]byte("v1"))
	f.Fuzz(func(t *testing.T, b []byte) { Version(b) })
}
`,
		"m/testdata/fuzz/FuzzVersion/seed": "go test fuzz v1\n[]byte(\"v2\")\n",
		"m/testdata/big/a/b/c.txt":         "not watched\n",
		"m/node_modules/x/y/z.js":          "",
		"m/.git/objects/ab/cd":             "",
	})
	dir := filepath.Join(root, "m")
	cmd := exec.Command("go", "mod", "vendor")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go mod vendor: %v\n%s", err, out)
	}
	if err := os.RemoveAll(filepath.Join(root, "dep")); err != nil {
		t.Fatal(err)
	}
	vendored := filepath.Join(dir, "vendor", "example.com", "dep", "dep_test.go")
	if err := os.WriteFile(vendored, []byte("package dep\n\nimport \"testing\"\n\nfunc FuzzParse(f *testing.F) { f.Fuzz(func(t *testing.T, b []byte) { Parse(b) }) }\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	var srv *server
	p := startInProcess(t, Options{started: func(s *server) { srv = s }})
	p.initialize(dir, map[string]any{"parallel": 1, "cacheDir": t.TempDir()})
	c := p.lspConn
	p.open(vendored)
	if lenses, err := p.Server.CodeLens(p.Ctx, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(vendored)}}); err != nil || len(lenses) != 0 {
		t.Errorf("lenses of a vendored test file: %v, %+v; want none", err, lenses)
	}
	testGo := filepath.Join(dir, "m_test.go")
	if _, err := p.Command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(testGo)), Target: "FuzzVersion"}); err != nil {
		t.Fatal(err)
	}
	awaitFuzzing(t, c, 1, 2*time.Minute)

	var watched []string
	poll(t, "the watcher", 10*time.Second, func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		if srv.watcher != nil {
			watched = srv.watcher.fsw.WatchList()
		}
		return len(watched) > 0
	})
	slices.Sort(watched)
	var rel []string
	for _, w := range watched {
		r, _ := filepath.Rel(dir, w)
		rel = append(rel, filepath.ToSlash(r))
	}
	want := []string{".", "testdata", "testdata/fuzz", "testdata/fuzz/FuzzVersion"}
	if !slices.Equal(rel, want) {
		t.Errorf("watched %v, want %v", rel, want)
	}
}

// manyTargets is a module of pkgs packages with per targets each.
func manyTargets(t *testing.T, pkgs, per int) string {
	files := map[string]string{"go.mod": "module example.com/many\n\ngo 1.22\n"}
	for p := range pkgs {
		files[fmt.Sprintf("p%d/lib.go", p)] = fmt.Sprintf("package p%d\n\nfunc Sum(b []byte) (n int) {\n\tfor _, c := range b {\n\t\tif c > 'a' {\n\t\t\tn += int(c)\n\t\t}\n\t}\n\treturn n\n}\n", p)
		var test strings.Builder
		fmt.Fprintf(&test, "package p%d\n\nimport \"testing\"\n", p)
		for i := range per {
			fmt.Fprintf(&test, "\nfunc FuzzT%02d(f *testing.F) {\n\tf.Add([]byte(\"%d\"))\n\tf.Fuzz(func(t *testing.T, b []byte) { Sum(b) })\n}\n", i, i)
		}
		files[fmt.Sprintf("p%d/lib_test.go", p)] = test.String()
	}
	return testws.Write(t, files)
}

// "Fuzz all" on 40 targets in 4 packages with 2 workers: fuzzls/status lists
// the 40 with their states, no more than 2 worker processes run at once,
// and code lens and hover are answered within a second all along.
func TestFuzzAllShares(t *testing.T) {
	requireEngine(t)
	const pkgs, per, parallel = 4, 10, 2
	dir := manyTargets(t, pkgs, per)
	cache := t.TempDir()
	p := startInProcess(t, Options{})
	p.initialize(dir, map[string]any{"parallel": parallel, "cacheDir": cache})
	c := p.lspConn
	testGo, libGo := filepath.Join(dir, "p0", "lib_test.go"), filepath.Join(dir, "p0", "lib.go")
	stop := make(chan struct{})
	lat, wg := probe(t, c, testGo, libGo, stop)
	defer func() { close(stop); wg.Wait() }()

	// The processes of the targets' binaries: fuzzing workers, and the
	// seeds runs that follow each build.
	processes := func() (workers, all int) {
		for _, pid := range proc.Descendants(os.Getpid()) {
			if pathWithin(cache, proc.Exe(pid)) {
				all++
				if cl, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.Contains(string(cl), "-test.fuzzworker") {
					workers++
				}
			}
		}
		return workers, all
	}
	mostWorkers, mostAll := 0, 0
	sample := func() {
		w, a := processes()
		mostWorkers, mostAll = max(mostWorkers, w), max(mostAll, a)
	}
	start := time.Now()
	if _, err := p.Command(fproto.CommandStart, nil); err != nil {
		t.Fatal(err)
	}
	var st fproto.StatusParams
	poll(t, "40 sessions fuzzing", 3*time.Minute, func() bool {
		sample()
		st = c.status()
		n := 0
		for _, s := range st.Sessions {
			if s.State == fproto.StateFuzzing {
				n++
			}
		}
		return n == pkgs*per
	})
	t.Logf("all %d fuzzing %v after the start", pkgs*per, time.Since(start).Round(time.Millisecond))
	statuses := c.statusCount()
	for range 50 { // 5 s, past a turn of the scheduler
		sample()
		time.Sleep(100 * time.Millisecond)
	}
	rate := float64(c.statusCount()-statuses) / 5
	st = c.status()
	ran := 0
	for _, s := range st.Sessions {
		if s.Execs > 0 {
			ran++
		}
	}
	worst, p95, n := lat.get()
	t.Logf("at most %d workers, %d processes in all; %d of %d targets have run; fuzzls/status %.1f a second; %d probes, 95th percentile %v, worst %v (load average %s)",
		mostWorkers, mostAll, ran, len(st.Sessions), rate, n, p95.Round(time.Millisecond), worst.Round(time.Millisecond), loadAverage())
	if len(st.Sessions) != pkgs*per {
		t.Errorf("fuzzls/status lists %d sessions, want %d", len(st.Sessions), pkgs*per)
	}
	if mostWorkers > parallel || mostAll > 2*parallel {
		t.Errorf("%d workers at once (%d processes in all), want at most %d (%d)", mostWorkers, mostAll, parallel, 2*parallel)
	}
	if rate > 3 {
		t.Errorf("%.1f fuzzls/status a second while 40 targets fuzz, want at most 3", rate)
	}
	// The worst time is the machine's (a load of 17 on 2 cores stalls any
	// process for seconds); nearly all answers come within a second.
	if p95 > time.Second {
		t.Errorf("codeLens/hover took %v (95th percentile; worst %v) while all fuzzed, want under 1s", p95, worst)
	}
}

// loadAverage is /proc/loadavg's first figure, for the log.
func loadAverage() string {
	data, _ := os.ReadFile("/proc/loadavg")
	return strings.SplitN(string(data), " ", 2)[0]
}

// A target whose corpus in the cache holds 10,000 entries (of 100 to 900
// bytes) costs the daemon less than 50 MB of heap, at its peak while the
// corpus is read and handed to the workers, and once it fuzzes.
func TestCorpusMemory(t *testing.T) {
	requireEngine(t)
	dir := testws.Write(t, map[string]string{
		"go.mod": "module example.com/c\n\ngo 1.22\n",
		"c.go":   "package c\n\nfunc Count(b []byte) (n int) {\n\tfor _, c := range b {\n\t\tif c == 'x' {\n\t\t\tn++\n\t\t}\n\t}\n\treturn n\n}\n",
		"c_test.go": `package c

import "testing"

func FuzzCount(f *testing.F) {
	f.Add([]byte("x"))
	f.Fuzz(func(t *testing.T, b []byte) { Count(b) })
}
`,
	})
	cache := t.TempDir()
	const entries = 10000
	corpus := filepath.Join(cache, "corpus", "example.com", "c", "FuzzCount")
	rng := rand.New(rand.NewPCG(1, 2))
	raw := 0
	for i := range entries {
		b := make([]byte, 100+rng.IntN(800))
		for j := range b {
			b[j] = byte(rng.IntN(256))
		}
		data := fuzzrt.Marshal([]any{b})
		raw += len(data)
		if err := os.MkdirAll(corpus, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(corpus, fmt.Sprintf("%016x", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := startInProcess(t, Options{})
	p.initialize(dir, map[string]any{"parallel": 1, "cacheDir": cache})
	c := p.lspConn
	base := heapInuse()
	stop := make(chan struct{})
	peak := heapSampler(stop)
	if _, err := p.Command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(filepath.Join(dir, "c_test.go"))), Target: "FuzzCount"}); err != nil {
		t.Fatal(err)
	}
	awaitFuzzing(t, c, 1, 2*time.Minute)
	time.Sleep(5 * time.Second) // the corpus handed over, fuzzing on
	close(stop)
	peakHeap, fuzzing := peak(), heapInuse()
	st := c.status().Sessions[0]
	t.Logf("%d corpus files (%.1f MB); corpus %d, %d execs; heap in use %.1f MB before the start, peak %.1f MB, %.1f MB fuzzing",
		entries, float64(raw)/(1<<20), st.Corpus, st.Execs, float64(base)/(1<<20), float64(peakHeap)/(1<<20), float64(fuzzing)/(1<<20))
	if st.Corpus < entries/2 {
		t.Errorf("the session's corpus has %d entries, want the %d of the cache", st.Corpus, entries)
	}
	if peakHeap > base+50<<20 || fuzzing > base+50<<20 {
		t.Errorf("the corpus of %d entries cost %.1f MB at the peak, %.1f MB fuzzing; want under 50 MB",
			entries, float64(peakHeap-base)/(1<<20), float64(fuzzing-base)/(1<<20))
	}
}
