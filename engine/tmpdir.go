package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Scratch directories (a worker's shared memory and temporary files, a seeds
// run's) live under CacheDir/tmp, named <kind><pid>-<random> after the process
// that made them. The cache belongs to the user, who may clear it at any time:
// every scratch directory is made with its parents, so fuzzing goes on after
// `rm -rf` of the cache. A process killed with SIGKILL cannot remove its own:
// the next engine on the same cache removes those whose process is gone, and
// none of a process still running (two daemons may share a cache).

// newTempDir makes a scratch directory of kind ("w", "seeds").
func newTempDir(cacheDir, kind string) (string, error) {
	root := filepath.Join(cacheDir, "tmp")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	return os.MkdirTemp(root, fmt.Sprintf("%s%d-", kind, os.Getpid()))
}

// removeOrphanTempDirs removes the scratch directories of processes that are gone.
func removeOrphanTempDirs(cacheDir string) {
	root := filepath.Join(cacheDir, "tmp")
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		pid, ok := tempDirOwner(e.Name())
		if ok && pid != os.Getpid() && !processAlive(pid) {
			os.RemoveAll(filepath.Join(root, e.Name()))
		}
	}
}

// tempDirOwner is the process id in a scratch directory's name.
func tempDirOwner(name string) (int, bool) {
	name = strings.TrimLeft(name, "abcdefghijklmnopqrstuvwxyz")
	digits, _, ok := strings.Cut(name, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	return pid, err == nil && pid > 0
}
