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
// Every few seconds a fuzzing session reads the others' files it has not seen:
// corpus entries are run on its workers and join its corpus when they add
// coverage; failures make their id known, so that the same failure found here is
// not reported again (or, with SyncReplay, the daemon's, are run and reported as
// found here, so they reach the editor).

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

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
	seen     map[string]bool  // files read already (not those this process could not read)
	received map[string]bool  // inputs that came from others: not published again
	known    map[string]bool  // failure ids recorded in the directory
	pending  map[int64]string // executions asked of workers → input
	queue    []string         // inputs waiting for a worker
	nextID   int64
	// saidUnreadable: the log said that files this process cannot read are skipped.
	saidUnreadable bool
}

func (s *Session) syncDir(kind string, name string) string {
	return filepath.Join(s.e.opts.Sync, name, kind, filepath.FromSlash(s.target.Package), s.target.Name)
}

// syncPublish writes a corpus entry into this process's subdirectory, unless it
// came from another process.
func (s *Session) syncPublish(input string) {
	if s.e.opts.Sync == "" {
		return
	}
	s.mu.Lock()
	from := s.sync.received[input]
	s.mu.Unlock()
	if from {
		return
	}
	if _, err := writeEntry(s.syncDir("corpus", s.e.syncName()), input); err != nil {
		fmt.Fprintf(s.e.opts.Log, "fuzzls: %s: sync: %v\n", s.target.Name, err)
	}
}

// syncPublishFailure records a failure reported here under its id (again when
// its minimized input replaces the first).
func (s *Session) syncPublishFailure(id, input string) {
	if s.e.opts.Sync == "" {
		return
	}
	if err := writeAtomic(filepath.Join(s.syncDir("failures", s.e.syncName()), id), input); err != nil {
		fmt.Fprintf(s.e.opts.Log, "fuzzls: %s: sync: %v\n", s.target.Name, err)
	}
}

// syncRecorded reports whether some process recorded failure id in the sync
// directory: asked of the directory itself when a failure is found, so a
// failure recorded since the last read is not reported twice.
func (s *Session) syncRecorded(id string) bool {
	if s.e.opts.Sync == "" || s.e.opts.SyncReplay {
		return false
	}
	s.mu.Lock()
	known := s.sync.known[id]
	s.mu.Unlock()
	if known {
		return true
	}
	m, _ := filepath.Glob(filepath.Join(s.e.opts.Sync, "*", "failures", filepath.FromSlash(s.target.Package), s.target.Name, id))
	return len(m) > 0
}

// syncPull reads what the other processes wrote since the last call and returns
// the inputs to run: their corpus entries not in the corpus yet and, with
// SyncReplay, their failures' inputs.
func (s *Session) syncPull() []string {
	root := s.e.opts.Sync
	self := s.e.syncName()
	names, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	types := s.types
	s.mu.Unlock()
	var out []string
	for _, n := range names {
		if !n.IsDir() {
			continue
		}
		// Failures first: a failure and the entry it was found from may appear
		// in one read, and the failure must be known before the entry runs.
		for _, f := range s.syncNew(s.syncDir("failures", n.Name())) {
			s.mu.Lock()
			s.sync.known[filepath.Base(f.path)] = true
			s.mu.Unlock()
			if s.e.opts.SyncReplay && n.Name() != self {
				if in := entryOf(f.data, types); in != "" {
					out = append(out, in)
				}
			}
		}
		for _, f := range s.syncNew(s.syncDir("corpus", n.Name())) {
			in := entryOf(f.data, types)
			s.mu.Lock()
			if in != "" && !s.inCorpus[in] {
				s.sync.received[in] = true
				out = append(out, in)
			}
			s.mu.Unlock()
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
		f := classifyOutput(r.Output, s.userFrames(), s.target.Dir)
		return s.onFailure(f, in) && !s.e.opts.KeepFuzzing
	}
	s.onNew(nil, &fuzzrt.Entry{Input: in, Cov: r.Cov})
	return false
}
