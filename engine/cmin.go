package engine

import (
	"context"
	"os"
	"path/filepath"
	"sort"
)

// Corpus minimization: when the corpus has grown past a threshold, keep only the
// entries needed to reach the coverage it reaches (greedily, smallest first) and
// delete the others from the cache directory. Workers keep their own copies; the next
// worker started gets the minimized corpus.

const cminFirst = 1024

// minimizeCorpus drops entries that add no coverage to the others'. It returns the
// sizes before and after.
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
		// An entry whose coverage no worker has reported (an initial entry that
		// reached nothing new where it ran, or has not run yet: thousands of seeds
		// take a while) is not known to be redundant.
		keep[i] = ents[i].cov == nil
		for _, c := range ents[i].cov {
			if !have[c] {
				have[c] = true
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
	dir := corpusDir(s.e.opts.CacheDir, s.target)
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		path := filepath.Join(dir, f.Name())
		if data, err := os.ReadFile(path); err == nil && dropped[string(data)] {
			os.Remove(path)
		}
	}
	s.mu.Lock()
	// Entries added while we worked are kept as they are.
	kept = append(kept, s.corpus[len(ents):]...)
	s.corpus = kept
	s.cminAt = max(cminFirst, 2*len(kept))
	s.mu.Unlock()
	return before, len(kept)
}

// MinimizeCorpus is `fuzzls cmin`: it builds t, runs every entry of its generated
// corpus once to learn its coverage, and keeps only the entries needed for it.
func (e *Engine) MinimizeCorpus(t Target) (before, after int, err error) {
	s, err := e.prepared(t)
	if err != nil {
		return 0, 0, err
	}
	r := &replayer{s: s}
	defer r.close()
	s.mu.Lock()
	ents := s.corpus
	s.mu.Unlock()
	for i := range ents {
		ents[i].cov = []uint32{} // measured: one that fails or reaches nothing goes
		if f, ok := r.run(context.Background(), ents[i].input); ok && f == nil {
			ents[i].cov = append(ents[i].cov, r.lastCov...)
		}
	}
	// Only entries of the generated corpus can be deleted; seeds stay as they are.
	before, after = s.minimizeCorpus()
	return before, after, nil
}

// prepared is a session of t built, with its seeds and corpus read, that does
// not fuzz (fuzzls cmin, export, import).
func (e *Engine) prepared(t Target) (*Session, error) {
	s := newSession(e, t)
	close(s.done)
	if err := s.prepare(false); err != nil {
		return nil, err
	}
	return s, nil
}

// Prepared is a target built, with its seeds and generated corpus read, that
// does not fuzz: what fuzzls export and import start from (package libfuzzer).
type Prepared struct {
	Target Target
	Types  []string // the fuzz function's argument types, as go test names them
	Inputs []string // the seeds (f.Add, testdata/fuzz) and the generated corpus, `go test fuzz v1`
	Dict   []string // the dictionary: the user's (Options.Dict, testdata/fuzz/FuzzXxx.dict) and the code's literals
}

// Prepare builds t and reads its seeds and generated corpus.
func (e *Engine) Prepare(t Target) (*Prepared, error) {
	s, err := e.prepared(t)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := &Prepared{Target: t, Types: s.types, Dict: append([]string(nil), s.dict...)}
	for _, en := range s.corpus {
		p.Inputs = append(p.Inputs, en.input)
	}
	return p, nil
}
