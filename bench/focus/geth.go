package main

// The gosentry-geth scenario: trailofbits/gosentry's change-directed benchmark on
// go-ethereum (misc/gosentry/bench_focus_on_new_code_geth.sh), ported. Three
// files join go-ethereum's rlp package: a fuzz target, "old" code that mixes the
// results of rlp.Split and rlp.SplitUint64 at the input's first offsets into a
// 64-bit state, and behind a gate (the input starts with "GETH" and is at least
// 516 bytes long) a call to a function whose one line is "recent". A warm-up
// fuzzes with that line harmless; then the line becomes a division whose
// divisor is zero when 13 bits of data[512:516] mixed with the state hit one
// value, and the time to the first crash is measured in paired trials, with the
// focus and without (Options.NoFocus), from the same warmed corpus less the
// inputs that crash already. gosentry marks the line recent by a git commit
// and starts its fuzzer on the edited build; here the edit is a save and the
// session rebuilds (the clock starts at the save; the rebuild's time is
// printed apart).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"fuzzls.dev/fuzzls/engine"
	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/internal/testws"
)

const (
	gethModule  = "github.com/ethereum/go-ethereum"
	gethVersion = "v1.17.10"
	gethTarget  = "FuzzGosentryFocusNewCode"
	gethPkg     = gethModule + "/rlp"
	recentFile  = "gosentry_focus_new_code_recent_bug.go"
	recentMark  = "// RECENT"
	harmless    = "\tfocusSink ^= focusDenom(data, state) + 1 " + recentMark + "\n"
	crashing    = "\tfocusSink ^= uint32(0x12345678) / focusDenom(data, state) " + recentMark + "\n"
	filterFile  = "zz_fuzzls_bench_filter_test.go"
	filterEnv   = "FUZZLS_BENCH_FILTER_DIR"
	crashPrefix = "crashes: "
)

// gethFiles are the files the scenario adds to rlp (the recent line harmless).
var gethFiles = map[string]string{
	"gosentry_focus_new_code_fuzz_test.go": `package rlp

import "testing"

func FuzzGosentryFocusNewCode(f *testing.F) {
	f.Add([]byte("GETH\x00\x00\x00\x00"))
	enc, _ := EncodeToBytes(uint32(0))
	f.Add(enc)
	f.Fuzz(func(t *testing.T, data []byte) {
		GosentryFocusNewCodeTarget(data)
	})
}
`,
	"gosentry_focus_new_code_target.go": `package rlp

import (
	"encoding/binary"
	"math/bits"
)

var focusSink uint32

// focusState is the "old" code: RLP splits at the first offsets folded into a
// state, many paths and no hard constraint.
func focusState(data []byte) uint64 {
	if len(data) == 0 {
		return 0
	}
	const golden = 0x9e3779b97f4a7c15
	s := uint64(golden)
	for off := 0; off < 4 && off < len(data); off++ {
		kind, content, rest, err := Split(data[off:])
		if err != nil {
			s ^= uint64(off+1) * 0x100000001b3
			continue
		}
		s ^= uint64(kind) << (off * 3)
		s ^= uint64(len(content))<<16 ^ uint64(len(rest))<<1
		rot := 13
		if len(content) > 0 {
			rot = int(content[0]%63 + 1)
		}
		s = bits.RotateLeft64(s, rot) ^ golden
		if kind != List {
			continue
		}
		elems := content
		for i := 0; i < 8 && len(elems) > 0; i++ {
			k, c, r, err := Split(elems)
			if err != nil {
				s ^= uint64(i+1)<<32 ^ 0x27d4eb2f165667c5
				break
			}
			s ^= uint64(k) << (i * 2)
			if len(c) > 0 {
				s ^= uint64(c[0])<<8 ^ uint64(c[len(c)-1])
			}
			elems = r
		}
	}
	for off := 0; off < 4 && off < len(data); off++ {
		if x, _, err := SplitUint64(data[off:]); err == nil {
			s ^= bits.RotateLeft64(x, 13) ^ 0x517cc1b727220a95
		} else {
			s ^= 0x94d049bb133111eb
		}
	}
	return s
}

// focusDenom is 14 bits of data[512:516] mixed with the state; it is zero when
// the low 13 bits of the mix are 0x11b.
func focusDenom(data []byte, state uint64) uint32 {
	if len(data) < 516 {
		return 1
	}
	raw := binary.LittleEndian.Uint32(data[512:516])
	mixed := raw ^ bits.RotateLeft32(uint32(state), 7) ^ bits.RotateLeft32(uint32(state>>32), -3)
	return mixed&0x1fff ^ 0x11b
}

func GosentryFocusNewCodeTarget(data []byte) {
	if len(data) < 4 {
		return
	}
	state := focusState(data)
	if data[0] == 'G' && data[1] == 'E' && data[2] == 'T' && data[3] == 'H' {
		if len(data) >= 516 {
			focusRecentLine(data, state)
		}
	}
}
`,
	recentFile: "package rlp\n\n//go:noinline\nfunc focusRecentLine(data []byte, state uint64) {\n" + harmless + "}\n",
}

