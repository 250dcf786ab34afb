package fuzzrt

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"
	_ "unsafe" // go:linkname
)

// This file implements the method set of testing's unexported testDeps interface
// ($GOROOT/src/testing/testing.go). testing.MainStart is outside the Go 1 promise,
// so no version tag decides whether it fits: instrument.CheckToolchain compares this
// file's methods and corpusEntry with the user's GOROOT before every build.

// corpusEntry must be an alias (=) of the same unnamed struct as testing's.
type corpusEntry = struct {
	Parent     string
	Path       string
	Data       []byte
	Values     []any
	Generation int
	IsSeed     bool
}

// deps connects testing to the runtime state of this process.
type deps struct{ rt *runtimeState }

func (deps) ImportPath() string { return "" }
func (deps) ModulePath() string { return "" }

// MatchString matches testing's -test.run and -test.fuzz patterns, which only the
// coordinator gives (engine/workerproc.go: ^$ and ^FuzzX$), so that the runtime
// needs no regexp package: a pattern is alternatives (|) of literal text, each
// anchored at its start (^) or end ($) or not; any other character with a meaning
// in a regular expression is an error.
func (deps) MatchString(pat, str string) (bool, error) {
	matched := false
	for alt := range strings.SplitSeq(pat, "|") {
		lit, start := strings.CutPrefix(alt, "^")
		lit, end := strings.CutSuffix(lit, "$")
		if strings.ContainsAny(lit, `\.+*?()[]{}^$`) {
			return false, fmt.Errorf("fuzzls matches only literal patterns, anchored or not, and alternatives of them: %q", pat)
		}
		switch {
		case start && end:
			matched = matched || str == lit
		case start:
			matched = matched || strings.HasPrefix(str, lit)
		case end:
			matched = matched || strings.HasSuffix(str, lit)
		default:
			matched = matched || strings.Contains(str, lit)
		}
	}
	return matched, nil
}

// SetPanicOnExit0 is how testing, given -test.paniconexit0 (go test always gives
// it), makes os.Exit(0) during a test panic with "unexpected call to os.Exit(0)
// during test": it sets os's flag in internal/testlog, which testing's own deps
// set and only the standard library may import, so it is reached by its symbol.
func (deps) SetPanicOnExit0(v bool) { setPanicOnExit0(v) }

//go:linkname setPanicOnExit0 internal/testlog.SetPanicOnExit0
func setPanicOnExit0(bool)

func (deps) StartCPUProfile(io.Writer) error             { return nil }
func (deps) StopCPUProfile()                             {}
func (deps) StartTestLog(io.Writer)                      {}
func (deps) StopTestLog() error                          { return nil }
func (deps) WriteProfileTo(string, io.Writer, int) error { return nil }

// CoordinateFuzzing is reached in ModeSeeds: testing hands over the seed corpus
// (f.Add values, and testdata files read by ReadCorpus) and the argument types. They
// go to the coordinator one a message, after a Seeds message that says how many.
func (d deps) CoordinateFuzzing(_ time.Duration, _ int64, _ time.Duration, _ int64, _ int, seeds []corpusEntry, types []reflect.Type, _, _ string) error {
	head := &Seeds{Count: len(seeds), Layout: adaptedLayout}
	for _, t := range types {
		head.Types = append(head.Types, TypeName(t))
	}
	if err := d.rt.send(&Message{Seeds: head}); err != nil {
		return err
	}
	for _, s := range seeds {
		var input []byte
		switch {
		case s.Values != nil:
			if n := ValuesSize(s.Values); n > MaxInput {
				return &SizeError{Name: s.Path, Size: n}
			}
			input = Marshal(s.Values)
		case s.Data != nil:
			input = s.Data
		default:
			data, err := os.ReadFile(s.Path)
			if err != nil {
				return err
			}
			input = data
		}
		if err := d.rt.send(&Message{Seed: &Seed{Input: string(input), Path: s.Path}}); err != nil {
			return err
		}
	}
	return nil
}

// SizeError is a seed larger than MaxInput.
type SizeError struct {
	Name string // testing's name of the seed: "seed#N" for f.Add, else the file
	Size int    // the size of its values
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("seed %s holds %s: fuzzls runs inputs of up to %s", e.Name, ByteSize(int64(e.Size)), ByteSize(MaxInput))
}

// ByteSize spells a size in bytes for people: 812 B, 3.4 kB, 56.2 MB, 1.1 GB.
func ByteSize(n int64) string {
	if n < 1000 {
		return fmt.Sprintf("%d B", n)
	}
	const units = "kMGT"
	f, i := float64(n)/1000, 0
	for f >= 1000 && i < len(units)-1 {
		f /= 1000
		i++
	}
	return fmt.Sprintf("%.1f %cB", f, units[i])
}

// RunFuzzWorker is reached in ModeWorker with the function that runs one input.
func (d deps) RunFuzzWorker(fn func(corpusEntry) error) error {
	return d.rt.work(fn)
}

// ReadCorpus reads a seed corpus directory as testing's own deps do
// (internal/fuzz.ReadCorpus), with its messages: a missing directory is empty,
// subdirectories are skipped, and each malformed file is an error naming it.
func (deps) ReadCorpus(dir string, types []reflect.Type) ([]corpusEntry, error) {
	files, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("reading seed corpus from testdata: %v", err)
	}
	var corpus []corpusEntry
	var errs []error
	for _, f := range files {
		if f.IsDir() {
			continue
		}
		path := filepath.Join(dir, f.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("failed to read corpus file: %v", err)
		}
		vals, err := Unmarshal(data)
		if err != nil {
			err = fmt.Errorf("unmarshal: %v", err)
		} else if err = CheckTypes(vals, types); err == nil && ValuesSize(vals) > MaxInput {
			err = &SizeError{Name: path, Size: ValuesSize(vals)}
		}
		if err != nil {
			errs = append(errs, &CorpusFileError{Path: path, Err: err})
			continue
		}
		corpus = append(corpus, corpusEntry{Path: path, Data: data, Values: vals})
	}
	return corpus, errors.Join(errs...)
}

func (deps) CheckCorpus(vals []any, types []reflect.Type) error { return CheckTypes(vals, types) }

func (d deps) ResetCoverage()  { d.rt.resetCounters() }
func (deps) SnapshotCoverage() {}
func (deps) InitRuntimeCoverage() (string, func(string, string) (string, error), func() float64) {
	return "", nil, nil
}

// CorpusFileError is a malformed corpus file.
type CorpusFileError struct {
	Path string
	Err  error
}

func (e *CorpusFileError) Error() string { return strconv.Quote(e.Path) + ": " + e.Err.Error() }
func (e *CorpusFileError) Unwrap() error { return e.Err }
