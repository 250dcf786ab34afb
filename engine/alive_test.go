package engine

import (
	"os"
	"os/exec"
	"testing"
)

// TestProcessAlive: a scratch directory's process is alive while it runs and
// not once it exited and was waited for (alive_unix.go: signal 0; on Windows,
// under Wine, alive_windows.go: opening the process).
func TestProcessAlive(t *testing.T) {
	if !processAlive(os.Getpid()) {
		t.Error("this process is not alive")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if processAlive(cmd.Process.Pid) {
		t.Errorf("process %d, exited and waited for, is alive", cmd.Process.Pid)
	}
}
