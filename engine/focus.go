package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"time"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/instrument"
)

// Change-directed fuzzing (issue 21). When a build follows another, the blocks
// whose source text did not exist in the previous build are changed; the
// coordinator then sends its workers a focus: the counters of the changed blocks
// not reached yet and those of the reached blocks of the functions holding them
// (the frontier). Workers give the entries that reach it more energy and run
// comparison rounds on them first. The focus is cleared once every changed block
// is reached, or after focusIdle without a changed block newly reached, so the
// rest of the package is not starved.

// focusIdle is how long a focus lasts without a changed block newly reached.
var focusIdle = 30 * time.Second

// LineRange is an inclusive range of 1-based lines of a file.
type LineRange struct{ Start, End int }

// ChangedLines are the changed lines of each file (absolute path).
type ChangedLines struct{ Files map[string][]LineRange }

// focusState is the session's view of the changed blocks.
type focusState struct {
	texts   map[string]map[string]int // the previous build's block texts, per file (a multiset)
	changed []int                     // block indices of the changed blocks
	funcs   [][]int                   // per changed block: the blocks of its function
	active  bool                      // a focus is sent to the workers
	gained  time.Time                 // when a changed block was last newly reached (or the focus set)
}

// blockTexts reads each block's source text from its file, as a multiset per file.
// texts[i] is block i's text ("" when its file cannot be read).
func blockTexts(bin *instrument.Binary) (texts []string, set map[string]map[string]int) {
	srcs := make([][]byte, len(bin.Files))
	starts := make([][]int, len(bin.Files)) // offsets of each line's start
	read := make([]bool, len(bin.Files))
	texts = make([]string, len(bin.Blocks))
	set = map[string]map[string]int{}
	for i, b := range bin.Blocks {
		if !read[b.File] {
			read[b.File] = true
			srcs[b.File], _ = os.ReadFile(bin.Files[b.File])
			starts[b.File] = lineStarts(srcs[b.File])
		}
		t := sliceBlock(srcs[b.File], starts[b.File], b.CoverBlock)
		texts[i] = t
		f := bin.Files[b.File]
		if set[f] == nil {
			set[f] = map[string]int{}
		}
		set[f][t]++
	}
	return texts, set
}

func lineStarts(src []byte) []int {
	starts := []int{0}
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// sliceBlock is the text of b in src (1-based lines, 1-based byte columns).
func sliceBlock(src []byte, starts []int, b instrument.CoverBlock) string {
	offset := func(line, col int) int {
		if line < 1 || line > len(starts) {
			return -1
		}
		return min(starts[line-1]+col-1, len(src))
	}
	start, end := offset(b.StartLine, b.StartCol), offset(b.EndLine, b.EndCol)
	if start < 0 || end < start {
		return ""
	}
	return string(src[start:end])
}

// changedBlocks lists the blocks of bin whose text is not in prev (the previous
// build's multiset, consumed as it matches: a block moved is not changed, one
// copied is), and those overlapping lines (absolute file → line ranges, from a
// diff) when given.
func changedBlocks(bin *instrument.Binary, texts []string, prev map[string]map[string]int, lines map[string][]LineRange) []int {
	left := map[string]map[string]int{}
	for f, m := range prev {
		left[f] = map[string]int{}
		for t, n := range m {
			left[f][t] = n
		}
	}
	var out []int
	for i, b := range bin.Blocks {
		f := bin.Files[b.File]
		changed := false
		if prev != nil {
			if left[f][texts[i]] > 0 {
				left[f][texts[i]]--
			} else {
				changed = true
			}
		}
		for _, r := range lines[f] {
			if b.StartLine <= r.End && r.Start <= b.EndLine {
				changed = true
			}
		}
		if changed {
			out = append(out, i)
		}
	}
	return out
}

// functionBlocks returns, for each changed block, the blocks of the function
// declaration that holds it (only the block itself when it is in none).
func functionBlocks(bin *instrument.Binary, changed []int) [][]int {
	type span struct{ start, end [2]int }
	decls := map[int][]span{} // file index → its functions
	for _, c := range changed {
		fi := bin.Blocks[c].File
		if _, ok := decls[fi]; ok {
			continue
		}
		decls[fi] = nil
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, bin.Files[fi], nil, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				p, e := fset.Position(fd.Pos()), fset.Position(fd.End())
				decls[fi] = append(decls[fi], span{[2]int{p.Line, p.Column}, [2]int{e.Line, e.Column}})
			}
		}
	}
	before := func(a, b [2]int) bool { return a[0] < b[0] || a[0] == b[0] && a[1] <= b[1] }
	out := make([][]int, len(changed))
	for k, c := range changed {
		cb := bin.Blocks[c]
		out[k] = []int{c}
		for _, sp := range decls[cb.File] {
			if !before(sp.start, [2]int{cb.StartLine, cb.StartCol}) || !before([2]int{cb.EndLine, cb.EndCol}, sp.end) {
				continue
			}
			out[k] = out[k][:0]
			for i, b := range bin.Blocks {
				if b.File == cb.File && before(sp.start, [2]int{b.StartLine, b.StartCol}) && before([2]int{b.EndLine, b.EndCol}, sp.end) {
					out[k] = append(out[k], i)
				}
			}
			break
		}
	}
	return out
}

