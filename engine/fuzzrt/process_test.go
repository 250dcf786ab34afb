package fuzzrt

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A worker process, as the coordinator runs one: this test binary started again
// with EnvMode set runs Main with the fuzz target below, its pipes passed as the
// coordinator passes them (PassPipes: fds 3 and 4, or handles on Windows) and its
// input in shared memory. These tests run on Linux and, cross-compiled, under Wine
// (scripts/test.sh), so that Windows's pipes, file mapping and the worker loop are
// exercised, not only compiled.

// procCounters is the target's coverage: one counter per input length up to 3.
var procCounters [4]uint8

func fuzzProc(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		procCounters[min(len(b), 3)]++
		switch {
		case bytes.HasPrefix(b, []byte("boom")):
			panic("boom")
		case bytes.HasPrefix(b, []byte("hang")):
			for len(b) > 0 {
				spin(b)
			}
		}
	})
}

//go:noinline
func spin(b []byte) int { return len(b) }

func TestMain(m *testing.M) {
	if os.Getenv(EnvMode) != "" {
		Main(Harness{
			Targets:  []testing.InternalFuzzTarget{{Name: "fuzzProc", Fn: fuzzProc}},
			Counters: [][]uint8{procCounters[:]},
		})
	}
	os.Exit(m.Run())
}

// testWorker is a worker process started by a test.
type testWorker struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	mem    *Mem
	msgs   chan *Message
	stderr bytes.Buffer
	done   chan struct{}
	mu     sync.Mutex
}

func startTestWorker(t *testing.T) *testWorker {
	t.Helper()
	dir := t.TempDir()
	mem, err := CreateMem(filepath.Join(dir, "mem"))
	if err != nil {
		t.Fatal(err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.fuzz=^fuzzProc$", "-test.fuzzcachedir="+filepath.Join(dir, "cache"), "-test.fuzzworker", "-test.parallel=1", "-test.timeout=0")
	cmd.Env = append(os.Environ(), EnvMode+"="+ModeWorker, EnvMem+"="+filepath.Join(dir, "mem"), "GOTRACEBACK=all")
	w := &testWorker{cmd: cmd, in: inW, mem: mem, msgs: make(chan *Message, 64), done: make(chan struct{})}
	cmd.Stderr = lockedWriter{&w.mu, &w.stderr}
	PassPipes(cmd, inR, outW)
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(w.msgs)
		frames := NewFrameReader(outR)
		for {
			m := new(Message)
			if frames.Read(m) != nil {
				return
			}
			w.msgs <- m
		}
	}()
	go func() {
		cmd.Wait()
		close(w.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-w.done
		inW.Close()
		mem.Close()
		// Removed one by one, not left to TempDir's cleanup: under Wine 8.0,
		// os.RemoveAll fails on what a directory holds ("Invalid function").
		os.Remove(filepath.Join(dir, "mem"))
		os.Remove(dir)
	})
	if m := w.next(t); m.Hello == nil || m.Hello.PID != cmd.Process.Pid {
		t.Fatalf("first message %+v, want a hello from pid %d", m, cmd.Process.Pid)
	}
	return w
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (w *testWorker) output() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stderr.String()
}

func (w *testWorker) send(t *testing.T, r *Request) {
	t.Helper()
	if _, err := w.in.Write(AppendFrame(nil, r)); err != nil {
		t.Fatalf("sending %+v: %v", r, err)
	}
}

// next is the worker's next message; it fails the test after a minute.
func (w *testWorker) next(t *testing.T) *Message {
	t.Helper()
	select {
	case m, ok := <-w.msgs:
		if !ok {
			<-w.done
			t.Fatalf("the worker closed its pipe (%v); stderr:\n%s", w.cmd.ProcessState, w.output())
		}
		return m
	case <-time.After(time.Minute):
		t.Fatalf("no message from the worker within a minute; stderr:\n%s", w.output())
	}
	return nil
}

// exited waits for the worker to exit and returns its exit status.
func (w *testWorker) exited(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-w.done:
		return w.cmd.ProcessState.ExitCode()
	case <-time.After(within):
		t.Fatalf("the worker still runs after %v; stderr:\n%s", within, w.output())
	}
	return 0
}

func (w *testWorker) exec(t *testing.T, id int64, input []byte) *ExecResult {
	t.Helper()
	w.send(t, &Request{Exec: &ExecArgs{ID: id, Input: string(Marshal([]any{input}))}})
	for {
		if m := w.next(t); m.Result != nil {
			if m.Result.ID != id {
				t.Fatalf("result %d, want %d", m.Result.ID, id)
			}
			return m.Result
		}
	}
}

