//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"fuzzls.dev/fuzzls/internal/lspclient"
	"fuzzls.dev/fuzzls/internal/proc"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// answerTimeout bounds every request: a daemon that does not answer in it is hung.
const answerTimeout = 10 * time.Second

// daemon is a `fuzzls serve` started by a case, its log in the case's directory.
type daemon struct {
	*lspclient.Client
	c       *run
	logPath string
	log     *os.File
}

// serve starts a daemon on the case's workspace and cache, one worker, with
// opts added to (or replacing) those settings.
func (c *run) serve(opts map[string]any) (*daemon, error) {
	c.nDaemon++
	d := &daemon{c: c, logPath: filepath.Join(c.dir, fmt.Sprintf("daemon%d.log", c.nDaemon))}
	var err error
	if d.log, err = os.Create(d.logPath); err != nil {
		return nil, err
	}
	cmd := exec.Command(c.s.bin, "serve")
	cmd.Stderr = d.log
	if d.Client, err = lspclient.Start(cmd); err != nil {
		return nil, err
	}
	c.daemons = append(c.daemons, d)
	settings := map[string]any{"cacheDir": c.cache, "parallel": 1}
	for k, v := range opts {
		settings[k] = v
	}
	return d, d.Initialize(c.ws, settings)
}

// close ends the daemon as an editor does, if it still runs.
func (d *daemon) close() {
	if exited, _ := d.Exited(); !exited {
		if err := d.Close(); err != nil {
			d.c.note("daemon %d: %v", d.Cmd.Process.Pid, err)
		}
	}
	d.log.Close()
}

// command runs a command with answerTimeout.
func (d *daemon) command(name string, arg any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(d.Ctx, answerTimeout)
	defer cancel()
	return d.CommandContext(ctx, name, arg)
}

// start starts the target of the test file.
func (d *daemon) start(testFile, target string) error {
	_, err := d.command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(testFile)), Target: target})
	return err
}

// session asks fuzzls.status for the target's session.
func (d *daemon) session(target string) (fproto.SessionStatus, error) {
	raw, err := d.command(fproto.CommandStatus, nil)
	if err != nil {
		return fproto.SessionStatus{}, err
	}
	var st fproto.StatusParams
	if err := json.Unmarshal(raw, &st); err != nil {
		return fproto.SessionStatus{}, err
	}
	for _, s := range st.Sessions {
		if s.Name == target {
			return s, nil
		}
	}
	return fproto.SessionStatus{}, fmt.Errorf("no session of %s", target)
}

