package engine

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// entry is one corpus entry as the coordinator keeps it.
type entry struct {
	input string
	cov   []uint32 // its coverage as a worker reported it; nil: not known
}

// corpusStore is a session's corpus: the entries its workers start from, each
// with the coverage it was reported with, and the generated corpus files in
// the cache directory (dir) they are saved to. Its lock is a leaf: no method
// calls out while holding it (files are written and read outside it).
type corpusStore struct {
	dir  string    // the generated corpus (corpusDir)
	name string    // the target's, for the log
	log  io.Writer //

	mu      sync.Mutex
	entries []entry
	seen    map[string]bool // the entries' inputs, and inputs that failed (never entries again)
	cminAt  int             // size past which the corpus is minimized
	// unsaved are new entries not yet written to dir (a full disk: see save);
	// saveFailing, that saving them failed last.
	unsaved     []string
	saveFailing bool
}

// cminFirst is the corpus size that triggers the first minimization.
const cminFirst = 1024

func newCorpusStore(dir, name string, log io.Writer) *corpusStore {
	return &corpusStore{dir: dir, name: name, log: log, seen: map[string]bool{}, cminAt: cminFirst}
}

// reset starts a new build's corpus: inputs (seeds, sync, cache), then the
// previous build's entries not among them, without coverage (recomputed).
// Inputs that failed before may be entries again: the new build may pass them.
func (c *corpusStore) reset(inputs []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.entries
	c.entries, c.seen = nil, map[string]bool{}
	for _, in := range inputs {
		if !c.seen[in] {
			c.seen[in] = true
			c.entries = append(c.entries, entry{input: in})
		}
	}
	for _, en := range old {
		if !c.seen[en.input] {
			c.seen[en.input] = true
			c.entries = append(c.entries, entry{input: en.input})
		}
	}
}

// add takes an input that added coverage: a new entry, or an entry's coverage
// updated. It reports whether it is a new entry (an input that failed is none).
func (c *corpusStore) add(input string, cov []uint32) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.seen[input] {
		c.seen[input] = true
		c.entries = append(c.entries, entry{input: input, cov: cov})
		return true
	}
	for i := range c.entries {
		if c.entries[i].input == input {
			c.entries[i].cov = cov
		}
	}
	return false
}

// drop takes out an input that failed: workers run the corpus when they start,
// and one that kills them would kill every replacement too. It is not taken
// again until the next build.
func (c *corpusStore) drop(input string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, en := range c.entries {
		if en.input == input {
			c.entries = append(c.entries[:i], c.entries[i+1:]...)
			break
		}
	}
	c.seen[input] = true
}

// has reports whether input is an entry, or failed.
func (c *corpusStore) has(input string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[input]
}

// list returns a copy of the entries.
func (c *corpusStore) list() []entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]entry(nil), c.entries...)
}

// size is the number of entries.
func (c *corpusStore) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// minimizeDue reports whether the corpus has grown past the size that
// triggers minimize.
func (c *corpusStore) minimizeDue() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries) >= c.cminAt
}

// seedCandidates returns the smallest entries that keep the coverage of all,
// each in the `go test fuzz v1` format.
func (c *corpusStore) seedCandidates() []string {
	ents := c.list()
	sort.SliceStable(ents, func(i, j int) bool { return len(ents[i].input) < len(ents[j].input) })
	have := map[uint32]bool{}
	var out []string
	for _, e := range ents {
		adds := false
		for _, k := range e.cov {
			if !have[k] {
				have[k] = true
				adds = true
			}
		}
		if adds {
			out = append(out, e.input)
		}
	}
	return out
}

// save writes a new entry (input, "" for none) to dir, with those that could
// not be written before. When it cannot be written (a full disk) that is said
// once, and the entry waits in unsaved for the next try: the next new entry, or
// the next tick. Meanwhile the corpus and the workers' have it; once saving
// works again, that is said too.
func (c *corpusStore) save(input string) {
	c.mu.Lock()
	pending := c.unsaved
	if input != "" {
		pending = append(pending, input)
	}
	c.unsaved = nil
	c.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	var err error
	i := 0
	for ; i < len(pending); i++ {
		if _, err = WriteCorpusFile(c.dir, pending[i]); err != nil {
			break // the disk is still full: the rest waits too
		}
	}
	c.mu.Lock()
	c.unsaved = append(pending[i:len(pending):len(pending)], c.unsaved...)
	failing, wasFailing := len(c.unsaved) > 0, c.saveFailing
	c.saveFailing = failing
	c.mu.Unlock()
	switch {
	case failing && !wasFailing:
		fmt.Fprintf(c.log, "fuzzls: %s: saving corpus entries: %v; new entries are kept in memory until they can be saved\n", c.name, err)
	case !failing && wasFailing:
		fmt.Fprintf(c.log, "fuzzls: %s: corpus entries saved again (%d had waited)\n", c.name, len(pending))
	}
}

// minimize keeps only the entries needed to reach the coverage the corpus
// reaches (greedily, smallest first) and deletes the others' files from dir.
// Workers keep their own copies; the next worker started gets the minimized
// corpus. It returns the sizes before and after.
func (c *corpusStore) minimize() (before, after int) {
	ents := c.list()
	before = len(ents)
	order := make([]int, len(ents))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return len(ents[order[i]].input) < len(ents[order[j]].input) })
	have := map[uint32]bool{}
	keep := make([]bool, len(ents))
	for _, i := range order {
		// An entry whose coverage no worker has reported (an initial entry that
		// reached nothing new where it ran, or has not run yet: thousands of seeds
		// take a while) is not known to be redundant.
		keep[i] = ents[i].cov == nil
		for _, k := range ents[i].cov {
			if !have[k] {
				have[k] = true
				keep[i] = true
			}
		}
	}
	var kept []entry
	dropped := map[string]bool{}
	for i, en := range ents {
		if keep[i] {
			kept = append(kept, en)
		} else {
			dropped[en.input] = true
		}
	}
	// Files are matched by content: names are go test's hashes, but need not be.
	files, _ := os.ReadDir(c.dir)
	for _, f := range files {
		path := filepath.Join(c.dir, f.Name())
		if data, err := os.ReadFile(path); err == nil && dropped[string(data)] {
			os.Remove(path)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// Entries added while we worked are kept as they are.
	kept = append(kept, c.entries[len(ents):]...)
	c.entries = kept
	c.cminAt = max(cminFirst, 2*len(kept))
	return before, len(kept)
}
