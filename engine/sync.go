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
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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

// syncState is a session's view of the sync directory: what it took of it
// and wrote into it, and the executions of its entries asked of the workers.
// Its lock is a leaf: no method calls out while holding it (files are read and
// written outside it).
type syncState struct {
	dir    string // the sync directory (Options.Sync); "": none
	name   string // this process's subdirectory
	writes bool   // the session writes into it: not with ReplayOnly
	target Target
	log    io.Writer

	mu       sync.Mutex
	seen     map[string]bool  // files taken already: read, or written by this process (not those it could not read)
	received map[string]bool  // inputs that came from the directory: not published again
	pending  map[int64]string // executions asked of workers → input
	queue    []string         // inputs waiting for a worker
	nextID   int64
	// recorded are the failures' inputs the directory held when the build was
	// ready (load): what ReplayOnly replays.
	recorded []string
	// saidUnreadable: the log said that files this process cannot read are skipped.
	saidUnreadable bool
}

func newSyncState(e *Engine, t Target) *syncState {
	st := &syncState{dir: e.opts.Sync, writes: e.opts.Sync != "" && !e.opts.ReplayOnly, target: t, log: e.opts.Log,
		seen: map[string]bool{}, received: map[string]bool{}, pending: map[int64]string{}}
	if st.dir != "" {
		st.name = e.syncName()
	}
	return st
}

// subdir is where kind ("corpus", "failures") of the target is in the
// subdirectory of the process name.
func (st *syncState) subdir(kind, name string) string {
	return filepath.Join(st.dir, name, kind, filepath.FromSlash(st.target.Package), st.target.Name)
}

// publish writes a corpus entry into this process's subdirectory, unless it
// came from the directory.
func (st *syncState) publish(input string) {
	if !st.writes {
		return
	}
	st.mu.Lock()
	from := st.received[input]
	st.mu.Unlock()
	if from {
		return
	}
	path, err := WriteCorpusFile(st.subdir("corpus", st.name), input)
	st.wrote(path, err)
}

// publishFailure records a failure found here under its id (again when its
// minimized input replaces the first).
func (st *syncState) publishFailure(id, input string) {
	if !st.writes {
		return
	}
	path := filepath.Join(st.subdir("failures", st.name), id)
	st.wrote(path, WriteFileAtomic(path, input))
}

// wrote marks a file this process wrote as seen, or logs why it could not.
func (st *syncState) wrote(path string, err error) {
	if err != nil {
		fmt.Fprintf(st.log, "fuzzls: %s: sync: %v\n", st.target.Name, err)
		return
	}
	st.mu.Lock()
	st.seen[path] = true
	st.mu.Unlock()
}

// load reads all the directory holds for the target, with its argument types,
// when a build is ready (see prepare): the corpus entries and the failures'
// inputs, which it keeps as recorded. All are marked received.
func (st *syncState) load(types []string) (corpus, failures []string) {
	if st.dir == "" {
		return nil, nil
	}
	corpus, failures = st.read(types)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.recorded = append(st.recorded, failures...)
	for _, in := range corpus {
		st.received[in] = true
	}
	for _, in := range failures {
		st.received[in] = true
	}
	return corpus, failures
}

