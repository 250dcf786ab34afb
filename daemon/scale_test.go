package daemon

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"fuzzls.dev/fuzzls/internal/lspclient"
	"fuzzls.dev/fuzzls/internal/testws"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// The LSP side of scale (issue 29): storms of edits, branch switches, many
// modules and many targets, on the real engine over pipes.

// latencies times requests sent while something else goes on.
type latencies struct {
	mu    sync.Mutex
	worst time.Duration
	n     int
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.worst = max(l.worst, d)
	l.n++
}

func (l *latencies) get() (time.Duration, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.worst, l.n
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
	worst, n := lat.get()
	peakHeap := peak()
	t.Logf("5,000 didChange in %v; %d probes during, worst %v; codeLens after %v; heap in use %d MB before, peak %d MB",
		sent.Round(time.Millisecond), n, worst.Round(time.Millisecond), afterLat.Round(time.Millisecond), base>>20, peakHeap>>20)
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
