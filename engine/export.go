package engine

// The way to and back from OSS-Fuzz and ClusterFuzzLite, which build native Go
// targets with go-118-fuzz-build and run them under libFuzzer: ExportLibFuzzer
// writes what such a project ships beside a fuzzer (a seed corpus, a dictionary,
// options), ImportLibFuzzer turns their crash files and corpora back into
// `go test fuzz v1` seeds. Both speak the harness's byte layout
// (gofuzzheaders.go).

import (
	"archive/zip"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
)

// Exported says what ExportLibFuzzer wrote.
type Exported struct {
	Zip, Dict, Options string // paths
	Seeds, Tokens      int
}

// ExportLibFuzzer builds t and writes, into dir, name_seed_corpus.zip (every
// seed: f.Add values, testdata/fuzz, and the generated corpus, each in the
// harness's layout, named by its SHA-1 as libFuzzer names them), name.dict (the
// target's dictionaries and the code's literals) and name.options (the memory
// and time limits).
func (e *Engine) ExportLibFuzzer(t Target, dir, name string) (*Exported, error) {
	s, err := e.prepared(t)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	out := &Exported{Zip: filepath.Join(dir, name+"_seed_corpus.zip"), Dict: filepath.Join(dir, name+".dict"), Options: filepath.Join(dir, name+".options")}
	s.mu.Lock()
	var inputs []string
	for _, en := range s.corpus {
		inputs = append(inputs, en.input)
	}
	dict := append([]string(nil), s.dict...)
	s.mu.Unlock()

	var zb strings.Builder
	zw := zip.NewWriter(&zb)
	seen := map[string]bool{}
	for _, in := range inputs {
		vals, err := fuzzrt.Unmarshal([]byte(in))
		if err != nil {
			continue
		}
		data := encodeGoFuzzHeaders(vals)
		sum := sha1.Sum(data)
		file := hex.EncodeToString(sum[:])
		if seen[file] {
			continue
		}
		seen[file] = true
		w, err := zw.Create(file)
		if err != nil {
			return nil, err
		}
		w.Write(data)
		out.Seeds++
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if err := writeAtomic(out.Zip, zb.String()); err != nil {
		return nil, err
	}

	var db strings.Builder
	fmt.Fprintf(&db, "# %s: fuzzls's dictionary (testdata/fuzz/%s.dict, -dict, literals of the code)\n", t.ID(), t.Name)
	toks := map[string]bool{}
	for _, tok := range dict {
		if tok != "" && !toks[tok] {
			toks[tok] = true
			db.WriteString(dictLine(tok))
			out.Tokens++
		}
	}
	if err := writeAtomic(out.Dict, db.String()); err != nil {
		return nil, err
	}

	timeout := 10 // seconds: the adaptive hang limit's ceiling
	if e.opts.Timeout > 0 {
		timeout = max(1, int(e.opts.Timeout.Seconds()+0.999))
	}
	opts := fmt.Sprintf("[libfuzzer]\ndict = %s.dict\ntimeout = %d\n", name, timeout)
	if e.opts.RSSLimitMB > 0 {
		opts += fmt.Sprintf("rss_limit_mb = %d\n", e.opts.RSSLimitMB)
	}
	if err := writeAtomic(out.Options, opts); err != nil {
		return nil, err
	}
	return out, nil
}

// dictLine is one token in the AFL/libFuzzer dictionary syntax.
func dictLine(tok string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(tok); i++ {
		switch c := tok[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c > 0x7e:
			fmt.Fprintf(&b, "\\x%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString("\"\n")
	return b.String()
}

// Imported is one file ImportLibFuzzer read.
type Imported struct {
	From string // the file read
	Seed string // the seed written, testdata/fuzz/FuzzXxx/<name>; "" when Err
	Err  error  // the file does not decode to the target's arguments
}

// artifactName: the files libFuzzer writes for a failure.
var artifactName = regexp.MustCompile(`^(crash|leak|timeout|oom|slow-unit)-`)

// ImportLibFuzzer reads libFuzzer inputs of t's harness — crash files, a
// directory of artifacts (only its crash-, leak-, timeout-, oom- and slow-unit-
// files), or a corpus directory (every file) — and writes each as a seed in
// testdata/fuzz/FuzzXxx/, in `go test fuzz v1`, so that `go test -run` replays
// it. This writes into the user's tree, on the user's command (fuzzls import).
func (e *Engine) ImportLibFuzzer(t Target, paths []string) ([]Imported, error) {
	s, err := e.prepared(t)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	types := s.types
	s.mu.Unlock()
	var files []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		var all, artifacts []string
		filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
				return nil
			}
			all = append(all, path)
			if artifactName.MatchString(d.Name()) {
				artifacts = append(artifacts, path)
			}
			return nil
		})
		if len(artifacts) > 0 {
			all = artifacts
		}
		sort.Strings(all)
		files = append(files, all...)
	}
	seeds := filepath.Join(t.Dir, "testdata", "fuzz", t.Name)
	var out []Imported
	for _, f := range files {
		im := Imported{From: f}
		data, err := os.ReadFile(f)
		if err == nil {
			var vals []any
			if vals, err = decodeGoFuzzHeaders(data, types); err == nil {
				im.Seed, err = writeEntry(seeds, string(fuzzrt.Marshal(vals)))
			}
		}
		im.Err = err
		out = append(out, im)
	}
	return out, nil
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
