//go:build unix

package engine

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"fuzzls.dev/fuzzls/internal/testws"
	"fuzzls.dev/fuzzls/protocol"
)

// napModule writes testdata/nap.txtar, a module whose one target takes 20 ms an
// input, asleep: the adaptive hang limit for it is the floor, 0.5 s.
func napModule(t *testing.T) string {
	return testws.Txtar(t, "testdata/nap.txtar")
}

// TestStarvedWorkerIsNotAHang stops the worker from outside (SIGSTOP: a machine
// so busy that the worker gets no CPU) for 1.2 s in the middle of an input that
// takes 20 ms. The adaptive limit (0.5 s) counts only time the worker could use,
// so this is not a hang; an explicit -timeout of 0.5 s is wall time, as go test's,
// and reports one.
func TestStarvedWorkerIsNotAHang(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	dir := napModule(t)
	for _, c := range []struct {
		name    string
		timeout time.Duration
		hang    bool
	}{
		{"adaptive limit", 0, false},
		{"explicit timeout", 500 * time.Millisecond, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			stopped := make(chan error, 1)
			go func() {
				deadline := time.Now().Add(60 * time.Second)
				for len(workerPIDs()) == 0 && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				pids := workerPIDs()
				if len(pids) == 0 {
					stopped <- os.ErrNotExist
					return
				}
				time.Sleep(time.Second) // past the seeds, into fuzzing
				syscall.Kill(pids[0], syscall.SIGSTOP)
				time.Sleep(1200 * time.Millisecond)
				syscall.Kill(pids[0], syscall.SIGCONT)
				stopped <- nil
			}()
			s, _ := fuzzOnce(t, dir, "FuzzNap", Options{Parallel: 1, Timeout: c.timeout, FuzzTime: 6 * time.Second, MinimizeTime: time.Second})
			if err := <-stopped; err != nil {
				t.Fatalf("no worker to stop: %v", err)
			}
			var hangs int
			for _, cr := range s.Crashes() {
				if cr.Kind == protocol.KindHang {
					hangs++
				}
			}
			if c.hang && hangs == 0 {
				t.Fatalf("an explicit timeout of %v: no hang reported for a worker stopped 1.2 s; crashes %+v", c.timeout, s.Crashes())
			}
			if !c.hang && hangs != 0 {
				t.Fatalf("the adaptive limit reported a worker stopped from outside as a hang: %+v", s.Crashes())
			}
		})
	}
}

// TestWorkersNiced: Options.Nice reaches every thread of the worker processes.
func TestWorkersNiced(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc")
	}
	dir := napModule(t)
	seen := make(chan []string, 1)
	go func() {
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			if pids := workerPIDs(); len(pids) > 0 {
				time.Sleep(500 * time.Millisecond) // its threads started
				seen <- threadNiceValues(pids[0])
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		seen <- nil
	}()
	fuzzOnce(t, dir, "FuzzNap", Options{Parallel: 1, Nice: 10, FuzzTime: 3 * time.Second})
	nices := <-seen
	if len(nices) == 0 {
		t.Fatal("no worker seen")
	}
	for _, n := range nices {
		if n != "10" {
			t.Fatalf("worker threads' nice values %v, want all 10", nices)
		}
	}
	t.Logf("worker threads' nice values: %v", nices)
}

// threadNiceValues lists the nice value of each thread of process pid.
func threadNiceValues(pid int) []string {
	tasks, _ := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	var nices []string
	for _, task := range tasks {
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", task.Name(), "stat"))
		if err != nil {
			continue
		}
		if f := statFields(stat); len(f) > 16 {
			nices = append(nices, f[16])
		}
	}
	return nices
}
