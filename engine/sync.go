package engine

// Corpus sync through a directory shared by fuzzls processes on any number of
// machines (Options.Sync), as AFL++'s sync dir and Centipede's workdir: an NFS
// mount, a bucket mounted with FUSE, a CI cache restored and saved around a job.
// Nothing in it is locked, so each process writes only under its own
// subdirectory, and only whole files (written elsewhere, renamed into place):
//
//	DIR/<name>/corpus/<import path>/FuzzXxx/<go test's name>  a corpus entry, `go test fuzz v1`
//	DIR/<name>/failures/<import path>/FuzzXxx/<failure id>    its failing input, `go test fuzz v1`
//
// When a build is ready, a session loads what the directory holds for its
// target into its initial corpus, which the workers run before they mutate:
// the corpus entries, so that a process joining starts where the others are,
// and the failures' inputs, so that a failure still there fails this run too,
// whoever recorded it first. Then every few seconds it reads the files it has
// not seen and runs them on its workers: corpus entries join its corpus when
// they add coverage, a failure that fails here is reported as found here. Its
// own subdirectory is read like the others' (a CI job restores the directory
// of its last run, with the same name); what it writes itself is not read back.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"fuzzls.dev/fuzzls/engine/failure"
	"fuzzls.dev/fuzzls/engine/fuzzrt"
)

// syncEvery is how often a session reads the sync directory.
const syncEvery = 2 * time.Second