// pull reads what was written since the last read and returns the inputs to
// run: failures' inputs and corpus entries, not those known (in the corpus, or
// failed here) nor those taken before.
func (st *syncState) pull(types []string, known func(input string) bool) []string {
	corpus, failures := st.read(types)
	var fresh []string
	for _, in := range append(failures, corpus...) {
		if !known(in) {
			fresh = append(fresh, in)
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []string
	for _, in := range fresh {
		if !st.received[in] {
			st.received[in] = true
			out = append(out, in)
		}
	}
	return out
}

// read reads the files of every subdirectory not seen before, for the
// target: the corpus entries and the failures' inputs with its types.
func (st *syncState) read(types []string) (corpus, failures []string) {
	names, err := os.ReadDir(st.dir)
	if err != nil {
		return nil, nil
	}
	for _, n := range names {
		if !n.IsDir() {
			continue
		}
		for _, f := range st.newFiles(st.subdir("failures", n.Name())) {
			if in := entryOf(f.data, types); in != "" {
				failures = append(failures, in)
			}
		}
		for _, f := range st.newFiles(st.subdir("corpus", n.Name())) {
			if in := entryOf(f.data, types); in != "" {
				corpus = append(corpus, in)
			}
		}
	}
	return corpus, failures
}

// recordedInputs are the failures' inputs the directory held (ReplayOnly),
// once each, sorted.
func (st *syncState) recordedInputs() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return slices.Compact(slices.Sorted(slices.Values(st.recorded)))
}

// syncFile is a file of the sync directory, read.
type syncFile struct {
	path string
	data []byte
}

// newFiles reads the whole files of dir not taken before. A file this process
// cannot read (another user's, written before files were made readable) is
// tried again at each read, and said once: its owner may still make it readable.
func (st *syncState) newFiles(dir string) []syncFile {
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
		st.mu.Lock()
		seen := st.seen[path]
		st.mu.Unlock()
		if seen {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			st.mu.Lock()
			said := st.saidUnreadable
			st.saidUnreadable = true
			st.mu.Unlock()
			if !said {
				fmt.Fprintf(st.log, "fuzzls: %s: sync: skipping files this process cannot read (%v); trying them again at each read of the directory\n", st.target.Name, err)
			}
			continue
		}
		st.mu.Lock()
		st.seen[path] = true
		st.mu.Unlock()
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

// schedule assigns inputs, with those queued before, to workers executions
// (their ids, negative: no replayer uses those), recorded as pending; with no
// worker they all wait in the queue. It returns the ids, one an input.
func (st *syncState) schedule(inputs []string, workers int) (ids []int64, all []string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	all = append(st.queue, inputs...)
	st.queue = nil
	if workers == 0 {
		st.queue = all
		return nil, nil
	}
	for _, in := range all {
		st.nextID++
		id := -st.nextID
		st.pending[id] = in
		ids = append(ids, id)
	}
	return ids, all
}

// requeue puts the executions asked of workers that are gone (a rebuild
// replaced them) back in the queue, so no entry taken up is lost.
func (st *syncState) requeue() {
	st.mu.Lock()
	defer st.mu.Unlock()
	for id, in := range st.pending {
		st.queue = append(st.queue, in)
		delete(st.pending, id)
	}
}

// done takes the execution id off the pending ones and returns its input;
// false when it is none of the sync directory's.
func (st *syncState) done(id int64) (string, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	in, ok := st.pending[id]
	delete(st.pending, id)
	return in, ok
}

// syncPull is syncState.pull with the build's types, the corpus's inputs known.
func (p *fuzzPhase) syncPull() []string {
	s := p.s
	s.mu.Lock()
	types := s.types
	s.mu.Unlock()
	return s.sync.pull(types, s.corpus.has)
}

// syncRun hands the inputs to the workers, one execution each, spread over
// them; the results come back as messages (syncResult).
func (p *fuzzPhase) syncRun(inputs []string) {
	s := p.s
	ws := s.liveWorkers()
	ids, all := s.sync.schedule(inputs, len(ws))
	for i, in := range all {
		// Posted, not sent: the coordinator never waits on a worker's pipe.
		ws[i%len(ws)].post(&fuzzrt.Request{Exec: &fuzzrt.ExecArgs{ID: ids[i], Input: in}})
	}
}

// syncResult takes the result of an execution syncRun asked for: a failure, or
// coverage the corpus may lack. It reports whether the session should end (a new
// failure without KeepFuzzing).
func (p *fuzzPhase) syncResult(r *fuzzrt.ExecResult) bool {
	s := p.s
	in, ok := s.sync.done(r.ID)
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
	p.onNew(nil, &fuzzrt.Entry{Input: in, Cov: r.Cov})
	return false
}

// replayRecorded runs the failures the sync directory held (ReplayOnly) one
// at a time on a worker of its own: each that fails here is a failure found
// here, reported, minimized and counted.
func (s *Session) replayRecorded() {
	s.replay(s.sync.recordedInputs(), "a recorded failure")
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
