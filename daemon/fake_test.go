package daemon

import (
	"context"
	"path/filepath"
	"strings"
	"sync"

	"fuzzls.dev/fuzzls/engine"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// fakeEngine stands in for the engine: tests drive its events by hand.
type fakeEngine struct {
	mu       sync.Mutex
	opts     engine.Options
	observe  func(engine.Event)
	sessions []*fakeSession
	closed   bool
	targets  []engine.Target // what discover returns (filtered by dir)
}

func (fe *fakeEngine) hooks(o *Options) {
	o.newEngine = func(opts engine.Options, observe func(engine.Event)) fuzzEngine {
		fe.mu.Lock()
		defer fe.mu.Unlock()
		fe.opts, fe.observe = opts, observe
		return fe
	}
	o.discover = func(ctx context.Context, dir string, patterns ...string) ([]engine.Target, error) {
		fe.mu.Lock()
		defer fe.mu.Unlock()
		var out []engine.Target
		for _, t := range fe.targets {
			if t.Dir == dir || (len(patterns) > 0 && patterns[0] == "./..." && strings.HasPrefix(t.Dir, dir)) {
				out = append(out, t)
			}
		}
		return out, nil
	}
}

func (fe *fakeEngine) Start(t engine.Target) fuzzSession {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	fs := &fakeSession{target: t, state: fproto.StateBuilding}
	fe.sessions = append(fe.sessions, fs)
	return fs
}

func (fe *fakeEngine) Close() {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	fe.closed = true
	for _, s := range fe.sessions {
		s.Stop()
	}
}

func (fe *fakeEngine) emit(ev engine.Event) {
	fe.mu.Lock()
	obs := fe.observe
	fe.mu.Unlock()
	obs(ev)
}

func (fe *fakeEngine) session(name string) *fakeSession {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	for i := len(fe.sessions) - 1; i >= 0; i-- {
		if fe.sessions[i].target.Name == name {
			return fe.sessions[i]
		}
	}
	return nil
}

func (fe *fakeEngine) isClosed() bool {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	return fe.closed
}

type fakeSession struct {
	mu       sync.Mutex
	target   engine.Target
	state    string
	stats    engine.Stats
	blocks   []engine.Block
	hit      []bool
	stopped  bool
	rebuilds int
	seeds    []string
}

func (s *fakeSession) Target() engine.Target { return s.target }
func (s *fakeSession) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	s.state = fproto.StateStopped
}
func (s *fakeSession) Rebuild() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rebuilds++
}
func (s *fakeSession) State() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}
func (s *fakeSession) Stats() engine.Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Target = s.target
	return st
}
func (s *fakeSession) Coverage() ([]engine.Block, []bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.blocks, s.hit
}
func (s *fakeSession) Crashes() []*engine.Crash { return nil }
func (s *fakeSession) DependsOn(file string) bool {
	return filepath.Dir(file) == s.target.Dir ||
		strings.HasPrefix(file, filepath.Join(s.target.Dir, "testdata", "fuzz", s.target.Name)+string(filepath.Separator))
}
func (s *fakeSession) SeedCandidates() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seeds
}

func (s *fakeSession) set(f func(s *fakeSession)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *fakeSession) rebuildCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rebuilds
}

func (s *fakeSession) isStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}
