package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fuzzls.dev/fuzzls/internal/lspclient"
)

// TestServeMemProfile starts the real daemon with $FUZZLS_MEMPROFILE set and
// checks that it writes a heap profile on SIGUSR1 while it runs (Unix) and again
// when it exits, and says so on stderr.
func TestServeMemProfile(t *testing.T) {
	bin := buildFuzzls(t)
	dir := t.TempDir()
	profile := filepath.Join(dir, "heap.pprof")
	cmd := exec.Command(bin, "serve")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), memProfileEnv+"="+profile)
	logPath := filepath.Join(dir, "daemon.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd.Stderr = log
	stderr := func() string { data, _ := os.ReadFile(logPath); return string(data) }
	c, err := lspclient.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Initialize(dir, map[string]any{"cacheDir": filepath.Join(dir, "cache")}); err != nil {
		t.Fatal(err)
	}
	if profileSignal != nil {
		if err := cmd.Process.Signal(profileSignal); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(20 * time.Second); !strings.Contains(stderr(), "heap profile ("+profileSignal.String()+") written"); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no profile 20 s after %v; stderr:\n%s", profileSignal, stderr())
			}
		}
		checkHeapProfile(t, profile)
		if err := os.Remove(profile); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr(), "heap profile (exit) written to "+profile) {
		t.Errorf("stderr does not say the profile was written at exit:\n%s", stderr())
	}
	checkHeapProfile(t, profile)
}

// checkHeapProfile checks that path is a gzipped pprof heap profile.
func checkHeapProfile(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	data, err := io.ReadAll(z)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if !bytes.Contains(data, []byte("inuse_space")) {
		t.Errorf("%s is no heap profile (no inuse_space sample type)", path)
	}
}