// filterTest runs each file of $FUZZLS_BENCH_FILTER_DIR (raw inputs) through the
// target and prints the names of those that panic.
const filterTest = `package rlp

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestFuzzlsBenchFilter(t *testing.T) {
	dir := os.Getenv("` + filterEnv + `")
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if fuzzlsPanics(data) {
			fmt.Println("` + crashPrefix + `" + f.Name())
		}
	}
}

func fuzzlsPanics(data []byte) (panicked bool) {
	defer func() { panicked = recover() != nil }()
	GosentryFocusNewCodeTarget(data)
	return false
}
`

// gethSeeds are the warm-up's seeds: 4 inputs "GETH" and 4 "NOPE", each followed
// by 4092 bytes of a linear congruential generator (the C library's constants,
// the high byte of the low 16 bits of state taken), seeded as gosentry does.
func gethSeeds() map[string][]byte {
	lcg := func(prefix string, seed uint32) []byte {
		out := []byte(prefix)
		for x := seed; len(out) < 4096; {
			x = 1103515245*x + 12345
			out = append(out, byte(x>>16))
		}
		return out
	}
	seeds := map[string][]byte{}
	for i := range uint32(4) {
		seeds[fmt.Sprintf("seed_recent_path_%d", i)] = lcg("GETH", 0x12345678+i)
		seeds[fmt.Sprintf("seed_other_%d", i)] = lcg("NOPE", 0x87654321+i)
	}
	return seeds
}

// gethWorkspace copies go-ethereum (src) to dst, adds the scenario's files and
// the seeds not in drop, and returns the rlp package's directory.
func gethWorkspace(src, dst string, drop map[string]bool) (string, error) {
	if _, err := testws.CopyDir(src, dst); err != nil {
		return "", err
	}
	// the module cache's files are read-only, and the edits write
	if err := filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if d.IsDir() {
			mode = 0o755
		}
		return os.Chmod(p, mode)
	}); err != nil {
		return "", err
	}
	pkg := filepath.Join(dst, "rlp")
	for name, text := range gethFiles {
		if err := os.WriteFile(filepath.Join(pkg, name), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	seedDir := filepath.Join(pkg, "testdata", "fuzz", gethTarget)
	if err := os.MkdirAll(seedDir, 0o755); err != nil {
		return "", err
	}
	for name, data := range gethSeeds() {
		if drop[name] {
			continue
		}
		if err := os.WriteFile(filepath.Join(seedDir, name), fuzzrt.Marshal([]any{data}), 0o644); err != nil {
			return "", err
		}
	}
	return pkg, nil
}

// setRecent writes the recent line of the workspace at pkg: crashing or harmless.
func setRecent(pkg string, crash bool) error {
	line := harmless
	if crash {
		line = crashing
	}
	return os.WriteFile(filepath.Join(pkg, recentFile), []byte(strings.Replace(gethFiles[recentFile], harmless, line, 1)), 0o644)
}

// filterCrashing runs the warmed corpus (cache) and the seeds through the edited
// target with go test in the workspace at pkg, deletes the corpus entries that
// crash and returns the seeds that do, to be left out: gosentry's trials start
// from its warm-up queue less the inputs that crash already.
func filterCrashing(pkg, cache, scratch string) (dropSeeds map[string]bool, kept, removed int, err error) {
	raw := filepath.Join(scratch, "filter")
	if err := os.MkdirAll(raw, 0o755); err != nil {
		return nil, 0, 0, err
	}
	corpus := filepath.Join(cache, "corpus", filepath.FromSlash(gethPkg), gethTarget)
	files, err := os.ReadDir(corpus)
	if err != nil {
		return nil, 0, 0, err
	}
	for _, f := range files {
		text, err := os.ReadFile(filepath.Join(corpus, f.Name()))
		if err != nil {
			return nil, 0, 0, err
		}
		vals, err := fuzzrt.Unmarshal(text)
		if err != nil || len(vals) != 1 {
			return nil, 0, 0, fmt.Errorf("corpus file %s: %v", f.Name(), err)
		}
		data, _ := vals[0].([]byte)
		if err := os.WriteFile(filepath.Join(raw, "corpus-"+f.Name()), data, 0o644); err != nil {
			return nil, 0, 0, err
		}
	}
	for name, data := range gethSeeds() {
		if err := os.WriteFile(filepath.Join(raw, "seed-"+name), data, 0o644); err != nil {
			return nil, 0, 0, err
		}
	}
	if err := setRecent(pkg, true); err != nil {
		return nil, 0, 0, err
	}
	test := filepath.Join(pkg, filterFile)
	if err := os.WriteFile(test, []byte(filterTest), 0o644); err != nil {
		return nil, 0, 0, err
	}
	defer os.Remove(test)
	cmd := exec.Command("go", "test", "-count=1", "-run", "^TestFuzzlsBenchFilter$", ".")
	cmd.Dir = pkg
	cmd.Env = append(os.Environ(), filterEnv+"="+raw)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, 0, 0, fmt.Errorf("filtering the warm-up corpus: %v\n%s", err, out)
	}
	dropSeeds = map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		name, ok := strings.CutPrefix(line, crashPrefix)
		if !ok {
			continue
		}
		if seed, ok := strings.CutPrefix(name, "seed-"); ok {
			dropSeeds[seed] = true
		} else if err := os.Remove(filepath.Join(corpus, strings.TrimPrefix(name, "corpus-"))); err != nil {
			return nil, 0, 0, err
		}
		removed++
	}
	return dropSeeds, len(files) + len(gethSeeds()) - removed, removed, nil
}

