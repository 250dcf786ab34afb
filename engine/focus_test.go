package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fuzzls.dev/fuzzls/instrument"
)

const focusV1 = `package p

func A(x int) int {
	if x > 10 {
		return 1
	}
	return 0
}

func B(s string) int {
	n := 0
	for _, c := range s {
		if c == ',' {
			n++
		}
	}
	return n
}

// C calls B.
func C(s string) int {
	if s == "" {
		return 0
	}
	return B(s) + 1
}
`

// focusV2 moves A below B (moved code is not changed) and adds a branch to B.
const focusV2 = `package p

func B(s string) int {
	n := 0
	for _, c := range s {
		if c == ',' {
			n++
		}
	}
	if strings.HasPrefix(s, "focus:") { // MARK:new
		return 99
	}
	return n
}

func A(x int) int {
	if x > 10 {
		return 1
	}
	return 0
}

// C calls B.
func C(s string) int {
	if s == "" {
		return 0
	}
	return B(s) + 1
}
`

// blocksOf writes src to file and returns a Binary with its blocks.
func blocksOf(t *testing.T, file, src string) *instrument.Binary {
	t.Helper()
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, blocks, err := instrument.RewriteFile(file, []byte(src), "0")
	if err != nil {
		t.Fatal(err)
	}
	bin := &instrument.Binary{Files: []string{file}}
	for _, b := range blocks {
		bin.Blocks = append(bin.Blocks, instrument.Block{File: 0, CoverBlock: b})
	}
	return bin
}

func TestChangedBlocks(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.go")
	v1 := blocksOf(t, file, focusV1)
	_, prev := blockTexts(v1)
	v2 := blocksOf(t, file, focusV2)
	texts, _ := blockTexts(v2)
	changed := changedBlocks(v2, texts, prev, nil)
	mark := markerLine(t, file, "MARK:new")
	var lines []int
	for _, c := range changed {
		lines = append(lines, v2.Blocks[c].StartLine)
		if b := v2.Blocks[c]; b.StartLine > mark+2 || b.EndLine < mark-1 {
			t.Errorf("block %d (%d:%d-%d:%d, %q) is changed; the edit is at line %d", c, b.StartLine, b.StartCol, b.EndLine, b.EndCol, blockText(t, v2, c), mark)
		}
	}
	if len(changed) == 0 {
		t.Fatal("no changed block")
	}
	// Those of A, which moved, are not; the new branch's body is.
	body := false
	for _, c := range changed {
		body = body || strings.Contains(blockText(t, v2, c), "return 99")
	}
	if !body {
		t.Errorf("the new branch's body is not among the changed blocks (starting at lines %v)", lines)
	}
	// Its function is B: every block of B, none of A.
	funcs, callers := functionBlocks(v2, changed)
	// C calls B: its blocks are the callers', and only they.
	cStart := markerLine(t, file, "func C(")
	if len(callers) == 0 {
		t.Errorf("no caller blocks, want those of C (from line %d)", cStart)
	}
	for _, b := range callers {
		if l := v2.Blocks[b].StartLine; l < cStart {
			t.Errorf("caller block at line %d, outside C (from line %d)", l, cStart)
		}
	}
	for k, fn := range funcs {
		for _, b := range fn {
			if l := v2.Blocks[b].StartLine; l < 3 || l > 14 {
				t.Errorf("changed block %d: its function holds the block at line %d, outside B", changed[k], l)
			}
		}
	}
	// Nothing is changed against itself; the lines of a diff mark what they overlap.
	if c := changedBlocks(v2, texts, blockTextsSet(v2), nil); len(c) != 0 {
		t.Errorf("a build against itself has changed blocks %v", c)
	}
	c := changedBlocks(v2, texts, nil, map[string][]LineRange{file: {{mark + 1, mark + 1}}})
	if len(c) != 1 || !strings.Contains(blockText(t, v2, c[0]), "return 99") {
		t.Errorf("line %d marks blocks %v, want the one of `return 99`", mark+1, c)
	}
}

func blockTextsSet(bin *instrument.Binary) textSet {
	_, set := blockTexts(bin)
	return set
}

// blockText is the source text of bin's block i.
func blockText(t *testing.T, bin *instrument.Binary, i int) string {
	t.Helper()
	b := bin.Blocks[i]
	src, err := os.ReadFile(bin.Files[b.File])
	if err != nil {
		t.Fatal(err)
	}
	return string(sliceBlock(src, lineStarts(src), b.CoverBlock))
}

