package fuzzrt

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// threadNices lists the nice value of every thread of this process (field 19 of
// /proc/self/task/<tid>/stat).
func threadNices(t *testing.T) []int {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var nices []int
	for _, task := range tasks {
		data, err := os.ReadFile("/proc/self/task/" + task.Name() + "/stat")
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
		n, err := strconv.Atoi(f[16])
		if err != nil {
			t.Fatalf("stat of thread %s: %q", task.Name(), data)
		}
		nices = append(nices, n)
	}
	return nices
}

// busyThreads makes the runtime start n more threads: goroutines locked to their
// threads, each blocked until release is closed.
func busyThreads(n int) (release func()) {
	stop := make(chan struct{})
	var started sync.WaitGroup
	for range n {
		started.Add(1)
		go func() {
			runtime.LockOSThread()
			started.Done()
			<-stop
		}()
	}
	started.Wait()
	return func() { close(stop) }
}

// TestLowerPriority runs in a child process (lowering a priority cannot be undone
// without privileges): every thread there before lowerPriority, and every thread
// started after it, has the nice value asked for.
func TestLowerPriority(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("per-thread nice values are Linux's")
	}
	if os.Getenv("FUZZLS_TEST_PRIORITY_CHILD") == "1" {
		release := busyThreads(4)
		defer release()
		before := len(threadNices(t))
		lowerPriority()
		release2 := busyThreads(4)
		defer release2()
		nices := threadNices(t)
		fmt.Printf("threads before: %d, after: %d, nice values: %v\n", before, len(nices), nices)
		for _, n := range nices {
			if n != 10 {
				t.Errorf("a thread has nice value %d, want 10 (all: %v)", n, nices)
				break
			}
		}
		return
	}
	for _, c := range []struct {
		env  string
		want string
	}{
		{"10", "PASS"},
		{"", "FAIL"},  // unchanged: the child's check must be able to fail
		{"0", "FAIL"}, // likewise
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLowerPriority$", "-test.v")
		cmd.Env = append(os.Environ(), "FUZZLS_TEST_PRIORITY_CHILD=1", EnvNice+"="+c.env)
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), "threads before") {
			t.Fatalf("%s=%q: the child did not run the check:\n%s", EnvNice, c.env, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, "threads before") {
				t.Logf("%s=%q: %s", EnvNice, c.env, line)
			}
		}
		got := "PASS"
		if strings.Contains(string(out), "--- FAIL") {
			got = "FAIL"
		}
		if got != c.want {
			t.Errorf("%s=%q: the child's check gave %s, want %s:\n%s", EnvNice, c.env, got, c.want, out)
		}
	}
}
