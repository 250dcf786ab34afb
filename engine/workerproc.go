package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"fuzzls.dev/fuzzls/engine/failure"
	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/instrument"
)

// workerProc is one worker process: the instrumented test binary in fuzzrt.ModeWorker.
// The coordinator owns it: only the session that started it sends requests or kills it.
type workerProc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser // requests, the worker's fd 3
	mem    *fuzzrt.Mem
	memDir string
	stderr *tailBuffer
	msgs   chan *fuzzrt.Message // closed when the worker's fd 4 closes
	msgErr error                // why msgs closed before the end of fd 4 (read once it is closed)
	done   chan struct{}        // closed when the process has exited
	hello  *fuzzrt.Hello
	// watched is closed when the watchdog goroutine, which reads mem, has returned.
	watched     chan struct{}
	releaseOnce sync.Once

	// The coordinator's loop hands requests to post without waiting: a goroutine
	// writes them to the pipe. The loop must never block on a worker's pipe, for
	// the worker may itself be blocked writing to us while our reader waits for
	// the loop (20,000 seeds each finding coverage did that).
	writeMu sync.Mutex // one request at a time on in
	outMu   sync.Mutex
	outbox  [][]byte
	outWake chan struct{}

	mu       sync.Mutex
	busy     bool          // executing inputs (fuzzing or an Exec): the hang watchdog applies
	hung     bool          // the watchdog asked for its stacks
	hangAt   time.Duration // the limit the hung execution ran past
	killed   bool          // we killed it on purpose
	waitErr  error
	rssLimit int64 // bytes; 0 = none
	oom      bool  // stopped for exceeding rssLimit
	// race: a -race build, whose watchdog replaces the worker past rssLimit
	// (recycled) rather than report an oom: the race detector keeps memory for
	// every goroutine the target ever started (about 600 bytes each, never given
	// back), so a target that starts goroutines grows every worker without bound.
	// An input that allocates past the limit is still an oom: the worker's own
	// per-execution allocation check (fuzzrt/memlimit.go) finds it.
	race     bool
	recycled bool
}

// hangWatch is how a worker's watchdog treats an execution past the session's
// adaptive hang limit. By default it is a suspected hang: it runs on until go
// test's bound (hangCap) before it is one, and should it finish first, it was a
// slow input, told to onSlow (if set). A quick watch takes the suspicion for a
// hang: for the replays that minimize a hang already confirmed.
type hangWatch struct {
	limit  *hangLimit
	quick  bool
	onSlow func(input string, took time.Duration)
}

// startWorker starts bin as a worker for target and waits for its hello. Its
// errors name the step that failed and wrap the cause: the fuzzing phase tells a
// full disk (syscall.ENOSPC) from the rest.
func startWorker(bin *instrument.Binary, target string, o Options, hw hangWatch) (*workerProc, error) {
	rssLimitMB := o.RSSLimitMB
	memDir, err := newTempDir(o.CacheDir, "w")
	if err != nil {
		return nil, fmt.Errorf("scratch directory: %w", err)
	}
	mem, err := fuzzrt.CreateMem(filepath.Join(memDir, "mem"))
	if err != nil {
		os.RemoveAll(memDir)
		return nil, fmt.Errorf("shared memory: %w", err)
	}
	cmd, inW, outR, child, err := testCommand(bin, target, fuzzrt.ModeWorker, filepath.Join(memDir, "mem"), memDir)
	if err != nil {
		mem.Close()
		os.RemoveAll(memDir)
		return nil, fmt.Errorf("pipes: %w", err)
	}
	// No heap floor in a race build: the race detector's shadow of the heap the
	// floor lets grow between collections would be resident several times over.
	if mb := heapFloorMB(rssLimitMB, o.Parallel, physicalMemoryMB()); mb > 0 && !bin.Flags.Race {
		cmd.Env = append(cmd.Env, fuzzrt.EnvHeapFloor+"="+strconv.Itoa(mb))
	}
	if o.Nice > 0 {
		cmd.Env = append(cmd.Env, fuzzrt.EnvNice+"="+strconv.Itoa(o.Nice))
		lowerPriority(cmd, o.Nice)
	}
	if o.Leaks {
		cmd.Env = append(cmd.Env, fuzzrt.EnvLeaks+"=1")
	}
	if rssLimitMB > 0 {
		// The worker checks what each execution allocates against the limit too:
		// an allocation it never touches is not resident, so the watchdog below
		// would miss it on one worker and catch it on another.
		cmd.Env = append(cmd.Env, fuzzrt.EnvMemLimit+"="+strconv.Itoa(rssLimitMB))
	}
	w := &workerProc{cmd: cmd, in: inW, mem: mem, memDir: memDir, stderr: newTailBuffer(1 << 20),
		msgs: make(chan *fuzzrt.Message, 256), done: make(chan struct{}), watched: make(chan struct{}), outWake: make(chan struct{}, 1),
		rssLimit: int64(max(rssLimitMB, 0)) << 20, race: bin.Flags.Race}
	cmd.Stderr = w.stderr
	err = cmd.Start()
	// The child has its own copies of the pipe ends it uses.
	for _, f := range child {
		f.Close()
	}
	if err != nil {
		inW.Close()
		outR.Close()
		mem.Close()
		os.RemoveAll(memDir)
		return nil, fmt.Errorf("running %s: %w", bin.Path, err)
	}
	go w.readMessages(outR)
	go w.writeOutbox()
	go w.watch(hw)
	go func() {
		err := cmd.Wait()
		w.mu.Lock()
		w.waitErr = err
		w.mu.Unlock()
		close(w.done)
	}()
	select {
	case m, ok := <-w.msgs:
		if ok && m.Hello != nil {
			w.hello = m.Hello
			return w, nil
		}
		w.kill()
		w.release()
		return nil, fmt.Errorf("worker did not start: %s", w.stderr.String())
	case <-time.After(30 * time.Second):
		w.kill()
		w.release()
		return nil, errors.New("worker did not start within 30s")
	}
}