// focusPkgV1 reads "key value" lines after a header that it first matches
// against every version string it knows, as format sniffers do: more than the
// 512 comparisons a comparison round records, so that without a focus the
// comparisons of the lines are never recorded (as in a real parser, where the
// one just added comes after thousands).
const focusPkgV1 = `package p

import (
	"strconv"
	"strings"
)

var versions = func() (v []string) {
	for i := range 600 {
		v = append(v, "v"+strconv.Itoa(i))
	}
	return v
}()

// Parse sums the values of the lines "add N" and "sub N" of a document.
func Parse(data string) int {
	header, body, _ := strings.Cut(data, "\n")
	version := -1
	for i, v := range versions {
		if header == v {
			version = i
		}
	}
	if version < 0 {
		return 0
	}
	n := 0
	for _, line := range strings.Split(body, "\n") {
		key, val, _ := strings.Cut(line, " ")
		n += value(key, val)
	}
	return n
}

func value(key, val string) int {
	v, err := strconv.Atoi(val)
	if err != nil {
		return 0
	}
	switch key {
	case "add":
		return v
	case "sub":
		return -v
	}
	return 0
}
`

// focusEdit adds a branch behind a comparison of a value with one computed from
// its key (not a literal the dictionary holds).
func focusEdit(src string) string {
	return strings.Replace(src, "	v, err := strconv.Atoi(val)\n",
		"	if val == \"no-\"+key { // MARK:new\n\t\treturn -1\n\t}\n\tv, err := strconv.Atoi(val)\n", 1)
}

const focusPkgTest = `package p

import "testing"

func FuzzParse(f *testing.F) {
	f.Add("v7\nadd 1\nsub 2")
	f.Fuzz(func(t *testing.T, data string) { Parse(data) })
}
`

// focusBudget is the executions after the edit's rebuild within which the
// directed schedule must reach the new branch, and the undirected one
// (Options.NoFocus) with the same seed must not, or the edit would need no
// direction and the test would show nothing. A run is not deterministic even
// with a fixed seed (entries' weights count their execution times): undirected,
// 13 runs measured on 2026-12-07 never reached the branch within the budget;
// one of the 5 that went on reached it after 115,042 executions, the others not
// within 400,000 (one not within 1,600,000).
const focusBudget = 40_000

// TestFocusReachesEdit: a session fuzzes a package, an edit adds a branch behind a
// comparison in code every input reaches, after 600 other comparisons; after the
// rebuild the session counts the new blocks as changed, directs its workers to
// them and reaches them within a small budget of executions, with a fixed seed;
// undirected, with the same seed, it does not.
func TestFocusReachesEdit(t *testing.T) {
	execs, reached := focusRun(t, false, focusBudget)
	if !reached {
		t.Fatalf("the new branch was not reached within %d executions", focusBudget)
	}
	t.Logf("the new branch reached after %d executions", execs)
	undirectedMisses(t, "the new branch reached", focusBudget, func() (int64, bool) { return focusRun(t, true, focusBudget) })
}

// undirectedMisses runs an undirected run (run) and fails the test when it
// gets what the directed one got (what) within budget, twice: a run that gets
// it by chance gets a second one.
func undirectedMisses(t *testing.T, what string, budget int64, run func() (int64, bool)) {
	t.Helper()
	for try := 1; ; try++ {
		execs, got := run()
		if !got {
			t.Logf("undirected: not %s in %d executions", what, execs)
			return
		}
		if try == 2 {
			t.Errorf("undirected, %s too, twice within %d executions (after %d): the edit needs no direction", what, budget, execs)
			return
		}
	}
}

// focusRun runs TestFocusReachesEdit's scenario, directed or not, and returns the
// executions from the rebuild to the new branch reached and whether it was within
// budget.
func focusRun(t *testing.T, noFocus bool, budget int64) (int64, bool) {
	dir := t.TempDir()
	s, st, base := editRun(t, dir, map[string]string{"p.go": focusPkgV1, "p_test.go": focusPkgTest}, "p.go", focusEdit(focusPkgV1), noFocus,
		"every changed block reached, or the budget spent", func(st Stats, base int64) bool {
			return st.ChangedReached == st.Changed || st.Execs-base > budget
		})
	defer s.Stop()
	if st.ChangedReached < st.Changed {
		return st.Execs - base, false
	}
	file := filepath.Join(dir, "p.go")
	mark := markerLine(t, file, "MARK:new")
	blocks, hit := s.Coverage()
	found := false
	for i, b := range blocks {
		if b.StartLine == mark+1 || b.StartLine == mark && b.EndLine > mark {
			found = found || b.Changed && hit[i]
		}
		// The edit splits the block it lands in: what follows the new branch
		// (line mark+3) is a block of its own, whose text is new too.
		if b.Changed && (b.StartLine < mark-2 || b.StartLine > mark+3) {
			t.Errorf("block at line %d is changed; the edit is at lines %d-%d", b.StartLine, mark, mark+2)
		}
	}
	if !found {
		t.Errorf("no changed, reached block at the new branch (line %d)", mark+1)
	}
	return st.Execs - base, st.Execs-base <= budget
}

