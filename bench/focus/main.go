// Command focus measures change-directed fuzzing (issue 21): edits that add a new
// branch behind a comparison to the real parsers' code of bench/targets, and the
// time from the save (the rebuild) to the first input that reaches the new
// branch, with the same engine directed (the default) and undirected
// (Options.NoFocus), side by side in one run.
//
//	go run ./bench/focus [-warmup 20s] [-cap 120s] [-parallel 1] [-edits re]
//
// Fairness: per edit, one warm-up run of the unedited code fills a cache
// directory (its corpus); each mode then starts on a copy of that cache and of
// the workspace, fuzzes the unedited code for 3 s (the corpus is re-run), and the
// edit is saved and the session rebuilt. The clock starts at the save and stops
// when the marked line's block is reached; the rebuild is in both. The order of
// the modes alternates between edits. An edit not reached within -cap counts as
// -cap (the median is then a bound).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
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

func main() {
	warmup := flag.Duration("warmup", 20*time.Second, "fuzzing of the unedited code before each edit")
	limit := flag.Duration("cap", 120*time.Second, "give up on an edit after this long (counted as the cap)")
	parallel := flag.Int("parallel", 1, "workers per engine")
	only := flag.String("edits", "", "only the edits whose names match")
	flag.Parse()
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
		e                    edit
		directed, undirected time.Duration
	}
	var rows []row
	n := 0
	for _, ed := range edits {
		if !re.MatchString(ed.name) {
			continue
		}
		dir := filepath.Join(scratch, ed.name)
		warm := filepath.Join(dir, "warm-cache")
		ws, err := workspace(src, filepath.Join(dir, "warm"))
		if err != nil {
			fail(err)
		}
		fmt.Fprintf(os.Stderr, "%s: warming up %s for %s…\n", ed.name, ed.target, *warmup)
		if _, err := run(ws, warm, ed, *parallel, *warmup, 0, false, false); err != nil {
			fail(err)
		}
		r := row{e: ed}
		modes := []bool{true, false}
		if n%2 == 1 {
			modes = []bool{false, true}
		}
		n++
		for _, directed := range modes {
			name := map[bool]string{true: "directed", false: "undirected"}[directed]
			cache := filepath.Join(dir, name+"-cache")
			if _, err := testws.CopyDir(warm, cache); err != nil {
				fail(err)
			}
			ws, err := workspace(src, filepath.Join(dir, name))
			if err != nil {
				fail(err)
			}
			d, err := run(ws, cache, ed, *parallel, 3*time.Second, *limit, true, !directed)
			if err != nil {
				fail(err)
			}
			fmt.Fprintf(os.Stderr, "%s: %s: %s\n", ed.name, name, show(d, *limit))
			if directed {
				r.directed = d
			} else {
				r.undirected = d
			}
		}
		rows = append(rows, r)
	}
	fmt.Printf("| edit | target | directed | undirected | ratio |\n| --- | --- | --- | --- | --- |\n")
	var ratios []float64
	for _, r := range rows {
		ratio := r.directed.Seconds() / r.undirected.Seconds()
		ratios = append(ratios, ratio)
		fmt.Printf("| %s: %s | %s | %s | %s | %.2f |\n", r.e.name, r.e.what, r.e.target, show(r.directed, *limit), show(r.undirected, *limit), ratio)
	}
	sort.Float64s(ratios)
	if len(ratios) > 0 {
		med := ratios[len(ratios)/2]
		if len(ratios)%2 == 0 {
			med = (ratios[len(ratios)/2-1] + ratios[len(ratios)/2]) / 2
		}
		fmt.Printf("\nmedian ratio directed / undirected: %.2f (goal: ≤ 0.20); warm-up %s, cap %s, %d worker(s)\n", med, *warmup, *limit, *parallel)
	}
}

func show(d, limit time.Duration) string {
	if d >= limit {
		return fmt.Sprintf("> %s", limit)
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// workspace copies bench/targets to dst and returns the package directory.
func workspace(src, dst string) (string, error) {
	if _, err := testws.CopyDir(src, dst); err != nil {
		return "", err
	}
	return filepath.Join(dst, "parsers"), nil
}

// run fuzzes ed.target in pkgDir for settle; with apply, it then saves the edit,
// rebuilds, and returns the time from the save to the first input reaching the
// marked line (limit when none did within limit).
func run(pkgDir, cache string, ed edit, parallel int, settle, limit time.Duration, apply, noFocus bool) (time.Duration, error) {
	e := engine.New(engine.Options{CacheDir: cache, Parallel: parallel, Persistent: true, KeepFuzzing: true,
		MinimizeTime: time.Second, NoFocus: noFocus, Log: io.Discard}, nil)
	defer e.Close()
	targets, err := e.Targets(context.Background(), pkgDir, ".")
	if err != nil {
		return 0, err
	}
	var s *engine.Session
	for _, t := range targets {
		if t.Name == ed.target {
			s = e.Start(t)
		}
	}
	if s == nil {
		return 0, fmt.Errorf("no target %s in %s", ed.target, pkgDir)
	}
	defer s.Stop()
	if err := await(s, 5*time.Minute, func() bool { return s.Stats().Execs > 0 }); err != nil {
		return 0, err
	}
	time.Sleep(settle)
	if !apply {
		return 0, nil
	}
	file := filepath.Join(pkgDir, "parsers.go")
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	if !strings.Contains(string(data), ed.old) {
		return 0, fmt.Errorf("%s: the text to edit is not in parsers.go", ed.name)
	}
	edited := strings.Replace(string(data), ed.old, ed.new, 1)
	mark := 1 + strings.Count(edited[:strings.Index(edited, "// MARK")], "\n")
	if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
		return 0, err
	}
	t0 := time.Now()
	s.Rebuild()
	defer func() {
		st := s.Stats()
		fmt.Fprintf(os.Stderr, "  (changed blocks reached %d/%d, %d execs, %.0f execs/s)\n", st.ChangedReached, st.Changed, st.Execs, st.ExecsPerSec)
	}()
	for time.Since(t0) < limit {
		if st := s.Stats(); st.Changed > 0 && reached(s, file, mark) {
			return time.Since(t0), nil
		}
		if s.State() == engine.StateError {
			return 0, fmt.Errorf("%s: the edited code does not build: %v", ed.name, s.Wait())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return limit, nil
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