// testCommand prepares bin in the given fuzzrt mode with its two pipes (fd 3 and
// fd 4, or handles on Windows: fuzzrt.PassPipes); child are the child's ends, for the
// caller to close once the command has started.
func testCommand(bin *instrument.Binary, target, mode, memPath, tmpDir string) (cmd *exec.Cmd, in io.WriteCloser, out io.ReadCloser, child []*os.File, err error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, nil, nil, err
	}
	args := []string{"-test.run=^$", "-test.fuzz=^" + target + "$", "-test.fuzzcachedir=" + filepath.Join(tmpDir, "fuzzcache"), "-test.timeout=0", "-test.parallel=1", "-test.paniconexit0"}
	switch mode {
	case fuzzrt.ModeWorker:
		args = append(args, "-test.fuzzworker")
	case fuzzrt.ModeSeeds:
		args = append(args, "-test.v=true") // a skipped target says why (see skipReason)
	}
	cmd = exec.Command(bin.Path, args...)
	cmd.Dir = bin.Package.Dir
	cmd.Env = append(os.Environ(), fuzzrt.EnvMode+"="+mode, fuzzrt.EnvMem+"="+memPath, "GOTRACEBACK=all")
	if bin.Flags.Race {
		cmd.Env = append(cmd.Env, failure.RaceEnv())
	}
	ownGroup(cmd)
	fuzzrt.PassPipes(cmd, inR, outW)
	return cmd, inW, outR, []*os.File{inR, outW}, nil
}

func (w *workerProc) readMessages(r io.ReadCloser) {
	defer close(w.msgs)
	defer r.Close()
	// No bound on a message's size (see fuzzrt/wire.go). A message that does not
	// decode ends the stream: the worker is broken, and its death says how.
	frames := fuzzrt.NewFrameReader(r)
	for {
		m := new(fuzzrt.Message)
		if err := frames.Read(m); err != nil {
			if err != io.EOF {
				w.msgErr = err
				io.Copy(io.Discard, r) // the process goes on to its end, not to a broken pipe
			}
			return
		}
		w.msgs <- m
	}
}

// send writes one request. Errors mean the worker is gone; its death is reported
// through done.
func (w *workerProc) send(r *fuzzrt.Request) error {
	data := fuzzrt.AppendFrame(nil, r)
	w.writeMu.Lock()
	defer w.writeMu.Unlock()
	_, err := w.in.Write(data)
	return err
}