// awaitSession asks fuzzls.status until the target's session meets cond.
func (d *daemon) awaitSession(target, what string, timeout time.Duration, cond func(fproto.SessionStatus) bool) (fproto.SessionStatus, error) {
	deadline := time.Now().Add(timeout)
	for {
		s, err := d.session(target)
		if err == nil && cond(s) {
			return s, nil
		}
		if exited, werr := d.Exited(); exited {
			return s, fmt.Errorf("the daemon exited (%v) while waiting for %s", werr, what)
		}
		if time.Now().After(deadline) {
			if err != nil {
				return s, fmt.Errorf("timed out after %v waiting for %s: %v", timeout, what, err)
			}
			return s, fmt.Errorf("timed out after %v waiting for %s: state %s, %d execs, message %q", timeout, what, s.State, s.Execs, s.Message)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// awaitFuzzing waits until the target fuzzes: state fuzzing, more executions
// than it had when asked.
func (d *daemon) awaitFuzzing(target string, timeout time.Duration) (fproto.SessionStatus, error) {
	var before int64 = -1
	if s, err := d.session(target); err == nil && s.State == fproto.StateFuzzing {
		before = s.Execs
	}
	return d.awaitSession(target, target+" fuzzing", timeout, func(s fproto.SessionStatus) bool {
		return s.State == fproto.StateFuzzing && s.Execs > max(before, 0)
	})
}

// diagsOf is the last set of diagnostics published for file (d locked).
func (d *daemon) diagsOf(file string) []protocol.Diagnostic { return d.LastDiags(uri.File(file)) }

// awaitDiag waits for a diagnostic of the given code on file, on a line
// (1-based) from lo to hi.
func (d *daemon) awaitDiag(file, code string, lo, hi int, timeout time.Duration) error {
	var seen []string
	err := d.Await(fmt.Sprintf("a %q diagnostic at %s:%d", code, filepath.Base(file), lo), timeout, func() bool {
		seen = seen[:0]
		for _, dg := range d.diagsOf(file) {
			line := int(dg.Range.Start.Line) + 1
			seen = append(seen, fmt.Sprintf("%v at line %d", dg.Code, line))
			if dg.Code == protocol.String(code) && line >= lo && line <= hi {
				return true
			}
		}
		return false
	})
	if err != nil && len(seen) > 0 {
		err = fmt.Errorf("%v; published: %s", err, strings.Join(seen, ", "))
	}
	return err
}

// failures counts the crash diagnostics published, over all files (d locked).
func (d *daemon) failures() int {
	last := map[uri.URI][]protocol.Diagnostic{}
	for _, ev := range d.Diags {
		last[ev.URI] = ev.Diags
	}
	n := 0
	for _, ds := range last {
		for _, dg := range ds {
			if dg.Code != protocol.String("build") {
				n++
			}
		}
	}
	return n
}

// logText is what the daemon wrote to its stderr so far.
func (d *daemon) logText() string {
	data, _ := os.ReadFile(d.logPath)
	return string(data)
}

// workers lists the daemon's running test-binary processes (fuzzing workers,
// seeds runs, replays): its descendants whose executable is in the cache.
func (d *daemon) workers() []int {
	return testBinaries(d.Cmd.Process.Pid, d.c.cache)
}

func testBinaries(pid int, cache string) []int {
	var out []int
	for _, p := range proc.Descendants(pid) {
		if strings.HasPrefix(proc.Exe(p), cache+string(filepath.Separator)) {
			out = append(out, p)
		}
	}
	return out
}

// awaitWorker waits for a test binary of the daemon's that has run for a
// moment (a fuzzing worker rather than a seeds run) and is not in old.
func (d *daemon) awaitWorker(timeout time.Duration, old ...int) (int, error) {
	deadline := time.Now().Add(timeout)
	for {
		for _, p := range d.workers() {
			t, err := proc.Start(p)
			if err == nil && time.Since(t) > 300*time.Millisecond && !slices.Contains(old, p) {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("no worker process within %v", timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// distinctWorkers samples the daemon's test binaries for span and counts the
// distinct processes seen.
func (d *daemon) distinctWorkers(span time.Duration) int {
	seen := map[int]bool{}
	for end := time.Now().Add(span); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		for _, p := range d.workers() {
			seen[p] = true
		}
	}
	return len(seen)
}

// killDaemon sends SIGKILL to the daemon and checks that everything under it
// ends within killGrace.
func (c *run) killDaemon(d *daemon) error {
	d.Kill()
	d.log.Close()
	return c.allGone("the daemon killed with SIGKILL", killGrace)
}

// cli is a `fuzzls fuzz` started by a case.
type cli struct {
	cmd     *exec.Cmd
	outPath string
	done    chan struct{}
	err     error
}

// fuzz starts `fuzzls fuzz -cachedir CACHE -parallel 1 args...` in the workspace.
func (c *run) fuzz(args ...string) (*cli, error) {
	c.nFuzzes++
	p := &cli{outPath: filepath.Join(c.dir, fmt.Sprintf("fuzz%d.out", c.nFuzzes)), done: make(chan struct{})}
	out, err := os.Create(p.outPath)
	if err != nil {
		return nil, err
	}
	p.cmd = exec.Command(c.s.bin, append([]string{"fuzz", "-cachedir", c.cache, "-parallel", "1"}, args...)...)
	p.cmd.Dir = c.ws
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if err := p.cmd.Start(); err != nil {
		out.Close()
		return nil, err
	}
	c.clis = append(c.clis, p)
	go func() {
		p.err = p.cmd.Wait()
		out.Close()
		close(p.done)
	}()
	return p, nil
}

// wait waits up to timeout for the command to end and returns its exit status.
func (p *cli) wait(timeout time.Duration) (int, error) {
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode(), nil
	case <-time.After(timeout):
		return -1, fmt.Errorf("fuzzls fuzz still runs after %v", timeout)
	}
}

// stop kills the command if it still runs.
func (p *cli) stop() {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	}
}

// events are the command's -json events of the given kind.
func (p *cli) events(kind string) []map[string]any {
	f, err := os.Open(p.outPath)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev["event"] == kind {
			out = append(out, ev)
		}
	}
	return out
}

// markLine is the 1-based line of file holding "MARK:"+mark.
func markLine(file, mark string) int {
	data, err := os.ReadFile(file)
	check(err)
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, "MARK:"+mark) {
			return i + 1
		}
	}
	fatalf("no MARK:%s in %s", mark, file)
	return 0
}