// gethTrial is one mode's figures in one trial.
type gethTrial struct {
	crash   time.Duration // from the save to the first crash (the cap: none)
	rebuild time.Duration // from the save to the rebuilt build's end
	message string        // the crash's
	execs   int64         // after the save
	st      engine.Stats  // at the end
}

// gethScenario runs the scenario: warm-up, filter, then trials paired trials
// of both modes at the same time, each capped at limit.
func gethScenario(warmup, limit time.Duration, trials, parallel int, control bool) {
	src, err := testws.Download(context.Background(), gethModule, gethVersion)
	if err != nil {
		fail(err)
	}
	scratch, err := os.MkdirTemp("", "fuzzls-bench-focus-geth-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(scratch)
	warmPkg, err := gethWorkspace(src, filepath.Join(scratch, "warm"), nil)
	if err != nil {
		fail(err)
	}
	warmCache := filepath.Join(scratch, "warm-cache")
	fmt.Fprintf(os.Stderr, "gosentry-geth: warming up %s for %s (the recent line harmless)…\n", gethTarget, warmup)
	e := engine.New(engine.Options{CacheDir: warmCache, Parallel: parallel, Persistent: true, KeepFuzzing: true,
		MinimizeTime: time.Second, NoFocus: true}, nil)
	s, err := startTarget(e, warmPkg, gethTarget)
	if err != nil {
		fail(err)
	}
	time.Sleep(warmup)
	st := s.Stats()
	s.Stop()
	e.Close()
	if st.Crashes > 0 {
		fail(errors.New("the warm-up crashed on the harmless line"))
	}
	fmt.Fprintf(os.Stderr, "gosentry-geth: warm-up: %d execs, corpus %d, %d/%d blocks\n", st.Execs, st.Corpus, st.Covered, st.Blocks)
	drop, kept, removed, err := filterCrashing(warmPkg, warmCache, scratch)
	if err != nil {
		fail(err)
	}
	fmt.Printf("warm-up corpus filter: removed=%d kept=%d (seeds included)\n", removed, kept)
	modes := []string{"focus", "nofocus"}
	pkgs := make([]string, len(modes))
	for m, name := range modes {
		if pkgs[m], err = gethWorkspace(src, filepath.Join(scratch, name), drop); err != nil {
			fail(err)
		}
	}
	res := make([][]gethTrial, len(modes))
	for i := 1; i <= trials; i++ {
		var wg sync.WaitGroup
		errs := make([]error, len(modes))
		got := make([]gethTrial, len(modes))
		for m, name := range modes {
			cache := filepath.Join(scratch, name+"-cache")
			if err := os.RemoveAll(cache); err != nil {
				fail(err)
			}
			if _, err := testws.CopyDir(warmCache, cache); err != nil {
				fail(err)
			}
			if err := setRecent(pkgs[m], false); err != nil {
				fail(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[m], errs[m] = gethRun(pkgs[m], cache, parallel, uint64(i), limit, m == 1 || control)
			}()
		}
		wg.Wait()
		for m := range modes {
			if errs[m] != nil {
				fail(errs[m])
			}
			res[m] = append(res[m], got[m])
		}
		line := fmt.Sprintf("trial %d/%d:", i, trials)
		for m, name := range modes {
			r := got[m]
			line += fmt.Sprintf("  %s %s (rebuild %.1f s, %d execs, changed %d/%d)", name, show(r.crash, limit), r.rebuild.Seconds(), r.execs, r.st.ChangedReached, r.st.Changed)
		}
		fmt.Println(line)
	}
	var meds, built [2]float64
	for m, name := range modes {
		var secs, after []float64
		for _, r := range res[m] {
			secs = append(secs, r.crash.Seconds())
			after = append(after, (r.crash - r.rebuild).Seconds())
		}
		meds[m], built[m] = median(secs), median(after)
		fmt.Printf("%s: median time to the first crash %.1f s from the save, %.1f s from the rebuild's end (capped at %s; %d of %d trials crashed)\n",
			name, meds[m], built[m], limit, crashed(res[m], limit), trials)
	}
	fmt.Printf("ratio focus / nofocus: %.2f from the save, %.2f from the rebuild's end (goal: ≤ 0.50); warm-up %s, %d worker(s) per mode\n",
		meds[0]/meds[1], built[0]/built[1], warmup, parallel)
}

func crashed(rs []gethTrial, limit time.Duration) int {
	n := 0
	for _, r := range rs {
		if r.crash < limit {
			n++
		}
	}
	return n
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	xs = append([]float64(nil), xs...)
	sort.Float64s(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

// gethRun is one mode of one trial: a session on the harmless line (the warmed
// corpus re-run), then the crashing line saved and the session rebuilt; it
// returns when the first failure is reported, or at limit after the save.
func gethRun(pkg, cache string, parallel int, seed uint64, limit time.Duration, noFocus bool) (gethTrial, error) {
	r := gethTrial{crash: limit}
	var mu sync.Mutex
	var saved, built, crashAt time.Time
	var message string
	observe := func(ev engine.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *engine.BuildEvent:
			if !saved.IsZero() && built.IsZero() && ev.Err == nil {
				built = time.Now()
			}
		case *engine.CrashEvent:
			if !saved.IsZero() && crashAt.IsZero() {
				crashAt, message = time.Now(), ev.Crash.Message
			}
		}
	}
	e := engine.New(engine.Options{CacheDir: cache, Parallel: parallel, Persistent: true, KeepFuzzing: true,
		MinimizeTime: time.Second, NoFocus: noFocus, Seed: seed}, observe)
	defer e.Close()
	s, err := startTarget(e, pkg, gethTarget)
	if err != nil {
		return r, err
	}
	defer s.Stop()
	time.Sleep(time.Second) // the previous build's code, for the diff; few new entries, unfiltered
	if s.Stats().Crashes > 0 {
		return r, errors.New("a crash before the save")
	}
	if err := setRecent(pkg, true); err != nil {
		return r, err
	}
	mu.Lock()
	saved = time.Now()
	mu.Unlock()
	execs0 := s.Stats().Execs
	s.Rebuild()
	for time.Since(saved) < limit {
		mu.Lock()
		done := !crashAt.IsZero()
		mu.Unlock()
		if done {
			break
		}
		if s.State() == engine.StateError {
			return r, fmt.Errorf("the edited code does not build: %v", s.Wait())
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if !crashAt.IsZero() {
		r.crash, r.message = crashAt.Sub(saved), message
		if !strings.Contains(message, "divide by zero") {
			return r, fmt.Errorf("the first failure after the save is not the division by zero: %s", message)
		}
	}
	if !built.IsZero() {
		r.rebuild = built.Sub(saved)
	}
	r.st = s.Stats()
	r.execs = r.st.Execs - execs0
	return r, nil
}

// startTarget starts a session on target in pkgDir and waits for its first
// executions.
func startTarget(e *engine.Engine, pkgDir, target string) (*engine.Session, error) {
	targets, err := e.Targets(context.Background(), pkgDir, ".")
	if err != nil {
		return nil, err
	}
	for _, t := range targets {
		if t.Name == target {
			s := e.Start(t)
			if err := await(s, 5*time.Minute, func() bool { return s.Stats().Execs > 0 }); err != nil {
				s.Stop()
				return nil, err
			}
			return s, nil
		}
	}
	return nil, fmt.Errorf("no target %s in %s", target, pkgDir)
}