// post queues one request for the worker and returns at once; a worker that is
// gone drops it (its death is reported through done).
func (w *workerProc) post(r *fuzzrt.Request) {
	data := fuzzrt.AppendFrame(nil, r)
	w.outMu.Lock()
	w.outbox = append(w.outbox, data)
	w.outMu.Unlock()
	select {
	case w.outWake <- struct{}{}:
	default:
	}
}

// writeOutbox writes the posted requests, in order, until the worker exits.
func (w *workerProc) writeOutbox() {
	for {
		select {
		case <-w.outWake:
		case <-w.done:
			return
		}
		w.outMu.Lock()
		batch := w.outbox
		w.outbox = nil
		w.outMu.Unlock()
		for _, data := range batch {
			w.writeMu.Lock()
			_, err := w.in.Write(data)
			w.writeMu.Unlock()
			if err != nil {
				return
			}
		}
	}
}

// wasRecycled reports whether the watchdog replaced the worker (see recycled):
// its death is no failure.
func (w *workerProc) wasRecycled() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.recycled
}

func (w *workerProc) setBusy(b bool) {
	w.mu.Lock()
	w.busy = b
	w.mu.Unlock()
}

// kill stops the worker on purpose and waits for it. The shared memory stays mapped
// (for reading the execution counter) until release.
func (w *workerProc) kill() {
	w.mu.Lock()
	w.killed = true
	w.mu.Unlock()
	if w.cmd.Process != nil {
		killGroup(w.cmd.Process)
	}
	w.in.Close()
	<-w.done
}

// release frees the worker's shared memory and scratch directory once its
// watchdog is done with them; later calls do nothing.
func (w *workerProc) release() {
	w.releaseOnce.Do(func() {
		<-w.watched
		w.mem.Close()
		os.RemoveAll(w.memDir)
	})
}

// watch runs the hang and memory watchdogs until the worker exits: an execution
// that runs past the session's hang limit is asked for its stacks (quit; the
// worker then prints every goroutine's stack and exits), a worker whose resident memory passes the limit is
// killed. Only time inside an execution counts, read from the shared counters, so a
// worker blocked on its pipe is not hung. Past the adaptive limit, an execution
// is only suspected (see hangWatch): a slow input that finishes is no hang.
func (w *workerProc) watch(hw hangWatch) {
	limit := hw.limit
	defer close(w.watched)
	// 50 ms: a target allocating without bound must be caught before it takes the
	// machine down; reading /proc/<pid>/stat is cheap.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	j := newJudge(w.rssLimit, hw.quick)
	start := time.Now()
	var suspectInput string // the suspected execution's input, read while it ran
	var memFirst int64 = -1 // resident bytes at the first probe
	for {
		select {
		case <-w.done:
			return
		case <-tick.C:
		}
		limit.observe(w.mem.Slowest())
		mem, cpu := w.usage()
		if memFirst < 0 {
			memFirst = mem
		}
		w.mu.Lock()
		busy := w.busy
		w.mu.Unlock()
		switch j.next(probe{wall: time.Since(start), started: w.mem.Execs(), finished: w.mem.Finished(), busy: busy,
			mem: mem, cpu: cpu, limit: limit.after(), fixed: limit.fixed > 0}) {
		case verdictSuspect:
			suspectInput = w.runningInput()
		case verdictSlow:
			// The worker's slowest execution is this one (it ran past ten times
			// the slowest before).
			if hw.onSlow != nil && suspectInput != "" {
				hw.onSlow(suspectInput, w.mem.Slowest())
			}
			suspectInput = ""
		case verdictOOM:
			if w.race {
				// Replaced, not an oom (see race), once it has grown by half the
				// limit since it started: one that starts past it runs.
				if mem-memFirst > w.rssLimit/2 {
					w.mu.Lock()
					w.recycled = true
					w.mu.Unlock()
					killGroup(w.cmd.Process)
					return
				}
				continue
			}
			w.mu.Lock()
			w.oom = true
			w.mu.Unlock()
			// Its stacks first (quit): the worker prints them, which show the
			// allocation. Memory still grows meanwhile, so SIGKILL follows soon.
			w.quit(500*time.Millisecond, 500*time.Millisecond)
			return
		case verdictHang:
			w.mu.Lock()
			w.hung, w.hangAt = true, j.hangAt
			w.mu.Unlock()
			w.quit(hangSampling, 4*time.Second)
			return
		}
	}
}

