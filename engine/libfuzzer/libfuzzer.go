// Package libfuzzer is the way to and back from OSS-Fuzz and ClusterFuzzLite,
// which build native Go targets with go-118-fuzz-build and run them under
// libFuzzer: Export writes what such a project ships beside a fuzzer (a seed
// corpus, a dictionary, options), Import turns their crash files and corpora
// back into `go test fuzz v1` seeds. Both speak the harness's byte layout
// (engine/gofuzzheaders). `fuzzls export` and `fuzzls import` call them.
package libfuzzer

import (
	"archive/zip"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"fuzzls.dev/fuzzls/engine"
	"fuzzls.dev/fuzzls/engine/gofuzzheaders"
)

// Exported says what Export wrote.
type Exported struct {
	Zip, Dict, Options string // paths
	Seeds, Tokens      int
}

// Export writes, into dir, for the target p (engine.Engine.Prepare),
// name_seed_corpus.zip (every seed: f.Add values, testdata/fuzz, and the
// generated corpus, each in the harness's layout, named by its SHA-1 as
// libFuzzer names them), name.dict (the target's dictionaries and the code's
// literals) and name.options: the hang limit (timeout; 0: the adaptive limit's
// ceiling, 10 s) and the memory limit (rssLimitMB; 0: none).
func Export(p *engine.Prepared, dir, name string, timeout time.Duration, rssLimitMB int) (*Exported, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	t := p.Target
	out := &Exported{Zip: filepath.Join(dir, name+"_seed_corpus.zip"), Dict: filepath.Join(dir, name+".dict"), Options: filepath.Join(dir, name+".options")}
	inputs, dict := p.Inputs, p.Dict

	var zb strings.Builder
	zw := zip.NewWriter(&zb)
	seen := map[string]bool{}
	for _, in := range inputs {
		file, data, err := gofuzzheaders.File(in)
		if err != nil || seen[file] {
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
	if err := engine.WriteFileAtomic(out.Zip, zb.String()); err != nil {
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
	if err := engine.WriteFileAtomic(out.Dict, db.String()); err != nil {
		return nil, err
	}

	seconds := 10 // the adaptive hang limit's ceiling
	if timeout > 0 {
		seconds = max(1, int(timeout.Seconds()+0.999))
	}
	opts := fmt.Sprintf("[libfuzzer]\ndict = %s.dict\ntimeout = %d\n", name, seconds)
	if rssLimitMB > 0 {
		opts += fmt.Sprintf("rss_limit_mb = %d\n", rssLimitMB)
	}
	if err := engine.WriteFileAtomic(out.Options, opts); err != nil {
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

// Imported is one file Import read.
type Imported struct {
	From string // the file read
	Seed string // the seed written, testdata/fuzz/FuzzXxx/<name>; "" when Err
	Err  error  // the file does not decode to the target's arguments
}

// artifactName: the files libFuzzer writes for a failure.
var artifactName = regexp.MustCompile(`^(crash|leak|timeout|oom|slow-unit)-`)

// Import reads libFuzzer inputs of the harness of the target p
// (engine.Engine.Prepare) — crash files, a directory of artifacts (only its
// crash-, leak-, timeout-, oom- and slow-unit- files), or a corpus directory
// (every file) — and writes each as a seed in testdata/fuzz/FuzzXxx/, in `go
// test fuzz v1`, so that `go test -run` replays it. This writes into the user's
// tree, on the user's command (fuzzls import).
func Import(p *engine.Prepared, paths []string) ([]Imported, error) {
	t, types := p.Target, p.Types
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
			var in string
			if in, err = gofuzzheaders.Input(data, types); err == nil {
				im.Seed, err = engine.WriteCorpusFile(seeds, in)
			}
		}
		im.Err = err
		out = append(out, im)
	}
	return out, nil
}
