//go:build unix

package engine

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/internal/testws"
)

// TestSyncOtherUser: a process of another user (nobody) reads the entries this
// one writes into the sync directory (mode 0666 less the umask, 0644 here, as go
// test's corpus files); a file it cannot read (0600, another's) is skipped, said
// once, and taken at a later read once it is readable. Needs root.
func TestSyncOtherUser(t *testing.T) {
	target := Target{Package: "example.com/synced", Name: "FuzzCheck"}
	if dir := os.Getenv("FUZZLS_TEST_SYNC_READER"); dir != "" {
		// The other user's process: a read of the directory for each line on stdin.
		s := newSession(New(Options{CacheDir: filepath.Join(dir, "cache"), Sync: dir, SyncName: "reader", Log: os.Stderr}, nil), target)
		s.types = []string{"[]byte"}
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			data, _ := json.Marshal(s.sync.pull(s.types, s.corpus.has))
			fmt.Printf("%s\n", data)
		}
		return
	}
	if os.Getuid() != 0 {
		t.Skip("needs root, to run a process as another user")
	}
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	// Everything nobody needs: a test binary and a sync directory it may reach.
	base, err := os.MkdirTemp("", "fuzzls-sync-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	os.Chmod(base, 0o755)
	syncDir := filepath.Join(base, "sync")
	os.Mkdir(syncDir, 0o777)
	os.Chmod(syncDir, 0o777)
	exe := filepath.Join(base, "engine.test")
	if data, err := os.ReadFile(os.Args[0]); err != nil || os.WriteFile(exe, data, 0o755) != nil {
		t.Fatalf("copying the test binary: %v", err)
	}

	entry := func(s string) string { return string(fuzzrt.Marshal([]any{[]byte(s)})) }
	mine, theirs := entry("written here"), entry("written 0600")
	s := newSession(New(Options{CacheDir: t.TempDir(), Sync: syncDir, SyncName: "writer"}, nil), target)
	s.sync.publish(mine)
	path := filepath.Join(s.sync.subdir("corpus", "writer"), fuzzrt.FileName([]byte(mine)))
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the sync file %s: %v, %v; want mode 0644 under umask 022", path, fi.Mode(), err)
	}
	private := filepath.Join(syncDir, "old", "corpus", "example.com", "synced", "FuzzCheck", "private")
	os.MkdirAll(filepath.Dir(private), 0o755)
	if err := os.WriteFile(private, []byte(theirs), 0o600); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(exe, "-test.run=^TestSyncOtherUser$")
	cmd.Env = append(os.Environ(), "FUZZLS_TEST_SYNC_READER="+syncDir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stderr testws.Buffer
	cmd.Stderr = &stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	out := bufio.NewScanner(stdout)
	pull := func() []string {
		io.WriteString(stdin, "\n")
		if !out.Scan() {
			t.Fatalf("the reader ended: %s", stderr.String())
		}
		var got []string
		json.Unmarshal(out.Bytes(), &got)
		return got
	}
	if got := pull(); len(got) != 1 || got[0] != mine {
		t.Errorf("first read as nobody: %q, want the entry written here", got)
	}
	if got := pull(); len(got) != 0 {
		t.Errorf("second read as nobody: %q, want nothing new", got)
	}
	os.Chmod(private, 0o644)
	if got := pull(); len(got) != 1 || got[0] != theirs {
		t.Errorf("read once the file is readable: %q, want it", got)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("the reader: %v\n%s", err, stderr.String())
	}
	if n := strings.Count(stderr.String(), "cannot read"); n != 1 {
		t.Errorf("the unreadable file was said %d times, want once:\n%s", n, stderr.String())
	}
}
