package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/internal/jsonevents"
)

// jsonEventTypes are the types of the -json lines, by their "event" member.
var jsonEventTypes = map[string]reflect.Type{
	jsonevents.EventBuild:    reflect.TypeFor[jsonevents.Build](),
	jsonevents.EventSeeds:    reflect.TypeFor[jsonevents.Seeds](),
	jsonevents.EventStats:    reflect.TypeFor[jsonevents.Stats](),
	jsonevents.EventCrash:    reflect.TypeFor[jsonevents.Crash](),
	jsonevents.EventFixed:    reflect.TypeFor[jsonevents.Fixed](),
	jsonevents.EventDone:     reflect.TypeFor[jsonevents.Done](),
	jsonevents.EventBlockers: reflect.TypeFor[jsonevents.Blockers](),
}

// members are the JSON member names of struct type t, and which are optional
// (omitempty).
func members(t reflect.Type) (names []string, optional map[string]bool) {
	optional = map[string]bool{}
	for i := range t.NumField() {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
		if opts == "omitempty" {
			optional[name] = true
		}
	}
	return names, optional
}

// checkJSONLine says which event line is, or why it is none: it must decode,
// with no unknown member (at any depth), into exactly one of the event types,
// have every member that type always has, carry that type's name in its
// "event" member, and encode back to the same JSON.
func checkJSONLine(line []byte) (string, error) {
	var present map[string]json.RawMessage
	if err := json.Unmarshal(line, &present); err != nil {
		return "", fmt.Errorf("not a JSON object: %v", err)
	}
	var matches []string
	var why []string
	for event, t := range jsonEventTypes {
		v := reflect.New(t)
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v.Interface()); err != nil {
			why = append(why, fmt.Sprintf("%s: %v", event, err))
			continue
		}
		names, optional := members(t)
		var missing []string
		for _, n := range names {
			if _, ok := present[n]; !ok && !optional[n] {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			why = append(why, fmt.Sprintf("%s: no %s", event, strings.Join(missing, ", ")))
			continue
		}
		if got := v.Elem().FieldByName("Event").String(); got != event {
			why = append(why, fmt.Sprintf("%s: event is %q", event, got))
			continue
		}
		again, err := json.Marshal(v.Interface())
		if err != nil {
			return "", err
		}
		var a, b any
		json.Unmarshal(line, &a)
		json.Unmarshal(again, &b)
		if !reflect.DeepEqual(a, b) {
			why = append(why, fmt.Sprintf("%s: encodes back as %s", event, again))
			continue
		}
		matches = append(matches, event)
	}
	if len(matches) != 1 {
		sort.Strings(why)
		return "", fmt.Errorf("matches %q, not exactly one event type (%s)", matches, strings.Join(why, "; "))
	}
	return matches[0], nil
}

// runJSON runs fuzzls fuzz -json in dir and returns the events seen, each
// line checked, and the lines of each event.
func runJSON(t *testing.T, bin, dir string, wantCode int) map[string][]map[string]any {
	t.Helper()
	cmd := exec.Command(bin, "fuzz", "-json", "-minimizetime", "10s", "-cachedir", t.TempDir(), "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if code := exitCode(err); code != wantCode {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, wantCode, out, stderr.String())
	}
	seen := map[string][]map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		event, err := checkJSONLine(sc.Bytes())
		if err != nil {
			t.Errorf("%s\n  %v", sc.Text(), err)
			continue
		}
		var m map[string]any
		json.Unmarshal(sc.Bytes(), &m)
		seen[event] = append(seen[event], m)
	}
	return seen
}

// TestJSONEvents runs the real fuzzls fuzz -json on the calculator, whose bug is
// found in a second, and on a copy that does not compile: every line is one of
// the types of package jsonevents, member for member, and each run gives
// the events such a run must. Then the README's -json section documents the
// same members for each event, and its example lines pass the same check.
func TestJSONEvents(t *testing.T) {
	bin := buildFuzzls(t)
	dir := copyDir(t, "../../testdata/calc")
	seen := runJSON(t, bin, dir, 1)
	for _, want := range []string{jsonevents.EventBuild, jsonevents.EventSeeds, jsonevents.EventStats, jsonevents.EventCrash, jsonevents.EventDone} {
		if len(seen[want]) == 0 {
			t.Errorf("a run that finds a failure gave no %q event", want)
		}
	}
	if !slices.ContainsFunc(seen[jsonevents.EventCrash], func(m map[string]any) bool { return m["minimized"] == true }) {
		t.Errorf("no minimized crash event: %v", seen[jsonevents.EventCrash])
	}

	src, err := os.ReadFile(filepath.Join(dir, "calc.go"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "calc.go"), bytes.Replace(src, []byte("return v, nil\n}"), []byte("return v, undefinedThing\n}"), 1), 0o644)
	seen = runJSON(t, bin, dir, 2)
	build, done := seen[jsonevents.EventBuild], seen[jsonevents.EventDone]
	if len(build) != 1 || build[0]["error"] == nil || build[0]["diagnostics"] == nil {
		t.Errorf("a build that fails: build events %v, want one with error and diagnostics", build)
	}
	if len(done) != 1 || done[0]["error"] == nil {
		t.Errorf("a build that fails: done events %v, want one with error", done)
	}

	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range readmeJSONDrift(readme) {
		t.Error(p)
	}
}

