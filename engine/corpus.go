package engine

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
)

// DefaultCacheDir is $FUZZLS_CACHE, else os.UserCacheDir()/fuzzls.
func DefaultCacheDir() string {
	if d := os.Getenv("FUZZLS_CACHE"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "fuzzls-cache")
	}
	return filepath.Join(d, "fuzzls")
}

// corpusDir is where a target's generated corpus lives: one `go test fuzz v1` file
// per entry, named like go test names them.
func corpusDir(cacheDir string, t Target) string {
	return filepath.Join(cacheDir, "corpus", filepath.FromSlash(t.Package), t.Name)
}

// crashDir is where a target's failing inputs are saved.
func crashDir(cacheDir string, t Target) string {
	return filepath.Join(cacheDir, "crashes", filepath.FromSlash(t.Package), t.Name)
}

// slowDir is where a target's slow inputs are saved (see Session.onSlow).
func slowDir(cacheDir string, t Target) string {
	return filepath.Join(cacheDir, "slow", filepath.FromSlash(t.Package), t.Name)
}

// nativeCacheDir is `go test -fuzz`'s generated corpus for t, for a warm start.
func nativeCacheDir(t Target) string {
	gocache := os.Getenv("GOCACHE")
	if gocache == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		gocache = filepath.Join(d, "go-build")
	}
	return filepath.Join(gocache, "fuzz", filepath.FromSlash(t.Package), t.Name)
}

// partialSuffix ends the name of an entry still being written (WriteCorpusFile
// writes through a temporary file and renames it): not an entry yet.
const partialSuffix = ".tmp"

// readCorpusDir reads the entries of dir that parse and have the target's types.
// Malformed files are skipped and reported to log: a cache must not stop a run.
func readCorpusDir(dir string, types []string, log io.Writer) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), partialSuffix) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		var data []byte
		var vals []any
		var err error
		if e.IsDir() {
			err = errors.New("a directory")
		} else if !e.Type().IsRegular() { // a link, a pipe (which would block a read)…
			err = errors.New("not a regular file")
		} else if data, err = os.ReadFile(path); err == nil {
			vals, err = fuzzrt.Unmarshal(data)
		}
		if err == nil && !sameTypes(vals, types) {
			err = errors.New("argument types do not match the target")
		}
		if err != nil {
			fmt.Fprintf(log, "fuzzls: skipping corpus file %s: %v\n", path, err)
			continue
		}
		out = append(out, string(data))
	}
	sort.Strings(out)
	return out
}

func sameTypes(vals []any, types []string) bool {
	if len(vals) != len(types) {
		return false
	}
	for i, v := range vals {
		if k := fuzzrt.KindNamed(types[i]); k == fuzzrt.NoKind || fuzzrt.KindOf(v) != k {
			return false
		}
	}
	return true
}

// WriteCorpusFile saves a `go test fuzz v1` text into dir under go test's name
// for it (unless a file of that name is there), atomically, and returns the
// path.
func WriteCorpusFile(dir, input string) (string, error) {
	path := filepath.Join(dir, fuzzrt.FileName([]byte(input)))
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	return path, WriteFileAtomic(path, input)
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory (made with its parents) renamed into place: a reader, or a process
// killed mid-write, never sees part of it. The file's mode is 0666 less the
// umask, as go test makes its corpus files (0644 under the usual umask), so
// that processes of other users sharing a sync directory can read it.
func WriteFileAtomic(path, data string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := createPartial(dir)
	if err != nil {
		return err
	}
	if _, err := tmp.WriteString(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// createPartial creates a new file named .entry-<random>.tmp in dir, mode 0666
// less the umask (os.CreateTemp's files are 0600).
func createPartial(dir string) (*os.File, error) {
	for range 100 {
		name := filepath.Join(dir, ".entry-"+strconv.FormatUint(rand.Uint64(), 36)+partialSuffix)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !os.IsExist(err) {
			return f, err
		}
	}
	return nil, fmt.Errorf("creating a file in %s: too many names taken", dir)
}