// syncName is this process's subdirectory of the sync directory.
func (e *Engine) syncName() string {
	if e.opts.SyncName != "" {
		return e.opts.SyncName
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "fuzzls"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

// syncState is a session's view of the sync directory.
type syncState struct {
	seen     map[string]bool  // files taken already: read, or written by this process (not those it could not read)
	received map[string]bool  // inputs that came from the directory: not published again
	pending  map[int64]string // executions asked of workers → input
	queue    []string         // inputs waiting for a worker
	nextID   int64
	// recorded are the failures' inputs the directory held when the build was
	// ready (syncLoad): what ReplayOnly replays.
	recorded []string
	// saidUnreadable: the log said that files this process cannot read are skipped.
	saidUnreadable bool
}

func (s *Session) syncDir(kind string, name string) string {
	return filepath.Join(s.e.opts.Sync, name, kind, filepath.FromSlash(s.target.Package), s.target.Name)
}

// syncPublish writes a corpus entry into this process's subdirectory, unless it
// came from the directory.
func (s *Session) syncPublish(input string) {
	if !s.syncWrites() {
		return
	}
	s.mu.Lock()
	from := s.sync.received[input]
	s.mu.Unlock()
	if from {
		return
	}
	path, err := WriteCorpusFile(s.syncDir("corpus", s.e.syncName()), input)
	s.syncWrote(path, err)
}

// syncPublishFailure records a failure found here under its id (again when its
// minimized input replaces the first).
func (s *Session) syncPublishFailure(id, input string) {
	if !s.syncWrites() {
		return
	}
	path := filepath.Join(s.syncDir("failures", s.e.syncName()), id)
	s.syncWrote(path, WriteFileAtomic(path, input))
}

// syncWrites reports whether the session writes into the sync directory: not
// with ReplayOnly, which only reads it.
func (s *Session) syncWrites() bool {
	return s.e.opts.Sync != "" && !s.e.opts.ReplayOnly
}

// syncWrote marks a file this process wrote as seen, or logs why it could not.
func (s *Session) syncWrote(path string, err error) {
	if err != nil {
		fmt.Fprintf(s.e.opts.Log, "fuzzls: %s: sync: %v\n", s.target.Name, err)
		return
	}
	s.mu.Lock()
	s.sync.seen[path] = true
	s.mu.Unlock()
}

// syncLoad reads all the directory holds for the target, with its argument
// types, when a build is ready (see prepare): the corpus entries and the
// failures' inputs, which it keeps as recorded. All are marked received.
func (s *Session) syncLoad(types []string) (corpus, failures []string) {
	if s.e.opts.Sync == "" {
		return nil, nil
	}
	corpus, failures = s.syncRead(types)
	s.mu.Lock()
	s.sync.recorded = append(s.sync.recorded, failures...)
	for _, in := range corpus {
		s.sync.received[in] = true
	}
	for _, in := range failures {
		s.sync.received[in] = true
	}
	s.mu.Unlock()
	return corpus, failures
}

// syncPull reads what was written since the last read and returns the inputs
// to run: failures' inputs and corpus entries, those not in the corpus (or
// failed here) already.
func (s *Session) syncPull() []string {
	s.mu.Lock()
	types := s.types
	s.mu.Unlock()
	corpus, failures := s.syncRead(types)
	var out []string
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, in := range append(failures, corpus...) {
		if !s.corpus.has(in) && !s.sync.received[in] {
			s.sync.received[in] = true
			out = append(out, in)
		}
	}
	return out
}

// syncRead reads the files of every subdirectory not seen before, for the
// target: the corpus entries and the failures' inputs with its types.
func (s *Session) syncRead(types []string) (corpus, failures []string) {
	names, err := os.ReadDir(s.e.opts.Sync)
	if err != nil {
		return nil, nil
	}
	for _, n := range names {
		if !n.IsDir() {
			continue
		}
		for _, f := range s.syncNew(s.syncDir("failures", n.Name())) {
			if in := entryOf(f.data, types); in != "" {
				failures = append(failures, in)
			}
		}
		for _, f := range s.syncNew(s.syncDir("corpus", n.Name())) {
			if in := entryOf(f.data, types); in != "" {
				corpus = append(corpus, in)
			}
		}
	}
	return corpus, failures
}

// replayRecorded runs the failures the sync directory held (ReplayOnly) one
// at a time on a worker of its own: each that fails here is a failure found
// here, reported, minimized and counted.
func (s *Session) replayRecorded() {
	s.mu.Lock()
	inputs := slices.Compact(slices.Sorted(slices.Values(s.sync.recorded)))
	s.mu.Unlock()
	s.replay(inputs, "a recorded failure")
}

// RecordedFailures lists the failure files the sync directory holds for t.
func (e *Engine) RecordedFailures(t Target) []string {
	if e.opts.Sync == "" {
		return nil
	}
	var out []string
	names, _ := os.ReadDir(e.opts.Sync)
	for _, n := range names {
		dir := filepath.Join(e.opts.Sync, n.Name(), "failures", filepath.FromSlash(t.Package), t.Name)
		files, _ := os.ReadDir(dir)
		for _, f := range files {
			if !f.IsDir() && !strings.HasSuffix(f.Name(), partialSuffix) {
				out = append(out, filepath.Join(dir, f.Name()))
			}
		}
	}
	return out
}

// syncFile is a file of the sync directory, read.
type syncFile struct {
	path string
	data []byte
}

// syncNew reads the whole files of dir not taken before. A file this process
// cannot read (another user's, written before files were made readable) is
// tried again at each read, and said once: its owner may still make it readable.
func (s *Session) syncNew(dir string) []syncFile {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []syncFile
	for _, e := range ents {
		if e.IsDir() || strings.HasSuffix(e.Name(), partialSuffix) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		s.mu.Lock()
		seen := s.sync.seen[path]
		s.mu.Unlock()
		if seen {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.mu.Lock()
			said := s.sync.saidUnreadable
			s.sync.saidUnreadable = true
			s.mu.Unlock()
			if !said {
				fmt.Fprintf(s.e.opts.Log, "fuzzls: %s: sync: skipping files this process cannot read (%v); trying them again at each read of the directory\n", s.target.Name, err)
			}
			continue
		}
		s.mu.Lock()
		s.sync.seen[path] = true
		s.mu.Unlock()
		if err == nil {
			out = append(out, syncFile{path: path, data: data})
		}
	}
	return out
}

// entryOf is a `go test fuzz v1` file's text when it has the target's types,
// else "".
func entryOf(data []byte, types []string) string {
	vals, err := fuzzrt.Unmarshal(data)
	if err != nil || !sameTypes(vals, types) {
		return ""
	}
	return string(data)
}

// syncRun hands the inputs to the workers, one execution each, spread over
// them; the results come back as messages (syncResult).
func (s *Session) syncRun(inputs []string) {
	ws := s.liveWorkers()
	s.mu.Lock()
	inputs = append(s.sync.queue, inputs...)
	s.sync.queue = nil
	if len(ws) == 0 {
		s.sync.queue = inputs
	}
	s.mu.Unlock()
	if len(ws) == 0 {
		return
	}
	for i, in := range inputs {
		s.mu.Lock()
		s.sync.nextID++
		id := -s.sync.nextID // negative: no replayer uses those
		s.sync.pending[id] = in
		s.mu.Unlock()
		// Posted, not sent: the coordinator never waits on a worker's pipe.
		ws[i%len(ws)].post(&fuzzrt.Request{Exec: &fuzzrt.ExecArgs{ID: id, Input: in}})
	}
}

// syncRequeue puts the executions asked of workers that are gone (a rebuild
// replaced them) back in the queue, so no entry taken up is lost.
func (s *Session) syncRequeue() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, in := range s.sync.pending {
		s.sync.queue = append(s.sync.queue, in)
		delete(s.sync.pending, id)
	}
}

// syncResult takes the result of an execution syncRun asked for: a failure, or
// coverage the corpus may lack. It reports whether the session should end (a new
// failure without KeepFuzzing).
func (s *Session) syncResult(r *fuzzrt.ExecResult) bool {
	s.mu.Lock()
	in, ok := s.sync.pending[r.ID]
	delete(s.sync.pending, r.ID)
	s.mu.Unlock()
	if !ok {
		return false
	}
	if strings.HasPrefix(r.Output, "fuzzls: bad input") {
		return false
	}
	if r.Output != "" {
		f := failure.ClassifyOutput(r.Output, s.userFrames(), s.target.Dir)
		return s.onFailure(f, in) && !s.e.opts.KeepFuzzing
	}
	s.onNew(nil, &fuzzrt.Entry{Input: in, Cov: r.Cov})
	return false
}
