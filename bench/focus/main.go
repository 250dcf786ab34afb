// Command focus measures change-directed fuzzing (issue 21): edits that add a new
// branch behind a comparison to the real parsers' code of bench/targets, and the
// time from the save (the rebuild) to the first input that reaches the new
// branch, with the same engine directed (the default) and undirected
// (Options.NoFocus), side by side in one run.
//
//	go run ./bench/focus [-warmup 30s] [-cap 120s] [-coverage 5m] [-parallel 1] [-edits re]
//	go run ./bench/focus -scenario gosentry-geth [-warmup 120s] [-cap 200s] [-trials 10]
//
// Fairness: per edit, one warm-up run of the unedited code fills a cache
// directory (its corpus); the two modes then run at the same time, so under the
// same machine load, each on its own copy of that cache and of the workspace:
// each fuzzes the unedited code for 3 s (the corpus is re-run), the edit is
// saved and the session rebuilt. The clock starts at the save and stops when the
// marked line's block is reached; the rebuild is in both. An edit not reached
// within -cap counts as -cap (the median is then a bound). With -coverage D both
// sessions go on until D after the save (D is then the cap) and the blocks each
// covered are printed side by side: the direction must not cost total coverage.
//
// -scenario gosentry-geth runs gosentry's change-directed benchmark on
// go-ethereum instead (geth.go): time to the first crash of a line made to crash
// by a save, in paired trials.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"fuzzls.dev/fuzzls/engine"
	"fuzzls.dev/fuzzls/internal/testws"
)

// edit replaces old by new in parsers.go; the line of new holding "MARK" is the
// branch to reach.
type edit struct {
	name, target, what string
	old, new           string
}

var edits = []edit{
	{"toml-level-keyword", "FuzzToml", "a new keyword in a custom scalar's text decoding (TOML)",
		"\tcase \"warn\":\n\t\t*l = 2\n",
		"\tcase \"warn\":\n\t\t*l = 2\n\tcase \"trace\":\n\t\t*l = 3 // MARK\n"},
	{"yaml-level-keyword", "FuzzYAML", "a new keyword in a custom scalar's text decoding (YAML)",
		"\tcase \"warn\":\n\t\t*l = 2\n",
		"\tcase \"warn\":\n\t\t*l = 2\n\tcase \"fatal\":\n\t\t*l = 4 // MARK\n"},
	{"toml-field-check", "FuzzToml", "a new field check after decoding (TOML)",
		"\t_ = md.Undecoded()\n",
		"\t_ = md.Undecoded()\n\tif c.Owner.Name == \"operator\" {\n\t\treturn errors.New(\"reserved owner\") // MARK\n\t}\n"},
	{"yaml-error-path", "FuzzYAML", "a new error path after decoding (YAML)",
		"\t_, err := yaml.Marshal(&c)\n",
		"\tif c.Title == \"forbidden\" {\n\t\treturn errors.New(\"forbidden title\") // MARK\n\t}\n\t_, err := yaml.Marshal(&c)\n"},
	{"html-doctype", "FuzzHTML", "a new check of the parsed document (HTML)",
		"\t_, err := html.Parse(strings.NewReader(s))\n\treturn err\n",
		"\tdoc, err := html.Parse(strings.NewReader(s))\n\tif err == nil && doc.FirstChild != nil && doc.FirstChild.Type == html.DoctypeNode && doc.FirstChild.Data == \"focus\" {\n\t\treturn errors.New(\"focus doctype\") // MARK\n\t}\n\treturn err\n"},
}

// configDocs are a seed per target that uses what the edits check: the level,
// the title and the owner's name of a Config, a doctype; none holds a value an
// edit's new branch wants. The targets' own seeds do not name those keys (the
// TOML one names the title and the owner's name), and a decoder matches a key to
// a field by reflection or a map, which gives a fuzzer no signal toward it: without
// such a seed neither mode ever reaches Level.UnmarshalText or decodes a title
// from YAML (in 30 s of warm-up no corpus entry did). A developer editing that
// code has such a document among their seeds.
var configDocs = map[string]string{
	"FuzzToml": "title = \"x\"\nlevel = \"info\"\n[owner]\nname = \"a\"\n",
	"FuzzYAML": "title: x\nlevel: info\nowner:\n  name: a\n",
	"FuzzHTML": "<!DOCTYPE html><title>x</title>",
}