// editRun writes files (module example.com/p) into dir and fuzzes its one
// target with a fixed seed, directed or not; once it fuzzes, it writes edited
// into file, rebuilds, and waits (3 minutes at most) for done, given the
// executions at the rebuild. It returns the session (stopped at the test's
// end at the latest), the stats that met done and those executions.
func editRun(t *testing.T, dir string, files map[string]string, file, edited string, noFocus bool, what string, done func(st Stats, base int64) bool) (*Session, Stats, int64) {
	t.Helper()
	files["go.mod"] = "module example.com/p\n\ngo 1.22\n"
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := New(Options{CacheDir: t.TempDir(), Parallel: 1, Persistent: true, KeepFuzzing: true, MinimizeTime: time.Second,
		NoFocus: noFocus, Seed: 1}, nil)
	t.Cleanup(e.Close)
	targets, err := e.Targets(t.Context(), dir, "./...")
	if err != nil || len(targets) != 1 {
		t.Fatalf("targets %v, %v", targets, err)
	}
	s := e.Start(targets[0])
	t.Cleanup(s.Stop)
	await := func(what string, cond func(Stats) bool) Stats {
		t.Helper()
		for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if st := s.Stats(); s.State() == StateFuzzing && cond(st) {
				return st
			}
		}
		t.Fatalf("%s: not within 3 minutes (state %s, stats %+v)", what, s.State(), s.Stats())
		return Stats{}
	}
	st := await("first build fuzzing", func(st Stats) bool { return st.Execs > 0 })
	if st.Changed != 0 {
		t.Errorf("first build: %d changed blocks, want 0", st.Changed)
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Rebuild()
	base := await("rebuilt", func(st Stats) bool { return st.Changed > 0 }).Execs
	return s, await(what, func(st Stats) bool { return done(st, base) }), base
}

// focusDivV1 is a parser with a division every "GATE" input of 64 bytes or
// more reaches, by a divisor 24 bits of which mix input bytes with the length:
// harmless, until focusDivEdit divides by it. The input's bytes are rotated
// first: the divisor's value put in their place (input-to-state from the 0 it
// is compared with) is not the answer.
const focusDivV1 = `package p

import (
	"encoding/binary"
	"math/bits"
)

var sink uint32

func Parse(data []byte) int {
	n := 0
	for i := 0; i < len(data) && i < 16; i++ {
		switch {
		case data[i] < 0x20:
			n += 3
		case data[i] < 0x40:
			n *= 5
		case data[i]%7 == 1:
			n -= 1
		}
	}
	if len(data) >= 64 && string(data[:4]) == "GATE" {
		recent(data)
	}
	return n
}

func denom(data []byte) uint32 {
	raw := bits.RotateLeft32(binary.LittleEndian.Uint32(data[40:44]), 7)
	return (raw^uint32(len(data))*0x9e3779b9)&0xffffff ^ 0x4e1b2c
}

func recent(data []byte) {
	sink ^= denom(data) + 1 // MARK:div
}
`

func focusDivEdit(src string) string {
	return strings.Replace(src, "sink ^= denom(data) + 1", "sink ^= 0x12345678 / denom(data)", 1)
}

const focusDivTest = `package p

import "testing"

func FuzzParse(f *testing.F) {
	f.Add([]byte("GATE and sixty bytes or more of text after it, well past forty."))
	f.Fuzz(func(t *testing.T, data []byte) { Parse(data) })
}
`

// focusDivBudget is the executions after the edit's rebuild within which the
// directed session must divide by zero and the undirected one must not.
const focusDivBudget = 30_000

// TestFocusClimbsDivisor: an edit turns a line every "GATE" entry reaches into
// a division whose divisor is zero for one value of 24 bits mixed from input
// bytes and the length. Every changed block is reached at once; the focus
// stays on the changed code, the division's hook compares the divisor with 0
// on a changed line, and climbing its bits divides by zero within a small
// budget; undirected, with the same seed, the crash is not found within it.
func TestFocusClimbsDivisor(t *testing.T) {
	execs, crashed := focusDivRun(t, false)
	if !crashed {
		t.Fatalf("directed: no division by zero within %d executions", focusDivBudget)
	}
	t.Logf("directed: division by zero after %d executions", execs)
	undirectedMisses(t, "divided by zero", focusDivBudget, func() (int64, bool) { return focusDivRun(t, true) })
}

func focusDivRun(t *testing.T, noFocus bool) (int64, bool) {
	s, st, base := editRun(t, t.TempDir(), map[string]string{"p.go": focusDivV1, "p_test.go": focusDivTest}, "p.go", focusDivEdit(focusDivV1), noFocus,
		"a crash, or the budget spent", func(st Stats, base int64) bool {
			return st.Crashes > 0 || st.Execs-base > focusDivBudget
		})
	defer s.Stop()
	if st.ChangedReached != st.Changed {
		t.Errorf("changed blocks reached %d of %d, want all: the seed reaches the edit", st.ChangedReached, st.Changed)
	}
	if st.Crashes == 0 {
		return st.Execs - base, false
	}
	if c := s.Crashes()[0]; !strings.Contains(c.Message, "divide by zero") {
		t.Errorf("the crash is %q, want the division by zero", c.Message)
	}
	return st.Execs - base, st.Execs-base <= focusDivBudget
}
