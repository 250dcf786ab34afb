// Command blockermem measures the daemon's resident memory while it fuzzes one
// target with blockers shown and without, against issue 29's bound for one
// target fuzzing (150 MB):
//
//	go run ./bench/blockermem [-dir testdata/calc] [-file calc_test.go] [-target FuzzEval] [-hold 60s] [-parallel 1]
//
// A real `fuzzls serve` runs over pipes on a copy of the workspace, once with
// the setting blockers on, once off. With it on the client asks what the
// editor asks: fuzzls.blockers every 3 s (the Fuzzing view) and a hover and
// the code actions on every line of the target's package files every 3 s. The
// daemon's VmRSS (its workers are other processes) is read every second; the
// peak and the last reading are printed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"fuzzls.dev/fuzzls/internal/lspclient"
	"fuzzls.dev/fuzzls/internal/proc"
	fproto "fuzzls.dev/fuzzls/protocol"
)

var (
	dir      = flag.String("dir", "testdata/calc", "the workspace, relative to the module root")
	file     = flag.String("file", "calc_test.go", "the file that declares the target")
	target   = flag.String("target", "FuzzEval", "the fuzz target")
	hold     = flag.Duration("hold", 60*time.Second, "how long the target fuzzes")
	parallel = flag.Int("parallel", 1, "worker processes")
)

const goalRSS = 150 << 20

func main() {
	flag.Parse()
	root, err := lspclient.ModuleRoot()
	check(err)
	tmp, err := os.MkdirTemp("", "fuzzls-blockermem-")
	check(err)
	defer os.RemoveAll(tmp)
	bin, err := lspclient.Build(root, tmp)
	check(err)
	fmt.Printf("%-14s %10s %10s %12s %9s\n", "blockers", "peak RSS", "last RSS", "execs", "blockers")
	for _, on := range []bool{true, false} {
		peak, last, execs, n := run(bin, filepath.Join(root, *dir), filepath.Join(tmp, fmt.Sprint(on)), on)
		fmt.Printf("%-14v %7.0f MB %7.0f MB %12d %9d\n", on, mb(peak), mb(last), execs, n)
		if peak > goalRSS {
			fmt.Printf("FAIL: peak above %.0f MB\n", mb(goalRSS))
		}
	}
}

// run fuzzes the target for hold with a fresh cache and returns the daemon's
// peak and last RSS, the executions, and the blockers last listed.
func run(bin, src, tmp string, blockers bool) (peak, last, execs int64, n int) {
	ws := filepath.Join(tmp, "ws")
	check(os.CopyFS(ws, os.DirFS(src)))
	cmd := exec.Command(bin, "serve")
	cmd.Dir = ws
	c, err := lspclient.Start(cmd)
	check(err)
	defer c.Close()
	check(c.Initialize(ws, map[string]any{"cacheDir": filepath.Join(tmp, "cache"), "parallel": *parallel, "blockers": blockers}))
	testFile := filepath.Join(ws, *file)
	_, err = c.Command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(testFile)), Target: *target})
	check(err)
	check(c.Await("fuzzing", 5*time.Minute, func() bool { return c.LastState() == fproto.StateFuzzing }))
	var pkg string
	st, err := c.SessionStatus()
	check(err)
	for _, s := range st.Sessions {
		pkg = s.Package
	}
	files, _ := filepath.Glob(filepath.Join(ws, "*.go"))
	start := time.Now()
	for tick := 0; time.Since(start) < *hold; tick++ {
		time.Sleep(time.Second)
		last, err = proc.RSS(cmd.Process.Pid)
		check(err)
		peak = max(peak, last)
		if !blockers || tick%3 != 0 {
			continue
		}
		raw, err := c.Command(fproto.CommandBlockers, fproto.TargetID{Package: pkg, Name: *target})
		check(err)
		n = strings.Count(string(raw), `"uri"`)
		for _, f := range files {
			u := uri.File(f)
			lines := strings.Count(mustRead(f), "\n")
			for l := 0; l < lines; l++ {
				pos := protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: u}, Position: protocol.Position{Line: uint32(l)}}
				_, err := c.Server.Hover(context.Background(), &protocol.HoverParams{TextDocumentPositionParams: pos})
				check(err)
			}
			_, err := c.Server.CodeAction(context.Background(), &protocol.CodeActionParams{TextDocument: protocol.TextDocumentIdentifier{URI: u},
				Range: protocol.Range{End: protocol.Position{Line: uint32(lines)}}})
			check(err)
		}
	}
	st, err = c.SessionStatus()
	check(err)
	for _, s := range st.Sessions {
		execs = s.Execs
	}
	return peak, last, execs, n
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

func mustRead(path string) string {
	b, err := os.ReadFile(path)
	check(err)
	return string(b)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "blockermem:", err)
		os.Exit(2)
	}
}
