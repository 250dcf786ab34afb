package instrument

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// A build's go command starts compilers and a linker of its own. Were the process
// that asked for the build (the daemon) killed with SIGKILL, they would run on for
// seconds, writing into the cache: nothing tells them. So every build runs under a
// guard, this same executable started again with envGuard set: it runs the go
// command in a process group of its own and reads its standard input, a pipe from
// the process that asked; at end of file (that process is gone, or cancelled the
// build) it kills the whole group. An init function turns any binary that links
// this package (fuzzls, and the tests) into the guard, so the tests run it too.

const envGuard = "FUZZLS_BUILD_GUARD"

func init() {
	if os.Getenv(envGuard) == "1" {
		os.Exit(runGuard(os.Args[1:]))
	}
}

// Guard makes cmd, a go command not yet started, run under the guard, and returns
// what to call once cmd has returned. Without an executable to start again, cmd is
// left as it is.
func Guard(cmd *exec.Cmd) (done func()) {
	exe, err := os.Executable()
	if err != nil {
		return func() {}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return func() {}
	}
	cmd.Env = append(cmd.Environ(), envGuard+"=1")
	cmd.Args = append([]string{exe, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = exe
	cmd.Stdin = r
	cmd.Cancel = w.Close // the guard kills the group and exits
	cmd.WaitDelay = 10 * time.Second
	return func() {
		r.Close()
		w.Close()
	}
}

// runGuard runs args (a command and its arguments) in a process group of its own
// until it exits, or until standard input ends, when it kills the group.
func runGuard(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "fuzzls build guard: no command")
		return 2
	}
	os.Unsetenv(envGuard)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	go func() {
		io.Copy(io.Discard, os.Stdin)
		killGroup(cmd.Process)
		os.Exit(2)
	}()
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return max(ee.ExitCode(), 1)
	} else if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}
