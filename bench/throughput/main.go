// Command throughput measures executions per second of fuzzls's engine and of
// `go test -fuzz` on the same trivial target, side by side, per worker.
//
//	go run ./bench/throughput [-time 10s] [-parallel 1]
//
// Both engines fuzz a copy of the target in a temporary module; the native engine
// runs once first to warm its instrumented build (that first build takes a minute or
// more and is not counted). The rate is measured between the first and the last
// status report of each run, so build and start-up time are excluded for both.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"

	"fuzzls.dev/fuzzls/engine"
)

const target = `package trivial

import "testing"

func FuzzTrivial(f *testing.F) {
	f.Add([]byte("seed"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<20 { // one comparison: the hooks' cost shows, not a parser's
			t.Fatal("too long")
		}
	})
}
`

func main() {
	d := flag.Duration("time", 10*time.Second, "fuzzing time per engine")
	parallel := flag.Int("parallel", 1, "workers per engine")
	flag.Parse()
	dir, err := os.MkdirTemp("", "fuzzls-bench-")
	check(err)
	defer os.RemoveAll(dir)
	check(os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/trivial\n\ngo 1.26\n"), 0o644))
	check(os.WriteFile(filepath.Join(dir, "trivial_test.go"), []byte(target), 0o644))

	ours := fuzzlsRate(dir, *d, *parallel, engine.Options{})
	noCmp := fuzzlsRate(dir, *d, *parallel, engine.Options{NoCmp: true})
	leaks := fuzzlsRate(dir, *d, *parallel, engine.Options{Leaks: true})
	fmt.Fprintln(os.Stderr, "warming go test -fuzz's instrumented build…")
	nativeRate(dir, 2*time.Second, *parallel)
	native := nativeRate(dir, *d, *parallel)

	fmt.Printf("\n%-22s %14s %14s\n", "engine", "execs/s", "per worker")
	fmt.Printf("%-22s %14.0f %14.0f\n", "fuzzls", ours, ours/float64(*parallel))
	fmt.Printf("%-22s %14.0f %14.0f\n", "fuzzls without cmp", noCmp, noCmp/float64(*parallel))
	fmt.Printf("%-22s %14.0f %14.0f\n", "fuzzls -leaks", leaks, leaks/float64(*parallel))
	fmt.Printf("%-22s %14.0f %14.0f\n", "go test -fuzz", native, native/float64(*parallel))
	if native > 0 {
		fmt.Printf("ratio fuzzls / go test -fuzz: %.2fx (goal: ≥ 2x per worker)\n", ours/native)
	}
	if noCmp > 0 {
		fmt.Printf("execs/s with comparison feedback / without: %.2f (noise on a shared machine is ±20%%)\n", ours/noCmp)
	}
	if ours > 0 {
		fmt.Printf("execs/s with leak checks / without: %.2f\n", leaks/ours)
	}
}

// fuzzlsRate measures fuzzls's execs/s with opts (its feature switches) on the target in dir.
func fuzzlsRate(dir string, d time.Duration, parallel int, opts engine.Options) float64 {
	var mu sync.Mutex
	var first, last *engine.Stats
	cache, err := os.MkdirTemp("", "fuzzls-bench-cache-")
	check(err)
	defer os.RemoveAll(cache)
	opts.CacheDir, opts.Parallel, opts.FuzzTime = cache, parallel, d+2*time.Second
	e := engine.New(opts, func(ev engine.Event) {
		if st, ok := ev.(*engine.StatsEvent); ok && st.Stats.Execs > 0 {
			mu.Lock()
			s := st.Stats
			if first == nil {
				first = &s
			}
			last = &s
			mu.Unlock()
		}
	})
	defer e.Close()
	targets, err := e.Targets(context.Background(), dir, ".")
	check(err)
	check(e.Start(targets[0]).Wait())
	mu.Lock()
	defer mu.Unlock()
	if first == nil || last == first {
		return 0
	}
	return float64(last.Execs-first.Execs) / (last.Elapsed - first.Elapsed).Seconds()
}

var nativeLine = regexp.MustCompile(`elapsed: (\d+)s, execs: (\d+) `)

func nativeRate(dir string, d time.Duration, parallel int) float64 {
	cmd := exec.Command("go", "test", "-run=^$", "-fuzz=^FuzzTrivial$", "-fuzztime="+d.String(), "-parallel="+strconv.Itoa(parallel))
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	check(err)
	cmd.Stderr = os.Stderr
	check(cmd.Start())
	var pts [][2]float64
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if m := nativeLine.FindStringSubmatch(sc.Text()); m != nil {
			s, _ := strconv.ParseFloat(m[1], 64)
			n, _ := strconv.ParseFloat(m[2], 64)
			if n > 0 {
				pts = append(pts, [2]float64{s, n})
			}
		}
	}
	cmd.Wait()
	if len(pts) < 2 || pts[len(pts)-1][0] == pts[0][0] {
		return 0
	}
	a, b := pts[0], pts[len(pts)-1]
	return (b[1] - a[1]) / (b[0] - a[0])
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