// hangSampling is how long a hung worker has to print its stack samples before
// it is asked again, then made to dump: the samples take milliseconds, but a
// machine busy with other work may not run the worker for seconds, and the
// runtime's dump shows only where the loop was at one moment.
const hangSampling = 3 * time.Second

// runningInput is the input of the execution in progress, in the go test fuzz
// v1 format, read from shared memory ("" if it cannot be read).
func (w *workerProc) runningInput() string {
	enc, complete := w.mem.Input()
	vals, err := fuzzrt.DecodeValues(enc)
	if err != nil || !complete {
		return ""
	}
	return string(fuzzrt.Marshal(vals))
}

// quit asks the worker for its stacks and waits for it to exit: a Stacks request
// on its command pipe, which the worker answers with stack samples and every
// goroutine's stack (see fuzzrt/stacks.go), on every OS; after sampling, where
// there is SIGQUIT, SIGQUIT, which the worker answers likewise, or the runtime at
// once should the worker's sampler not run; after dumping, SIGKILL, should the
// runtime be wedged.
func (w *workerProc) quit(sampling, dumping time.Duration) {
	// The worker's reader never waits for its loop, so this write does not wait
	// long; in a goroutine all the same, as a wedged worker reads nothing.
	go w.send(&fuzzrt.Request{Stacks: true})
	select {
	case <-w.done:
		return
	case <-time.After(sampling):
	}
	if signalQuit(w.cmd.Process) {
		select {
		case <-w.done:
			return
		case <-time.After(sampling):
		}
		signalQuit(w.cmd.Process)
	}
	select {
	case <-w.done:
	case <-time.After(dumping):
		killGroup(w.cmd.Process)
	}
}

// usage is the worker's resident memory and CPU time: /proc's figures on Linux;
// elsewhere, or built with fuzzls_portable, the worker's own, from shared memory
// (fuzzrt/usage.go).
func (w *workerProc) usage() (mem int64, cpu time.Duration) {
	if !portable && w.cmd.Process != nil {
		if rss, cpu := processUsage(w.cmd.Process.Pid); rss > 0 {
			return rss, cpu
		}
	}
	cpu, mem = w.mem.Usage()
	return mem, cpu
}

// processUsage reads a process's resident set size in bytes and the user and
// system CPU time it has used (to the kernel's clock tick, 10 ms) from one read of
// /proc/<pid>/stat; zeros if unknown.
func processUsage(pid int) (rss int64, cpu time.Duration) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0
	}
	// Fields 14 and 15 (utime, stime) and 24 (rss, in pages).
	f := statFields(data)
	if len(f) < 22 {
		return 0, 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	pages, _ := strconv.ParseInt(f[21], 10, 64)
	return pages * int64(os.Getpagesize()), time.Duration(utime+stime) * (time.Second / clockTicks)
}

// statFields splits a /proc stat line after the command name (field 2, in
// parentheses, which may hold spaces): element 0 is field 3.
func statFields(data []byte) []string {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(data[i+1:]))
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every Linux
// architecture Go supports.
const clockTicks = 100

// tailBuffer keeps the last max bytes written to it (a worker's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

func (t *tailBuffer) Reset() {
	t.mu.Lock()
	t.buf = t.buf[:0]
	t.mu.Unlock()
}

// maxHeapFloorMB is the heap floor a worker gets under the default memory limit:
// enough to take a target allocating a few MiB per input from a collection every
// execution or two to one every few dozen (see fuzzrt/heapfloor.go).
const maxHeapFloorMB = 128

// heapFloorMB sizes a worker's heap floor: none when the user set the collector's
// knobs; at most a sixteenth of the memory limit, so that the garbage the floor
// lets pile up never makes a worker look like it is running out of memory; and,
// with workers of them, at most a sixteenth of the machine's memory (memMB, 0 when
// unknown) in all.
func heapFloorMB(rssLimitMB, workers, memMB int) int {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	mb := maxHeapFloorMB
	if rssLimitMB > 0 {
		mb = min(mb, rssLimitMB/16)
	}
	if memMB > 0 {
		mb = min(mb, memMB/16/max(workers, 1))
	}
	return mb
}

// physicalMemoryMB is the machine's memory (MemTotal of /proc/meminfo), 0 where
// it cannot be read.
func physicalMemoryMB() int {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.Atoi(f[1])
			return kb >> 10
		}
	}
	return 0
}
