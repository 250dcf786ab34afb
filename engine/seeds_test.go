package engine

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/internal/testws"
	"fuzzls.dev/fuzzls/protocol"
)

// bigSeeds is testdata/bigseeds.txtar: targets with seeds past every bound a
// message once had (its comment says which).
const bigSeeds = "testdata/bigseeds.txtar"

// TestBigSeeds: a seed set bigger than any fixed message bound is streamed to the
// coordinator and to each worker; fuzzing starts, and the seeds are counted in a
// SeedsEvent.
func TestBigSeeds(t *testing.T) {
	dir := testws.Txtar(t, bigSeeds)
	file := filepath.Join(dir, "testdata", "fuzz", "FuzzBig", "big")
	os.MkdirAll(filepath.Dir(file), 0o755)
	if err := os.WriteFile(file, fuzzrt.Marshal([]any{bytes.Repeat([]byte{1, 0}, 1<<20)}), 0o644); err != nil {
		t.Fatal(err)
	}
	s, rec := fuzzOnce(t, dir, "FuzzBig", Options{Parallel: 2, FuzzExecs: 2000})
	if st := s.Stats(); st.Execs < 2000 || st.Corpus < 10 {
		t.Errorf("stats %+v: want 2000 execs from a corpus of the 10 seeds at least", st)
	}
	var done *SeedsEvent
	for _, ev := range rec.events {
		if se, ok := ev.(*SeedsEvent); ok && se.Done {
			done = se
		}
	}
	if done == nil || done.Count != 10 || done.Total != 10 || done.Bytes < 40<<20 {
		t.Errorf("seeds event %+v, want 10 of 10 seeds, over 40 MB", done)
	}
}

// TestManySeeds: thousands of seeds stay in the corpus while the workers run them:
// the corpus minimization drops only entries known to add nothing.
func TestManySeeds(t *testing.T) {
	dir := testws.Txtar(t, bigSeeds)
	s, _ := fuzzOnce(t, dir, "FuzzMany", Options{Parallel: 2, FuzzTime: 3 * time.Second})
	if st := s.Stats(); st.Corpus < 2000 {
		t.Errorf("stats %+v: the corpus lost seeds", st)
	}
}

// TestLargeInputs (issue 24, item 2): the mutations of a 150,000-byte seed keep
// its size, so a failure on inputs of 100,000 bytes or more is found.
func TestLargeInputs(t *testing.T) {
	dir := testws.Txtar(t, bigSeeds)
	s, _ := fuzzOnce(t, dir, "FuzzLarge", Options{Parallel: 1, FuzzTime: 60 * time.Second, MinimizeTime: 5 * time.Second})
	cs := s.Crashes()
	if len(cs) != 1 || cs[0].Kind != protocol.KindPanic || cs[0].Line != markerLine(t, filepath.Join(dir, "big_test.go"), "MARK:large") {
		t.Fatalf("crashes %+v, want the panic on a large input", cs)
	}
	vals, err := fuzzrt.Unmarshal([]byte(cs[0].Input))
	if err != nil || len(vals[0].([]byte)) < 100000 {
		t.Errorf("failing input (%v) is not large", err)
	}
}

// TestBigInputInSharedMemory: an input past the shared file's first size is stored
// whole (the worker grows the file) and read back whole by the coordinator, whose
// mapping is smaller.
func TestBigInputInSharedMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mem")
	coord, err := fuzzrt.CreateMem(path)
	if err != nil {
		t.Fatal(err)
	}
	defer coord.Close()
	worker, err := fuzzrt.OpenMem(path)
	if err != nil {
		t.Fatal(err)
	}
	defer worker.Close()
	for _, n := range []int{100, 6 << 20, 1000, 20 << 20} {
		in := bytes.Repeat([]byte{byte(n)}, n)
		worker.SetInput(in)
		got, complete := coord.Input()
		if !complete || !bytes.Equal(got, in) {
			t.Errorf("input of %d bytes read back as %d bytes (complete %v)", n, len(got), complete)
		}
	}
}

// malformed is a corpus file of each malformed kind (and a directory, which go test
// skips), by the target whose testdata/fuzz directory holds it.
var malformed = map[string]string{
	"FuzzHeader":  "not a corpus file\n[]byte(\"a\")\n",
	"FuzzVersion": "go test fuzz v2\n[]byte(\"a\")\n",
	"FuzzArity":   "go test fuzz v1\n[]byte(\"a\")\n[]byte(\"b\")\n",
	"FuzzType":    "go test fuzz v1\nstring(\"a\")\n",
	"FuzzValue":   "go test fuzz v1\n[]byte(\"a\n",
	"FuzzGarbage": "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10",
	"FuzzBinary":  "\x00\xff\xfe\x01binary",
	"FuzzEmpty":   "",
	"FuzzDir":     "", // a directory named like a corpus file
	"FuzzNotDir":  "", // testdata/fuzz/FuzzNotDir is a file
}

