// Package testws gives tests a scratch copy of an example workspace, so that a test
// can edit it, and check that a run leaves it byte-for-byte unchanged, without
// touching testdata/.
package testws

import (
	"os"
	"path/filepath"
	"testing"
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
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(dst)
}

// Write makes a workspace of the given files (path relative to the root → text)
// in a fresh temporary directory (symlinks in its path resolved) and returns it.
func Write(t testing.TB, files map[string]string) string {
	t.Helper()
	dst, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		p := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}
