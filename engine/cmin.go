package engine

import (
	"os"
	"path/filepath"
	"sort"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
)

// Corpus minimization: when the corpus has grown past a threshold, keep only the
// entries needed to reach the coverage it reaches (greedily, smallest first) and
// delete the others from the cache directory. Workers keep their own copies; the next
// worker started gets the minimized corpus.

const cminFirst = 1024

// minimizeCorpus drops entries that add no coverage. It returns the sizes before
// and after.
func (s *Session) minimizeCorpus() (before, after int) {
	s.mu.Lock()
	ents := append([]entry(nil), s.corpus...)
	s.mu.Unlock()
	before = len(ents)
	order := make([]int, len(ents))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return len(ents[order[i]].input) < len(ents[order[j]].input) })
	have := map[uint32]bool{}
	keep := make([]bool, len(ents))
	for _, i := range order {
		for _, c := range ents[i].cov {
			if !have[c] {
				have[c] = true
				keep[i] = true
			}
		}
	}
	dir := corpusDir(s.e.opts.CacheDir, s.target)
	var kept []entry
	for i, en := range ents {
		if keep[i] {
			kept = append(kept, en)
			continue
		}
		os.Remove(filepath.Join(dir, fuzzrt.FileName([]byte(en.input))))
	}
	s.mu.Lock()
	// Entries added while we worked are kept as they are.
	kept = append(kept, s.corpus[len(ents):]...)
	s.corpus = kept
	s.cminAt = max(cminFirst, 2*len(kept))
	s.mu.Unlock()
	return before, len(kept)
}