// TestWorkerProcess: a worker runs inputs asked for, with the input in shared
// memory and its counters read; reports a failure it survives; fuzzes, reporting
// new coverage; and reports its own CPU time and memory through shared memory.
func TestWorkerProcess(t *testing.T) {
	w := startTestWorker(t)
	res := w.exec(t, 1, []byte("ab"))
	if res.Output != "" || len(res.Cov) != 1 || res.Cov[0]>>8 != 2 {
		t.Fatalf("exec of a passing 2-byte input: %+v, want no output and counter 2", res)
	}
	enc, complete := w.mem.Input()
	vals, err := DecodeValues(enc)
	if err != nil || !complete || len(vals) != 1 || string(vals[0].([]byte)) != "ab" {
		t.Fatalf("shared memory holds %v (complete %v, %v), want the input ab", vals, complete, err)
	}
	if n := w.mem.Execs(); n != 1 || w.mem.Finished() != 1 {
		t.Fatalf("shared memory counts %d started, %d finished, want 1 and 1", n, w.mem.Finished())
	}
	if res := w.exec(t, 2, []byte("boom")); !strings.Contains(res.Output, "boom") {
		t.Fatalf("exec of a panicking input: output %q, want the panic", res.Output)
	}
	w.send(t, &Request{Fuzz: &FuzzArgs{Types: []string{"[]byte"}, Seed: 1, MaxLen: 8}})
	lengths := map[uint32]bool{}
	for deadline := time.Now().Add(time.Minute); len(lengths) < 3 && time.Now().Before(deadline); {
		if m := w.next(t); m.New != nil {
			for _, c := range m.New.Cov {
				lengths[c>>8] = true
			}
		}
	}
	if len(lengths) < 3 {
		t.Fatalf("fuzzing reached counters %v, want 3 input lengths", lengths)
	}
	w.send(t, &Request{Stop: true})
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		cpu, memory := w.mem.Usage()
		if cpu > 0 && memory > 1<<20 {
			t.Logf("the worker reports %v of CPU time and %d MiB", cpu, memory>>20)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker reports %v of CPU time and %d bytes, want both", cpu, memory)
		}
	}
}

// TestWorkerStacks: a worker stuck in an execution answers a Stacks request on its
// pipe (no signal: Windows has none) with stack samples of the loop and exits.
func TestWorkerStacks(t *testing.T) {
	w := startTestWorker(t)
	w.send(t, &Request{Exec: &ExecArgs{ID: 1, Input: string(Marshal([]any{[]byte("hang")}))}})
	for w.mem.Execs() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	// Requests queued behind the stuck execution do not keep the worker from
	// reading the one that matters (200 KiB, more than a pipe holds).
	go func() {
		for i := range 200 {
			w.in.Write(AppendFrame(nil, &Request{Add: &Entry{Input: string(Marshal([]any{bytes.Repeat([]byte{byte(i)}, 1000)}))}}))
		}
		w.in.Write(AppendFrame(nil, &Request{Stacks: true}))
	}()
	if code := w.exited(t, time.Minute); code != 2 {
		t.Errorf("exit status %d, want 2", code)
	}
	out := w.output()
	if !strings.Contains(out, StackSampleMarker) || !strings.Contains(out, StackSamplesEnd) {
		t.Fatalf("no stack samples in the worker's stderr:\n%s", out)
	}
	samples := out[strings.Index(out, StackSampleMarker):strings.Index(out, StackSamplesEnd)]
	// The fuzz function is on every sample's stack; spin, the call its loop
	// makes, only on those taken inside it, not at the loop's head where a
	// loaded machine (Wine's) may preempt it for every sample.
	if !strings.Contains(samples, "fuzzProc.func1") {
		t.Errorf("the samples do not show the fuzz function:\n%s", samples)
	}
}

// TestWorkerGoesWithCoordinator: a worker whose command pipe ends (its coordinator
// is gone) exits, also in the middle of an execution that never ends; no signal
// from the kernel is needed (Linux's Pdeathsig is the only one there is).
func TestWorkerGoesWithCoordinator(t *testing.T) {
	for _, hung := range []bool{false, true} {
		w := startTestWorker(t)
		if hung {
			w.send(t, &Request{Exec: &ExecArgs{ID: 1, Input: string(Marshal([]any{[]byte("hang")}))}})
			for w.mem.Execs() == 0 {
				time.Sleep(10 * time.Millisecond)
			}
		}
		w.in.Close()
		if code := w.exited(t, time.Minute); code != 0 {
			t.Errorf("hung %v: exit status %d, want 0", hung, code)
		}
	}
}