func main() {
	warmup := flag.Duration("warmup", 30*time.Second, "fuzzing of the unedited code before each edit")
	limit := flag.Duration("cap", 120*time.Second, "give up on an edit after this long (counted as the cap)")
	coverage := flag.Duration("coverage", 0, "fuzz this long after each save and compare the blocks covered (the cap is then this)")
	parallel := flag.Int("parallel", 1, "workers per engine")
	only := flag.String("edits", "", "only the edits whose names match")
	control := flag.Bool("control", false, "run both sides undirected (an A/A run): how far two undirected engines' figures differ by chance")
	scenario := flag.String("scenario", "", "gosentry-geth: gosentry's go-ethereum benchmark (geth.go) instead of the edits")
	trials := flag.Int("trials", 10, "paired trials (-scenario gosentry-geth)")
	flag.Parse()
	switch *scenario {
	case "":
	case "gosentry-geth":
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["warmup"] {
			*warmup = 120 * time.Second
		}
		if !set["cap"] {
			*limit = 200 * time.Second
		}
		gethScenario(*warmup, *limit, *trials, *parallel, *control)
		return
	default:
		fail(fmt.Errorf("unknown -scenario %q (gosentry-geth)", *scenario))
	}
	if *control {
		fmt.Println("control run: the \"directed\" column is a second undirected engine")
	}
	if *coverage > 0 {
		*limit = *coverage
	}
	re := regexp.MustCompile(*only)
	src, err := filepath.Abs("bench/targets")
	if err != nil {
		fail(err)
	}
	scratch, err := os.MkdirTemp("", "fuzzls-bench-focus-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(scratch)
	type row struct {
		e   edit
		res [2]result // directed, undirected
	}
	var rows []row
	for _, ed := range edits {
		if !re.MatchString(ed.name) {
			continue
		}
		dir := filepath.Join(scratch, ed.name)
		warm := filepath.Join(dir, "warm-cache")
		ws, err := workspace(src, filepath.Join(dir, "warm"), ed.target)
		if err != nil {
			fail(err)
		}
		fmt.Fprintf(os.Stderr, "%s: warming up %s for %s…\n", ed.name, ed.target, *warmup)
		if _, err := run(ws, warm, ed, *parallel, *warmup, 0, false, false, nil); err != nil {
			fail(err)
		}
		r := row{e: ed}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, name := range []string{"directed", "undirected"} {
			cache := filepath.Join(dir, name+"-cache")
			if _, err := testws.CopyDir(warm, cache); err != nil {
				fail(err)
			}
			ws, err := workspace(src, filepath.Join(dir, name), ed.target)
			if err != nil {
				fail(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.res[i], errs[i] = run(ws, cache, ed, *parallel, 3*time.Second, *limit, true, i == 1 || *control, coverage)
				fmt.Fprintf(os.Stderr, "%s: %s: %s\n", ed.name, name, show(r.res[i].reach, *limit))
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				fail(err)
			}
		}
		rows = append(rows, r)
	}
	if *coverage > 0 {
		fmt.Printf("| edit | target | directed | undirected | ratio | blocks covered after %s, directed | undirected |\n| --- | --- | --- | --- | --- | --- | --- |\n", *coverage)
	} else {
		fmt.Printf("| edit | target | directed | undirected | ratio |\n| --- | --- | --- | --- | --- |\n")
	}
	var ratios []float64
	for _, r := range rows {
		d, u := r.res[0], r.res[1]
		ratio := d.reach.Seconds() / u.reach.Seconds()
		ratios = append(ratios, ratio)
		fmt.Printf("| %s: %s | %s | %s | %s | %.2f |", r.e.name, r.e.what, r.e.target, show(d.reach, *limit), show(u.reach, *limit), ratio)
		if *coverage > 0 {
			fmt.Printf(" %d / %d | %d / %d |", d.covered, d.blocks, u.covered, u.blocks)
		}
		fmt.Println()
	}
	if len(ratios) > 0 {
		med := median(ratios)
		fmt.Printf("\nmedian ratio directed / undirected: %.2f (goal: ≤ 0.20); warm-up %s, cap %s, %d worker(s) per mode\n", med, *warmup, *limit, *parallel)
	}
}

// result is one mode's figures for one edit.
type result struct {
	reach           time.Duration // from the save to the new branch reached (the cap: not reached)
	covered, blocks int           // blocks covered at the end (with -coverage)
}

func show(d, limit time.Duration) string {
	if d >= limit {
		return fmt.Sprintf("> %s", limit)
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// workspace copies bench/targets to dst and returns the package directory.
// It adds the target's seed of configDocs as testdata/fuzz/<target>/config.
func workspace(src, dst, target string) (string, error) {
	if _, err := testws.CopyDir(src, dst); err != nil {
		return "", err
	}
	pkg := filepath.Join(dst, "parsers")
	if doc, ok := configDocs[target]; ok {
		seeds := filepath.Join(pkg, "testdata", "fuzz", target)
		if err := os.MkdirAll(seeds, 0o755); err != nil {
			return "", err
		}
		typ := "string"
		if target == "FuzzYAML" {
			typ = "[]byte"
		}
		if err := os.WriteFile(filepath.Join(seeds, "config"), []byte("go test fuzz v1\n"+typ+"("+strconv.Quote(doc)+")\n"), 0o644); err != nil {
			return "", err
		}
	}
	return pkg, nil
}

// run fuzzes ed.target in pkgDir for settle; with apply, it then saves the edit,
// rebuilds, and measures the time from the save to the first input reaching the
// marked line (limit when none did within limit); with coverage set, it goes on
// until limit and counts the blocks covered then.
func run(pkgDir, cache string, ed edit, parallel int, settle, limit time.Duration, apply, noFocus bool, coverage *time.Duration) (result, error) {
	res := result{reach: limit}
	e := engine.New(engine.Options{CacheDir: cache, Parallel: parallel, Persistent: true, KeepFuzzing: true,
		MinimizeTime: time.Second, NoFocus: noFocus, Log: io.Discard}, nil)
	defer e.Close()
	targets, err := e.Targets(context.Background(), pkgDir, ".")
	if err != nil {
		return res, err
	}
	var s *engine.Session
	for _, t := range targets {
		if t.Name == ed.target {
			s = e.Start(t)
		}
	}
	if s == nil {
		return res, fmt.Errorf("no target %s in %s", ed.target, pkgDir)
	}
	defer s.Stop()
	if err := await(s, 5*time.Minute, func() bool { return s.Stats().Execs > 0 }); err != nil {
		return res, err
	}
	time.Sleep(settle)
	if !apply {
		return res, nil
	}
	file := filepath.Join(pkgDir, "parsers.go")
	data, err := os.ReadFile(file)
	if err != nil {
		return res, err
	}
	if !strings.Contains(string(data), ed.old) {
		return res, fmt.Errorf("%s: the text to edit is not in parsers.go", ed.name)
	}
	edited := strings.Replace(string(data), ed.old, ed.new, 1)
	mark := 1 + strings.Count(edited[:strings.Index(edited, "// MARK")], "\n")
	if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
		return res, err
	}
	t0 := time.Now()
	s.Rebuild()
	defer func() {
		st := s.Stats()
		fmt.Fprintf(os.Stderr, "  %s (noFocus %v): changed blocks reached %d/%d, %d execs, %.0f execs/s\n", ed.name, noFocus, st.ChangedReached, st.Changed, st.Execs, st.ExecsPerSec)
	}()
	for time.Since(t0) < limit {
		if res.reach == limit {
			if st := s.Stats(); st.Changed > 0 && reached(s, file, mark) {
				res.reach = time.Since(t0)
				if coverage == nil || *coverage == 0 {
					return res, nil
				}
			}
		}
		if s.State() == engine.StateError {
			return res, fmt.Errorf("%s: the edited code does not build: %v", ed.name, s.Wait())
		}
		time.Sleep(20 * time.Millisecond)
	}
	st := s.Stats()
	res.covered, res.blocks = st.Covered, st.Blocks
	return res, nil
}

// reached reports whether the block holding line of file was reached.
func reached(s *engine.Session, file string, line int) bool {
	blocks, hit := s.Coverage()
	for i, b := range blocks {
		if b.File == file && b.StartLine <= line && line <= b.EndLine && b.Changed && hit[i] {
			return true
		}
	}
	return false
}

func await(s *engine.Session, limit time.Duration, cond func() bool) error {
	for t0 := time.Now(); time.Since(t0) < limit; time.Sleep(50 * time.Millisecond) {
		if cond() {
			return nil
		}
		if st := s.State(); st == engine.StateError || st == engine.StateStopped {
			return fmt.Errorf("session %s: %v", st, s.Wait())
		}
	}
	return fmt.Errorf("no executions within %s", limit)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "focus:", err)
	os.Exit(1)
}
