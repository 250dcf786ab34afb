//go:build linux

// Command faults runs fuzzls under the faults a user or a machine brings (issue
// 22), and checks that nothing takes it down:
//
//	go run ./bench/faults [-run REGEXP] [-keep] [-v]
//
// It builds the fuzzls binary, and runs `fuzzls serve` (an LSP client over its
// pipes, internal/lspclient) and `fuzzls fuzz` on scratch copies of
// testdata/calc and testdata/crashers, one case at a time: crash kinds that kill
// a worker, broken saves, malformed corpus files, killed workers and daemons,
// the cache deleted, files deleted and restored, a burst of saves, malformed
// LSP messages, a client that vanishes, a full disk (a small tmpfs it mounts;
// it must run as root, or those cases are skipped), paths outside the
// workspace, two daemons on one cache.
//
// Besides its own expectation, every case checks:
//   - processes: every process started under the suite (daemons, the CLI,
//     workers, go, compile, build guards) is gone within a few seconds of the
//     case's end. The suite is the subreaper of all it starts, so a process
//     orphaned by a daemon killed with SIGKILL is still seen;
//   - the corpus: the seed files in the workspace and the generated corpus in
//     the cache hold at least as many files at the end as at the start;
//   - the user's tree: its hash at the end is its hash at the start (the cases
//     that edit or delete a file put it back).
//
// One line per case, then "N passed, M failed" alone on a line; the exit status
// is 1 if a case failed. Not run by the test script: it takes minutes.
package main

import (
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"fuzzls.dev/fuzzls/internal/lspclient"
	"fuzzls.dev/fuzzls/internal/proc"
	"fuzzls.dev/fuzzls/internal/testws"
)

var (
	runRE   = flag.String("run", "", "run only the cases whose names match this regular expression")
	keep    = flag.Bool("keep", false, "keep the temporary directory (workspaces, caches, daemon logs)")
	verbose = flag.Bool("v", false, "say what each case does")
	binFlag = flag.String("bin", "", "run this fuzzls binary instead of building the module's (an older build, to see the suite fail)")
)

// How long a process may outlive what ended it: a daemon or a CLI that exits
// stops its workers and builds first (grace); one killed with SIGKILL cannot,
// and its workers (a parent-death signal) and builds (the build guard, which
// sees its stdin pipe end) go at once (killGrace), where a build left to
// itself would go on for seconds.
const (
	grace     = 5 * time.Second
	killGrace = 1500 * time.Millisecond
)

func main() {
	flag.Parse()
	var re *regexp.Regexp
	if *runRE != "" {
		re = regexp.MustCompile(*runRE)
	}
	if err := proc.BecomeSubreaper(); err != nil {
		fatalf("cannot become the subreaper of the processes it starts: %v", err)
	}
	root, err := lspclient.ModuleRoot()
	check(err)
	tmp, err := os.MkdirTemp("", "fuzzls-faults-")
	check(err)
	tmp, err = filepath.EvalSymlinks(tmp)
	check(err)
	bin := *binFlag
	if bin == "" {
		fmt.Fprintln(os.Stderr, "faults: building fuzzls; temporary directory", tmp)
		bin, err = lspclient.Build(root, tmp)
		check(err)
	}
	s := &suite{bin: bin, root: root, tmp: tmp}

	passed, failed, skipped := 0, 0, 0
	start := time.Now()
	for _, tc := range cases {
		if re != nil && !re.MatchString(tc.name) {
			continue
		}
		res := s.run(tc)
		switch {
		case res.skip != "":
			skipped++
			fmt.Printf("skip  %-44s %5.1fs  %s\n", tc.name, res.took.Seconds(), res.skip)
		case len(res.errs) == 0:
			passed++
			fmt.Printf("ok    %-44s %5.1fs  %s\n", tc.name, res.took.Seconds(), strings.Join(res.notes, "; "))
		default:
			failed++
			fmt.Printf("FAIL  %-44s %5.1fs  %s\n", tc.name, res.took.Seconds(), strings.Join(res.errs, "; "))
			for _, n := range res.notes {
				fmt.Printf("        %s\n", n)
			}
			fmt.Printf("        logs: %s\n", res.dir)
		}
	}
	fmt.Fprintf(os.Stderr, "faults: %v in all\n", time.Since(start).Round(time.Second))
	if skipped > 0 {
		fmt.Printf("%d skipped\n", skipped)
	}
	fmt.Printf("%d passed, %d failed\n", passed, failed)
	if failed > 0 || *keep {
		fmt.Fprintln(os.Stderr, "faults: kept", tmp)
	} else {
		os.RemoveAll(tmp)
	}
	if failed > 0 {
		os.Exit(1)
	}
}

