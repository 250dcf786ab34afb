package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
)

// memProfileEnv names the file serve writes a heap profile to when -memprofile
// is not given: an editor starts the daemon, and its environment is what a
// user can set without changing the editor's configuration.
const memProfileEnv = "FUZZLS_MEMPROFILE"

// heapProfiler writes the daemon's heap profile to a file on request (a
// signal, on Unix) and when serve returns: the daemon listens on no port, so
// net/http/pprof is not an option.
type heapProfiler struct {
	path string
	log  io.Writer
}

// write replaces the file with the heap as of a collection made now (a heap
// profile shows the last collection's live objects), through a temporary file
// so that a reader never sees half a profile.
func (h *heapProfiler) write(why string) {
	runtime.GC()
	tmp, err := os.CreateTemp(filepath.Dir(h.path), ".fuzzls-heap-*")
	if err == nil {
		err = pprof.Lookup("heap").WriteTo(tmp, 0)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), h.path)
		}
		if err != nil {
			os.Remove(tmp.Name())
		}
	}
	if err != nil {
		fmt.Fprintf(h.log, "fuzzls serve: heap profile: %v\n", err)
		return
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(h.log, "fuzzls serve: heap profile (%s) written to %s: heap in use %.1f MB after a collection\n", why, h.path, float64(ms.HeapInuse)/(1<<20))
}

// onSignal writes the profile on every profileSignal until the returned
// function is called.
func (h *heapProfiler) onSignal() (stop func()) {
	if profileSignal == nil {
		return func() {}
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, profileSignal)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-c:
				h.write(profileSignal.String())
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(c)
		close(done)
	}
}
