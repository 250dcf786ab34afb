// Package testws gives tests a scratch copy of an example workspace, so that a test
// can edit it, and check that a run leaves it byte-for-byte unchanged, without
// touching testdata/: a copy of a directory (Copy), or the files of a txtar
// archive, as cmd/go's script tests keep theirs (Txtar); and what the tests of
// those workspaces share besides: the line of a marker (Line), an output read
// while it is written (Buffer), a full disk (FullDisk), a tool CI must have
// (RequireInCI); and real modules at pinned versions, fetched
// through the module proxy (Download, Module).
package testws

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/txtar"
)

// Copy copies the tree at src into a fresh temporary directory (symlinks in its
// path resolved, so paths the toolchain reports compare equal) and returns it.
func Copy(t testing.TB, src string) string {
	t.Helper()
	dst, err := CopyDir(src, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// CopyDir copies the tree at src to dst (made if need be), for tools outside
// tests, and returns dst with the symlinks in its path resolved.
func CopyDir(src, dst string) (string, error) {
	if err := CopyTree(src, dst, nil); err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(dst)
}

// CopyTree copies the tree at src to dst: directories are made, regular files
// written with their permission bits and made writable (the module cache's are
// not), symbolic links copied as links, other files left out. skip, if not
// nil, leaves out what it holds for (a directory with all below it), given its
// path relative to src.
func CopyTree(src, dst string, skip func(rel string, d fs.DirEntry) bool) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if skip != nil && skip(rel, d) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, to)
		case !d.Type().IsRegular():
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, info.Mode().Perm()|0o200)
	})
}

// Txtar makes a workspace of the files of the txtar archive at path (its
// comment says what the workspace is for) in a fresh temporary directory
// (symlinks in its path resolved) and returns it.
func Txtar(t testing.TB, path string) string {
	t.Helper()
	dir := tempDir(t)
	TxtarInto(t, dir, path)
	return dir
}

// TxtarInto writes the files of the txtar archive at path into dir, a
// workspace the test adds them to.
func TxtarInto(t testing.TB, dir, path string) {
	t.Helper()
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ar.Files) == 0 {
		t.Fatalf("%s: no files", path)
	}
	writeFiles(t, dir, ar.Files)
}

// Archive makes a workspace of the files of ar, as Txtar.
func Archive(t testing.TB, ar *txtar.Archive) string {
	t.Helper()
	dir := tempDir(t)
	writeFiles(t, dir, ar.Files)
	return dir
}

// Write makes a workspace of the given files (path relative to the root → text)
// in a fresh temporary directory (symlinks in its path resolved) and returns it.
func Write(t testing.TB, files map[string]string) string {
	t.Helper()
	var fs []txtar.File
	for name, text := range files {
		fs = append(fs, txtar.File{Name: name, Data: []byte(text)})
	}
	dir := tempDir(t)
	writeFiles(t, dir, fs)
	return dir
}

// Line is the 1-based line of the first line of the file at path that holds
// marker (the workspaces mark the lines tests look for: "// MARK:panic").
func Line(t testing.TB, path, marker string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	t.Fatalf("no %q in %s", marker, path)
	return 0
}

// Buffer is an output a test reads while the processes or goroutines it
// started write it (a log, a command's stderr).
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// tempDir is a fresh temporary directory, symlinks in its path resolved.
func tempDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeFiles(t testing.TB, dir string, files []txtar.File) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// ErrUnreachable is the module proxy's being out of reach (GOPROXY=off, no
// network): a Download error that is not the module's fault.
var ErrUnreachable = errors.New("the module proxy is unreachable")

// Download fetches mod@version through the module proxy (`go mod download`, run
// outside any module) and returns its directory in the module cache, whose files
// are read-only and may not be overlaid: copy it (CopyTree) to build in it. When
// the proxy cannot be reached, the error wraps ErrUnreachable.
func Download(ctx context.Context, mod, version string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", mod+"@"+version)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr == nil && info.Dir != "" && err == nil {
		return info.Dir, nil
	}
	msg := info.Error
	if msg == "" {
		msg = fmt.Sprint(err)
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			msg += " " + strings.TrimSpace(string(ee.Stderr))
		}
	}
	for _, s := range []string{"lookup disabled by GOPROXY=off", "dial tcp", "no such host", "connection refused",
		"network is unreachable", "i/o timeout", "TLS handshake timeout", "proxyconnect", "connection reset"} {
		if strings.Contains(msg, s) {
			return "", fmt.Errorf("go mod download %s@%s: %w: %s", mod, version, ErrUnreachable, msg)
		}
	}
	return "", fmt.Errorf("go mod download %s@%s: %s", mod, version, msg)
}

// Module is a writable copy, in a fresh temporary directory, of mod@version
// fetched through the module proxy; the test is skipped, saying why, only when
// the proxy cannot be reached.
func Module(t testing.TB, mod, version string) string {
	t.Helper()
	src, err := Download(t.Context(), mod, version)
	if errors.Is(err, ErrUnreachable) {
		t.Skipf("needs %s@%s from the module proxy: %v", mod, version, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return Copy(t, src)
}

// FullDisk mounts a small tmpfs and fills it but for room bytes; it returns the
// mount point and the file to remove to make room. It skips the test where it
// cannot mount (not root).
func FullDisk(t testing.TB, room int64) (dir, filler string) {
	t.Helper()
	full := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", full).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (not root?): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", full).Run() })
	filler = filepath.Join(full, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	for chunk := make([]byte, 1<<16); ; {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	if fi, err := f.Stat(); err == nil && room > 0 {
		f.Truncate(fi.Size() - room)
	}
	f.Close()
	return full, filler
}

// RequireInCI skips t when err says a tool it needs is missing, except in CI
// (CI set, as scripts/test.sh sets it), which installs the tool: there t fails
// saying why.
func RequireInCI(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatal(err)
	}
	t.Skip(err)
}