type suite struct {
	bin, root, tmp string
	n              int
}

// tcase is one fault: a copy of the workspace ws (a directory of testdata),
// setup's changes to it, then body.
type tcase struct {
	name  string
	ws    string
	setup func(c *run) error // before the snapshot of the tree and corpus; may be nil
	body  func(c *run) error
}

type result struct {
	errs, notes []string
	skip        string
	took        time.Duration
	dir         string
}

// run is one case running: its workspace copy and cache, what it started, and
// the snapshot taken before its body.
type run struct {
	s                *suite
	dir, ws, cache   string
	test             string // the workspace's test file (calc_test.go, crashers_test.go)
	daemons          []*daemon
	clis             []*cli
	mounts           []string
	seeds, corpus    int               // corpus files in the workspace and in the cache at the start
	corpusFloor      int               // the cache's corpus must hold this many at the end
	tree             map[string]string // the workspace's files at the start (treeFiles)
	notes            []string
	skip             string
	nDaemon, nFuzzes int
}

func (s *suite) run(tc tcase) (res result) {
	s.n++
	c := &run{s: s, dir: filepath.Join(s.tmp, fmt.Sprintf("%02d-%s", s.n, slug(tc.name)))}
	res.dir = c.dir
	start := time.Now()
	defer func() { res.took = time.Since(start) }()
	fail := func(format string, args ...any) { res.errs = append(res.errs, fmt.Sprintf(format, args...)) }

	var err error
	if c.ws, err = testws.CopyDir(filepath.Join(s.root, "testdata", tc.ws), filepath.Join(c.dir, "ws")); err != nil {
		fail("copying the workspace: %v", err)
		return res
	}
	c.test = filepath.Join(c.ws, tc.ws+"_test.go")
	c.cache = filepath.Join(c.dir, "cache")
	check(os.MkdirAll(c.cache, 0o755))
	if tc.setup != nil {
		if err := tc.setup(c); err != nil {
			fail("setup: %v", err)
			return res
		}
	}
	c.seeds = countFiles(filepath.Join(c.ws, "testdata", "fuzz"))
	c.corpus = countFiles(filepath.Join(c.cache, "corpus"))
	c.corpusFloor = c.corpus
	c.tree = treeFiles(c.ws)
	if *verbose {
		fmt.Fprintf(os.Stderr, "faults: %s\n", tc.name)
	}

	err = tc.body(c)
	if err != nil && !errors.Is(err, errSkip) {
		fail("%v", err)
	}
	res.skip = c.skip
	for _, d := range c.daemons {
		d.close()
	}
	for _, p := range c.clis {
		p.stop()
	}
	if err := c.allGone("the case's end", grace); err != nil {
		fail("%v", err)
	}
	for _, m := range c.mounts {
		if out, err := exec.Command("umount", "-l", m).CombinedOutput(); err != nil {
			fail("umount %s: %v %s", m, err, out)
		}
	}
	if n := countFiles(filepath.Join(c.ws, "testdata", "fuzz")); n < c.seeds {
		fail("seed corpus lost files: %d at the start, %d at the end", c.seeds, n)
	}
	if n := countFiles(filepath.Join(c.cache, "corpus")); n < c.corpusFloor {
		fail("generated corpus lost files: %d at the start, %d at the end", c.corpusFloor, n)
	}
	if d := diffTree(c.tree, treeFiles(c.ws)); d != "" {
		fail("the workspace changed: %s", d)
	}
	res.notes = c.notes
	if len(res.errs) > 0 {
		res.skip = "" // a skipped case's checks failed all the same
	}
	return res
}

