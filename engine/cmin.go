package engine

import (
	"context"
)

// MinimizeCorpus is `fuzzls cmin`: it builds t, runs every entry of its generated
// corpus once to learn its coverage, and keeps only the entries needed for it.
func (e *Engine) MinimizeCorpus(t Target) (before, after int, err error) {
	s, err := e.prepared(t)
	if err != nil {
		return 0, 0, err
	}
	r := &replayer{s: s}
	defer r.close()
	for _, en := range s.corpus.list() {
		cov := []uint32{} // measured: one that fails or reaches nothing goes
		if f, ok := r.run(context.Background(), en.input); ok && f == nil {
			cov = append(cov, r.lastCov...)
		}
		s.corpus.add(en.input, cov)
	}
	// Only entries of the generated corpus can be deleted; seeds stay as they are.
	before, after = s.corpus.minimize()
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
	p := &Prepared{Target: t, Types: s.types, Dict: append([]string(nil), s.dict...)}
	s.mu.Unlock()
	for _, en := range s.corpus.list() {
		p.Inputs = append(p.Inputs, en.input)
	}
	return p, nil
}
