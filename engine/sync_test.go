package engine

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKilledMidWrite: a process writing entries into a sync directory one after
// the other is killed with SIGKILL while a write is under way. Every file a
// reader takes (syncNew) is whole; what was cut short is only a *.tmp file,
// which readers skip.
func TestKilledMidWrite(t *testing.T) {
	data := strings.Repeat("go test fuzz v1\n[]byte(\"0123456789abcdef\")\n", 1<<18) // 10 MiB
	if dir := os.Getenv("FUZZLS_TEST_WRITER"); dir != "" {
		for i := 0; ; i++ {
			if err := writeAtomic(filepath.Join(dir, fmt.Sprintf("entry%d", i)), data); err != nil {
				panic(err)
			}
		}
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledMidWrite$")
	cmd.Env = append(os.Environ(), "FUZZLS_TEST_WRITER="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(time.Minute)
	for {
		ents, _ := os.ReadDir(dir)
		writing := false
		for _, e := range ents {
			if info, err := e.Info(); err == nil && strings.HasSuffix(e.Name(), partialSuffix) && info.Size() > 0 {
				writing = true
			}
		}
		if writing && len(ents) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the writer wrote nothing: %v", ents)
		}
		time.Sleep(time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	s := newSession(New(Options{CacheDir: t.TempDir()}, nil), Target{})
	whole := s.syncNew(dir)
	ents, _ := os.ReadDir(dir)
	partial := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), partialSuffix) {
			partial++
		}
	}
	if len(whole) < 2 || partial > 1 || len(whole)+partial != len(ents) {
		t.Errorf("%d whole files read, %d partial of %d files", len(whole), partial, len(ents))
	}
	for _, f := range whole {
		if !bytes.Equal(f.data, []byte(data)) {
			t.Errorf("%s is not whole: %d bytes of %d", f.path, len(f.data), len(data))
		}
	}
}