func (c *run) note(format string, args ...any) {
	c.notes = append(c.notes, fmt.Sprintf(format, args...))
}

// allGone waits up to grace for every process started under the suite to end,
// and kills and names those that outlive it.
func (c *run) allGone(when string, grace time.Duration) error {
	deadline := time.Now().Add(grace)
	for {
		c.reap()
		left := proc.Descendants(os.Getpid())
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			var names []string
			for _, pid := range left {
				names = append(names, fmt.Sprintf("%d %s (%s)", pid, proc.Name(pid), proc.Exe(pid)))
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return fmt.Errorf("%d processes outlived %s by %v: %s", len(left), when, grace, strings.Join(names, ", "))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// reap waits for the orphans adopted by the suite that have ended (its own
// commands are waited for by their owners).
func (c *run) reap() {
	own := map[int]bool{}
	for _, d := range c.daemons {
		own[d.Cmd.Process.Pid] = true
	}
	for _, p := range c.clis {
		own[p.cmd.Process.Pid] = true
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil || own[pid] {
			continue
		}
		if f, err := proc.Fields(pid); err == nil && f[0] == "Z" && f[1] == fmt.Sprint(os.Getpid()) {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		}
	}
}

// cacheOnTmpfs moves the case's cache onto a tmpfs of size MiB it mounts;
// with fill, the tmpfs is filled up. It returns the filler file. A failed
// mount skips the case.
func (c *run) cacheOnTmpfs(size int, fill bool) (string, error) {
	dir := filepath.Join(c.dir, "fs")
	check(os.MkdirAll(dir, 0o755))
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%dm", size), "tmpfs", dir).CombinedOutput(); err != nil {
		c.skip = fmt.Sprintf("cannot mount a tmpfs (the suite must run as root): %v %s", err, strings.TrimSpace(string(out)))
		return "", errSkip
	}
	c.mounts = append(c.mounts, dir)
	c.cache = filepath.Join(dir, "cache")
	if err := os.MkdirAll(c.cache, 0o755); err != nil {
		return "", err
	}
	filler := filepath.Join(dir, "filler")
	if fill {
		return filler, fillUp(filler)
	}
	return filler, nil
}

var errSkip = errors.New("skipped")

// fillUp writes filler until the file system is full.
func fillUp(filler string) error {
	f, err := os.OpenFile(filler, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	chunk := make([]byte, 1<<16)
	for {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return nil
			}
			return err
		}
	}
}

// countFiles counts the files below dir, leaving out those being written.
func countFiles(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() && !strings.HasSuffix(e.Name(), ".tmp") {
			n++
		}
		return nil
	})
	return n
}

// treeFiles maps every file and symbolic link below dir to the hash of its
// content (or its target).
func treeFiles(dir string) map[string]string {
	out := map[string]string{}
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		var data []byte
		if e.Type()&fs.ModeSymlink != 0 {
			t, _ := os.Readlink(p)
			data = []byte("link:" + t)
		} else {
			data, _ = os.ReadFile(p)
		}
		out[rel] = fmt.Sprintf("%x", sha256.Sum256(data))
		return nil
	})
	return out
}

// diffTree says which files differ between two readings of a tree.
func diffTree(was, now map[string]string) string {
	var out []string
	for n, h := range was {
		switch g, ok := now[n]; {
		case !ok:
			out = append(out, n+" deleted")
		case g != h:
			out = append(out, n+" changed")
		}
	}
	for n := range now {
		if _, ok := was[n]; !ok {
			out = append(out, n+" added")
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func slug(s string) string {
	return strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(s), "-"), "-")
}

func check(err error) {
	if err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "faults: "+format+"\n", args...)
	os.Exit(2)
}