func malformedWorkspace(t *testing.T) string {
	files := map[string]string{"go.mod": "module example.com/mal\n\ngo 1.22\n"}
	src := "package mal\n\nimport \"testing\"\n\nfunc fz(f *testing.F) { f.Fuzz(func(t *testing.T, b []byte) {}) }\n"
	for name, text := range malformed {
		src += "\nfunc " + name + "(f *testing.F) { fz(f) }\n"
		switch name {
		case "FuzzDir":
			files["testdata/fuzz/FuzzDir/0123456789abcdef/a"] = "go test fuzz v1\n[]byte(\"a\")\n"
		case "FuzzNotDir":
			files["testdata/fuzz/FuzzNotDir"] = "x"
		default:
			files["testdata/fuzz/"+name+"/0123456789abcdef"] = text
		}
	}
	files["mal_test.go"] = src
	return testws.Write(t, files)
}

// TestMalformedCorpusFiles: a malformed file in testdata/fuzz/FuzzXxx gives go
// test's verdict: go test fails with a message naming the file, and fuzzls stops
// with the same message; where go test fuzzes (a directory, skipped), fuzzls does.
func TestMalformedCorpusFiles(t *testing.T) {
	dir := malformedWorkspace(t)
	e := New(Options{CacheDir: t.TempDir(), Parallel: 1, FuzzExecs: 200}, nil)
	t.Cleanup(e.Close)
	targets, err := e.Targets(t.Context(), dir, ".")
	if err != nil {
		t.Fatal(err)
	}
	// testing's message: "    mal_test.go:5: <error>" up to the line "FAIL".
	goMsg := regexp.MustCompile(`(?s)\n    mal_test\.go:\d+: (.*?)\nFAIL\n`)
	for _, tg := range targets {
		t.Run(tg.Name, func(t *testing.T) {
			cmd := exec.Command("go", "test", "-run=^$", "-fuzz=^"+tg.Name+"$", "-fuzztime=1x", ".")
			cmd.Dir = dir
			out, goErr := cmd.CombinedOutput()
			fuzzErr := e.Start(tg).Wait()
			if (goErr != nil) != (fuzzErr != nil) {
				t.Fatalf("go test: %v, fuzzls: %v\ngo test said:\n%s", goErr, fuzzErr, out)
			}
			if goErr == nil {
				return
			}
			m := goMsg.FindSubmatch(out)
			if m == nil {
				t.Fatalf("no message in go test's output:\n%s", out)
			}
			var be *BuildError
			if !errors.As(fuzzErr, &be) || !strings.Contains(be.Output, string(m[1])) {
				t.Errorf("fuzzls said:\n%v\nwant go test's message:\n%s", fuzzErr, m[1])
			}
		})
	}
}

// TestMalformedCacheCorpus: a malformed entry of fuzzls's own corpus in the cache,
// of any kind, is skipped and logged; fuzzing goes on from the others.
func TestMalformedCacheCorpus(t *testing.T) {
	dir := malformedWorkspace(t)
	cache := t.TempDir()
	target := Target{Package: "example.com/mal", Name: "FuzzDir"}
	corpus := corpusDir(cache, target)
	var bad []string
	for name, text := range malformed {
		path := filepath.Join(corpus, strings.ToLower(name))
		bad = append(bad, path)
		if name == "FuzzDir" || name == "FuzzNotDir" {
			os.MkdirAll(path, 0o755)
			continue
		}
		os.MkdirAll(corpus, 0o755)
		os.WriteFile(path, []byte(text), 0o644)
	}
	good := fuzzrt.Marshal([]any{[]byte("good")})
	os.WriteFile(filepath.Join(corpus, fuzzrt.FileName(good)), good, 0o644)
	var log testws.Buffer
	s, _ := fuzzOnce(t, dir, "FuzzDir", Options{CacheDir: cache, Parallel: 1, FuzzExecs: 200, Log: &log})
	if st := s.Stats(); st.Execs < 200 {
		t.Errorf("stats %+v: fuzzing did not run", st)
	}
	for _, path := range bad {
		if !strings.Contains(log.String(), "skipping corpus file "+path+": ") {
			t.Errorf("%s was not logged as skipped; log:\n%s", path, log.String())
		}
	}
	if !s.corpus.has(string(good)) {
		t.Errorf("the good entry is not in the corpus")
	}
}
