package daemon

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"fuzzls.dev/fuzzls/internal/lspclient"
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
		fuzzlsPath, fuzzlsErr = lspclient.Build("..", dir)
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
}

func startProcess(t *testing.T, env ...string) *process {
	t.Helper()
	bin := serverBinary(t)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), env...)
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	c, err := lspclient.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Kill)
	return &process{newConn(t, c)}
}

// wait waits for the server to exit and returns its exit code.
func (p *process) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	if !p.WaitExit(timeout) {
		t.Fatalf("server process still running after %v", timeout)
	}
	return p.exitCode(t)
}

func (p *process) exitCode(t *testing.T) int {
	t.Helper()
	code, err := p.ExitCode()
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	return code
}

// closeStdin closes the server's stdin, as a client that vanished, and
// returns its exit code: it must exit within timeout.
func (p *process) closeStdin(t *testing.T, timeout time.Duration) int {
	t.Helper()
	if err := p.CloseStdin(timeout); err != nil {
		t.Fatal(err)
	}
	return p.exitCode(t)
}

func TestBinaryInitializeShutdownExit(t *testing.T) {
	p := startProcess(t, "FUZZLS_TESTMAIN_TESTCOMMANDS=1")
	p.initialize(t.TempDir(), nil)
	p.status()
	if _, err := p.Command(commandTestSleep, map[string]int{"ms": 10}); err != nil {
		t.Fatalf("test command: %v", err)
	}
	if err := p.Server.Shutdown(p.Ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Server.Exit(p.Ctx); err != nil {
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
	go func() { _, _ = p.Command(commandTestSleep, map[string]int{"ms": 60000}) }()
	time.Sleep(200 * time.Millisecond)
	if code := p.closeStdin(t, 10*time.Second); code != 1 {
		t.Fatalf("exit code without shutdown = %d, want 1", code)
	}
}
