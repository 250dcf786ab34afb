package engine

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWorkersGoWithCoordinator: a coordinator killed with SIGKILL (no chance to
// stop its workers) leaves no worker running. The test runs itself again as the
// coordinator, fuzzing with two workers, and kills it. On Linux the kernel could
// do it (Pdeathsig); built with fuzzls_portable, as scripts/test.sh runs this test
// too, only the workers' own check, EOF on their command pipe, can: what macOS
// and Windows have.
func TestWorkersGoWithCoordinator(t *testing.T) {
	if dir := os.Getenv("FUZZLS_TEST_COORDINATOR"); dir != "" {
		e := New(Options{CacheDir: t.TempDir(), Parallel: 2, KeepFuzzing: true}, func(Event) {})
		s := e.Start(findTarget(t, e, dir, "FuzzNoBug"))
		waitFor(t, 2*time.Minute, func() bool { return len(s.liveWorkers()) == 2 && s.Stats().Execs > 1000 })
		for _, w := range s.liveWorkers() {
			fmt.Printf("worker %d\n", w.cmd.Process.Pid)
		}
		fmt.Println("fuzzing")
		time.Sleep(time.Hour) // until killed
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWorkersGoWithCoordinator$", "-test.timeout=0")
	cmd.Env = append(os.Environ(), "FUZZLS_TEST_COORDINATOR="+copyTree(t, "../testdata/crashers"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var pids []int
	sc := bufio.NewScanner(out)
	for sc.Scan() && sc.Text() != "fuzzing" {
		if s, ok := strings.CutPrefix(sc.Text(), "worker "); ok {
			pid, _ := strconv.Atoi(s)
			pids = append(pids, pid)
		}
	}
	if len(pids) != 2 {
		t.Fatalf("the coordinator named workers %v, want 2", pids)
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for _, pid := range pids {
		for running(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("worker %d still runs 30 s after its coordinator was killed", pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// running reports whether process pid runs: exists and, where /proc says, is not
// a zombie (an orphan's parent may be slow to reap it).
func running(pid int) bool {
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		if f := statFields(stat); len(f) > 0 && f[0] == "Z" {
			return false
		}
	}
	return processAlive(pid)
}
