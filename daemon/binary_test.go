package daemon

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	if fuzzlsPath != "" {
		os.RemoveAll(filepath.Dir(fuzzlsPath))
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error

	fuzzlsOnce sync.Once
	fuzzlsPath string
	fuzzlsErr  error
)

// fuzzlsBinary builds the real command, fuzzls.dev/fuzzls/cmd/fuzzls, whose
// `fuzzls serve` is what editors start; once per test binary.
func fuzzlsBinary(t *testing.T) string {
	t.Helper()
	fuzzlsOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fuzzls-daemon-test")
		if err != nil {
			fuzzlsErr = err
			return
		}
		fuzzlsPath = filepath.Join(dir, "fuzzls")
		out, err := exec.Command("go", "build", "-o", fuzzlsPath, "fuzzls.dev/fuzzls/cmd/fuzzls").CombinedOutput()
		if err != nil {
			fuzzlsErr = errors.New(string(out))
		}
	})
	if fuzzlsErr != nil {
		t.Fatalf("building fuzzls: %v", fuzzlsErr)
	}
	return fuzzlsPath
}

// serverBinary builds the daemon as a program (daemon/internal/testmain, the
// same Serve that `fuzzls serve` runs), once per test binary.
func serverBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a binary")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fuzzls-daemon-test")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "fuzzls-serve")
		out, err := exec.Command("go", "build", "-o", binPath, "./internal/testmain").CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("building the server: %v", buildErr)
	}
	return binPath
}

// process runs the server binary with a client on its stdin/stdout.
type process struct {
	*lspConn
	cmd   *exec.Cmd
	stdin interface{ Close() error }
	done  chan error
}

func startProcess(t *testing.T, env ...string) *process {
	t.Helper()
	bin := serverBinary(t)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &process{lspConn: connect(t, ctx, stdout, stdin), cmd: cmd, stdin: stdin, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		_ = cmd.Process.Kill()
		p.conn.Close()
	})
	return p
}

func (p *process) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case err := <-p.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatalf("wait: %v", err)
		}
		return 0
	case <-time.After(timeout):
		t.Fatalf("server process still running after %v", timeout)
		return -1
	}
}

func TestBinaryInitializeShutdownExit(t *testing.T) {
	p := startProcess(t, "FUZZLS_TESTMAIN_TESTCOMMANDS=1")
	p.initialize(t.TempDir(), nil)
	p.status()
	if _, err := p.command(commandTestSleep, map[string]int{"ms": 10}); err != nil {
		t.Fatalf("test command: %v", err)
	}
	if err := p.server.Shutdown(p.ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.server.Exit(p.ctx); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("exit code after shutdown+exit = %d, want 0", code)
	}
}

// The process exits on its own when the client goes away, even with a slow
// request in flight.
func TestBinaryExitsWhenStdinCloses(t *testing.T) {
	p := startProcess(t, "FUZZLS_TESTMAIN_TESTCOMMANDS=1")
	p.initialize(t.TempDir(), nil)
	go func() { _, _ = p.command(commandTestSleep, map[string]int{"ms": 60000}) }()
	time.Sleep(200 * time.Millisecond)
	p.stdin.Close()
	if code := p.wait(t, 10*time.Second); code != 1 {
		t.Fatalf("exit code without shutdown = %d, want 1", code)
	}
}