// TestJSONEventsDriftCaught: a member renamed in a line or in the README only
// is caught.
func TestJSONEventsDriftCaught(t *testing.T) {
	line := `{"event":"stats","target":"FuzzEval","package":"example.com/calc","elapsed":0.2,"execs":396,"execsPerSec":1932,"corpus":3,"covered":1,"blocks":39,"workers":2,"sinceCoverage":0,"execsSinceCoverage":12,"changed":0,"changedReached":0}`
	if ev, err := checkJSONLine([]byte(line)); ev != jsonevents.EventStats || err != nil {
		t.Fatalf("%s: %q, %v", line, ev, err)
	}
	for _, bad := range []string{
		strings.Replace(line, `"execsPerSec"`, `"execsPerSecond"`, 1),
		strings.Replace(line, `"corpus":3,`, ``, 1),
		strings.Replace(line, `"event":"stats"`, `"event":"done"`, 1),
		strings.Replace(line, `"blocks":39,`, `"blocks":39,"extra":1,`, 1),
		`{"event":"fixed","id":"x","target":"FuzzEval","line":3}`,
		`{"event":"build","package":"p","targets":[],"seconds":1,"diagnostics":[{"file":"f","line":1,"column":2,"message":"m"}]}`,
		`{"event":"build","package":"p","targets":[],"seconds":1,"diagnostics":[{"File":"f","Line":1,"Col":2,"Message":"m"}]}`,
	} {
		if ev, err := checkJSONLine([]byte(bad)); err == nil {
			t.Errorf("%s passes as %q", bad, ev)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ old, new string }{
		{"`execs`, `execsPerSec`", "`execs`, `execsPerSecond`"},
		{"[`warnings`]", "`warnings`"},
		{`"execsPerSec":1932`, `"execsPerSecond":1932`},
		{"| `fixed` |", "| `repaired` |"},
	} {
		changed := bytes.Replace(readme, []byte(tc.old), []byte(tc.new), 1)
		if bytes.Equal(changed, readme) {
			t.Fatalf("the README has no %s", tc.old)
		}
		if p := readmeJSONDrift(changed); len(p) == 0 {
			t.Errorf("%s → %s in the README is not caught", tc.old, tc.new)
		}
	}
}

var (
	jsonSection = regexp.MustCompile("(?s)\n### `-json` events\n(.*?)\n### ")
	tableRow    = regexp.MustCompile("(?m)^\\| `([a-z]+)` \\|[^|]*\\| (.*) \\|$")
	member      = regexp.MustCompile("(\\[?)`([A-Za-z]+)`\\]?")
	jsonBlock   = regexp.MustCompile("(?s)```json\n(.*?)```")
)

// readmeJSONDrift lists the differences between the README's -json section and
// the event types: the members its table gives each event (in brackets the
// optional ones), and its example lines, one at least for each event.
func readmeJSONDrift(readme []byte) (problems []string) {
	m := jsonSection.FindSubmatch(readme)
	if m == nil {
		return []string{"the README has no \"### `-json` events\" section"}
	}
	section := m[1]
	documented := map[string]bool{}
	for _, row := range tableRow.FindAllSubmatch(section, -1) {
		event := string(row[1])
		documented[event] = true
		t, ok := jsonEventTypes[event]
		if !ok {
			problems = append(problems, fmt.Sprintf("the README documents an event %q, which has no type", event))
			continue
		}
		var got []string
		gotOptional := map[string]bool{}
		for _, mm := range member.FindAllSubmatch(row[2], -1) {
			got = append(got, string(mm[2]))
			if len(mm[1]) > 0 {
				gotOptional[string(mm[2])] = true
			}
		}
		want, optional := members(t)
		if !slices.Equal(got, want) || !reflect.DeepEqual(gotOptional, optional) {
			problems = append(problems, fmt.Sprintf("the README gives %s the members %q (optional %v), %s has %q (optional %v)", event, got, gotOptional, t.Name(), want, optional))
		}
	}
	examples := map[string]bool{}
	block := jsonBlock.FindSubmatch(section)
	if block == nil {
		problems = append(problems, "the README's -json section has no example lines")
		block = [][]byte{nil, nil}
	}
	for _, line := range bytes.Split(bytes.TrimSpace(block[1]), []byte("\n")) {
		event, err := checkJSONLine(line)
		if err != nil {
			problems = append(problems, fmt.Sprintf("the README's example %s: %v", line, err))
		}
		examples[event] = true
	}
	for event := range jsonEventTypes {
		if !documented[event] {
			problems = append(problems, fmt.Sprintf("the README's table has no %q event", event))
		}
		if !examples[event] {
			problems = append(problems, fmt.Sprintf("the README has no example of a %q event", event))
		}
	}
	sort.Strings(problems)
	return problems
}