// setFocus learns the changed blocks of a new build: against the previous build's
// texts after a rebuild, or against lines (Options.Focus) on the first build.
func (s *Session) setFocus(bin *instrument.Binary) {
	texts, set := blockTexts(bin)
	s.mu.Lock()
	prev := s.focus.texts
	s.mu.Unlock()
	var lines map[string][]LineRange
	if prev == nil && s.e.opts.Focus != nil {
		lines = s.e.opts.Focus.Files
	}
	changed := changedBlocks(bin, texts, prev, lines)
	funcs := functionBlocks(bin, changed)
	s.mu.Lock()
	if len(changed) == 0 && prev != nil && len(bin.Blocks) == len(s.blocks) && sameTexts(set, prev) {
		// The same code built again (a save that changed nothing, or a second
		// event of one save): the changed blocks stay what the last edit made them.
		s.focus.gained = time.Now()
		s.mu.Unlock()
		return
	}
	s.focus = focusState{texts: set, changed: changed, funcs: funcs, active: len(changed) > 0 && !s.e.opts.NoFocus, gained: time.Now()}
	s.mu.Unlock()
}

func sameTexts(a, b map[string]map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for f, m := range a {
		if len(m) != len(b[f]) {
			return false
		}
		for t, n := range m {
			if b[f][t] != n {
				return false
			}
		}
	}
	return true
}

// focusLocked returns the focus to send the workers: nil when there is none, an
// empty Focus when it was just cleared.
func (s *Session) focusLocked() *fuzzrt.Focus {
	f := &s.focus
	if !f.active {
		return nil
	}
	reached := func(i int) bool { return i < len(s.global) && s.global[i] != 0 }
	var counters []uint32
	in := map[int]bool{}
	add := func(i int) {
		if !in[i] {
			in[i] = true
			counters = append(counters, uint32(i))
		}
	}
	for k, c := range f.changed {
		if reached(c) {
			continue
		}
		add(c)
		for _, b := range f.funcs[k] {
			if reached(b) {
				add(b)
			}
		}
	}
	return &fuzzrt.Focus{Counters: counters}
}

// changedReachedLocked counts the changed blocks reached.
func (s *Session) changedReachedLocked() int {
	n := 0
	for _, c := range s.focus.changed {
		if c < len(s.global) && s.global[c] != 0 {
			n++
		}
	}
	return n
}

// broadcastFocus sends f (if any) to every worker.
func (s *Session) broadcastFocus(f *fuzzrt.Focus) {
	if f == nil {
		return
	}
	for _, w := range s.liveWorkers() {
		w.post(&fuzzrt.Request{Focus: f})
	}
}

// updateFocus is called when coverage grew (newly: whether a changed block was
// newly reached) and on each tick: it clears the focus once every changed block
// is reached or none was for focusIdle, and returns what to send the workers
// (nil: nothing).
func (s *Session) updateFocus(newly bool) *fuzzrt.Focus {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := &s.focus
	if !f.active {
		return nil
	}
	if newly {
		f.gained = time.Now()
	}
	if s.changedReachedLocked() == len(f.changed) || time.Since(f.gained) > focusIdle {
		f.active = false
		return &fuzzrt.Focus{}
	}
	if !newly {
		return nil
	}
	return s.focusLocked()
}
