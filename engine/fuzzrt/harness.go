package fuzzrt

import (
	"bufio"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"sync"
	"testing"
)

// Harness is what the generated harness file hands to Main: the package's fuzz
// targets, the counter arrays of every instrumented file (in the order of the build's
// block table), the exit hooks to arm, and the user's TestMain if there is one.
type Harness struct {
	Targets   []testing.InternalFuzzTarget
	Counters  [][]uint8
	ExitHooks []*func()
	TestMain  func(*testing.M)

	// Comparison hooks of the files instrumented for comparisons: the flag each
	// file's helpers check, the hook they call, and how many sites the file has.
	CmpOn    []**bool
	CmpHooks []*func(site int, a, b any)
	CmpSites []int

	// The f.Fuzz and f.Add calls of the fuzz targets, which go through
	// AdaptFuzz and AdaptAdd in fuzzls's runs (structs.go).
	FuzzCalls []*func(f, ff interface{})
	AddCalls  []*func(f interface{}, args []interface{})
}

// Main takes over the test binary when it was started by the coordinator (EnvMode
// set): it runs testing with our deps and exits. Otherwise it returns at once and the
// binary is an ordinary test binary. It is called from an init function, after the
// test package's other initialization.
func Main(h Harness) {
	mode := os.Getenv(EnvMode)
	if mode == "" {
		return
	}
	rt, err := newRuntimeState(h, mode)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fuzzls: %v\n", err)
		os.Exit(3)
	}
	m := testing.MainStart(deps{rt}, nil, nil, h.Targets, nil)
	if h.TestMain != nil {
		h.TestMain(m)
		os.Exit(testMainExit(m))
	}
	os.Exit(m.Run())
}

// testMainExit is the status of a test binary whose TestMain returned: that of
// m.Run, if it ran (a target that failed before f.Fuzz fails the binary), as
// go test's generated main reads it, from testing.M's exitCode.
func testMainExit(m *testing.M) int {
	if f := reflect.ValueOf(m).Elem().FieldByName("exitCode"); f.IsValid() && f.CanInt() {
		return int(f.Int())
	}
	return 0
}

// runtimeState is the process-wide state of a seeds run or a worker.
type runtimeState struct {
	mode     string
	counters [][]uint8
	total    int
	mem      *Mem
	heap     *heapCheck // the memory limit, checked after each execution; nil (off) outside workers
	leaks    *leakCheck // goroutine leaks, checked after each execution that passed; nil (off) unless asked
	cmp      cmpState
	hasCmp   bool
	hooks    hookRegistry // the user's mutators and generators (hooks.go)

	in    *os.File // the coordinator's commands
	outMu sync.Mutex
	out   *bufio.Writer
	frame []byte // the last message sent, reused
}

func newRuntimeState(h Harness, mode string) (*runtimeState, error) {
	rt := &runtimeState{mode: mode, counters: h.Counters}
	for _, c := range h.Counters {
		rt.total += len(c)
	}
	in, out, err := pipes()
	if err != nil {
		return nil, err
	}
	rt.in = in
	rt.out = bufio.NewWriter(out)
	if mode == ModeWorker {
		mem, err := OpenMem(os.Getenv(EnvMem))
		if err != nil {
			return nil, fmt.Errorf("shared memory: %v", err)
		}
		rt.mem = mem
		setHeapFloor()
		lowerPriority()
		rt.heap = newHeapCheck()
		rt.leaks = newLeakCheck()
		rt.hooks.define()
		sampleStacksOnQuit()
		go reportUsage(mem)
	}
	for _, p := range h.ExitHooks {
		*p = rt.exitHook
	}
	for _, p := range h.FuzzCalls {
		*p = AdaptFuzz
	}
	for _, p := range h.AddCalls {
		*p = AdaptAdd
	}
	base := 0
	for i, p := range h.CmpOn {
		*p = &rt.cmp.on
		*h.CmpHooks[i] = rt.cmp.hook(base)
		base += h.CmpSites[i]
	}
	rt.hasCmp = base > 0 && !raceBuild
	return rt, nil
}

// send writes one message to the coordinator.
func (rt *runtimeState) send(m *Message) error {
	rt.outMu.Lock()
	defer rt.outMu.Unlock()
	rt.frame = AppendFrame(rt.frame[:0], m)
	if _, err := rt.out.Write(rt.frame); err != nil {
		return err
	}
	if cap(rt.frame) > 1<<20 {
		rt.frame = nil // a big input's frame is not kept
	}
	return rt.out.Flush()
}

func (rt *runtimeState) resetCounters() {
	for _, c := range rt.counters {
		clear(c)
	}
}

// exitHook runs just before a call that exits the process (os.Exit, log.Fatal…) in
// instrumented code: it records the caller's stack, which is the failure's location.
func (rt *runtimeState) exitHook() {
	if rt.mem == nil {
		return
	}
	buf := make([]byte, 8<<10)
	n := runtime.Stack(buf, false)
	rt.mem.SetExitSite(buf[:n])
}

// cmpEnabled reports whether any file was instrumented for comparisons.
func (rt *runtimeState) cmpEnabled() bool { return rt.hasCmp }
