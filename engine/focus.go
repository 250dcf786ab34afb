package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/instrument"
)

// Change-directed fuzzing (issue 21). When a build follows another, the blocks
// whose source text did not exist in the previous build are changed; the
// coordinator then sends its workers a focus: the counters of the changed blocks
// not reached yet and those of the reached blocks of the functions holding them
// (the frontier). Workers give the entries that reach it more energy and run
// comparison rounds on them first. Once every changed block is reached, the
// focus narrows to the changed code itself: a line just changed is where a bug
// just came in, and reaching it is not testing it (a division reached by every
// entry fails on one divisor). The focus is cleared after focusIdle without a
// changed block newly reached, so the rest of the package is not starved.

// focusIdle is how long a focus lasts without a changed block newly reached.
var focusIdle = 30 * time.Second

// LineRange is an inclusive range of 1-based lines of a file.
type LineRange struct{ Start, End int }

// ChangedLines are the changed lines of each file (absolute path).
type ChangedLines struct{ Files map[string][]LineRange }

// focusState is a session's view of the changed code: what changed in its
// build, and whether the workers are sent a focus on it. Its lock is a leaf:
// no method calls out while holding it (the coverage it asks is read after).
type focusState struct {
	firstLines *ChangedLines // Options.Focus: the first build's changed lines
	noFocus    bool          // Options.NoFocus: count the changed blocks, do not direct fuzzing at them

	mu        sync.Mutex
	texts     map[string]map[string]int // the previous build's block texts, per file (a multiset)
	siteLines map[string]map[string]int // the previous build's comparison sites' lines, per file (a multiset)
	changed   []int                     // block indices of the changed blocks
	funcs     [][]int                   // per changed block: the blocks of its function
	callers   []int                     // the blocks of the functions calling those (functionBlocks)
	sites     []uint32                  // the comparison sites on changed lines
	siteCov   []int                     // the counters of those sites (len(blocks)+CmpSite.Counter)
	active    bool                      // a focus is sent to the workers
	gained    time.Time                 // when a changed block was last newly reached (or the focus set)
}

// buildTexts is the source text of a build's blocks and comparison sites.
type buildTexts struct {
	blocks    []string                  // block i's text ("" when its file cannot be read)
	blockSet  map[string]map[string]int // the blocks' texts, a multiset per file
	sites     []string                  // the text of site i's line
	siteLines map[string]map[string]int // the sites' lines, a multiset per file (one per site)
}

// readTexts reads each block's source text and each comparison site's line from
// their files.
func readTexts(bin *instrument.Binary) buildTexts {
	srcs := make([][]byte, len(bin.Files))
	starts := make([][]int, len(bin.Files)) // offsets of each line's start
	read := func(fi int) {
		if starts[fi] == nil {
			srcs[fi], _ = os.ReadFile(bin.Files[fi])
			starts[fi] = lineStarts(srcs[fi])
		}
	}
	add := func(set map[string]map[string]int, f, t string) {
		if set[f] == nil {
			set[f] = map[string]int{}
		}
		set[f][t]++
	}
	bt := buildTexts{blocks: make([]string, len(bin.Blocks)), blockSet: map[string]map[string]int{},
		sites: make([]string, len(bin.CmpSites)), siteLines: map[string]map[string]int{}}
	for i, b := range bin.Blocks {
		read(b.File)
		bt.blocks[i] = sliceBlock(srcs[b.File], starts[b.File], b.CoverBlock)
		add(bt.blockSet, bin.Files[b.File], bt.blocks[i])
	}
	for i, cs := range bin.CmpSites {
		read(cs.File)
		line := sliceBlock(srcs[cs.File], starts[cs.File], instrument.CoverBlock{StartLine: cs.Line, StartCol: 1, EndLine: cs.Line + 1, EndCol: 1})
		bt.sites[i] = strings.TrimSpace(line)
		add(bt.siteLines, bin.Files[cs.File], bt.sites[i])
	}
	return bt
}

// blockTexts is readTexts' blocks.
func blockTexts(bin *instrument.Binary) (texts []string, set map[string]map[string]int) {
	bt := readTexts(bin)
	return bt.blocks, bt.blockSet
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
	if b.EndLine == len(starts)+1 && b.EndCol == 1 { // to the end of the last line
		end = len(src)
	}
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
	return changedItems(len(bin.Blocks), func(i int) (string, string, int, int) {
		b := bin.Blocks[i]
		return bin.Files[b.File], texts[i], b.StartLine, b.EndLine
	}, prev, lines)
}

// changedSites lists the comparison sites of bin whose line's text is not in prev
// (the previous build's sites' lines), and those on lines when given.
func changedSites(bin *instrument.Binary, texts []string, prev map[string]map[string]int, lines map[string][]LineRange) []int {
	return changedItems(len(bin.CmpSites), func(i int) (string, string, int, int) {
		cs := bin.CmpSites[i]
		return bin.Files[cs.File], texts[i], cs.Line, cs.Line
	}, prev, lines)
}

// changedItems lists the items (of n) whose text is not in prev, a multiset per
// file consumed as it matches, or whose lines overlap lines.
func changedItems(n int, item func(i int) (file, text string, start, end int), prev map[string]map[string]int, lines map[string][]LineRange) []int {
	left := map[string]map[string]int{}
	for f, m := range prev {
		left[f] = map[string]int{}
		for t, n := range m {
			left[f][t] = n
		}
	}
	var out []int
	for i := range n {
		f, text, start, end := item(i)
		changed := false
		if prev != nil {
			if left[f][text] > 0 {
				left[f][text]--
			} else {
				changed = true
			}
		}
		for _, r := range lines[f] {
			if start <= r.End && r.Start <= end {
				changed = true
			}
		}
		if changed {
			out = append(out, i)
		}
	}
	return out
}

// funcDecl is a function declaration of a build's file: its span (line, column)
// and the names its body calls (functions, and methods by their name alone).
type funcDecl struct {
	file       int
	name       string
	start, end [2]int
	calls      map[string]bool
}

// parseFuncs returns the function declarations of bin's file fi (none when it
// does not parse).
func parseFuncs(bin *instrument.Binary, fi int) []funcDecl {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, bin.Files[fi], nil, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	var out []funcDecl
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		p, e := fset.Position(fd.Pos()), fset.Position(fd.End())
		decl := funcDecl{file: fi, name: fd.Name.Name, start: [2]int{p.Line, p.Column}, end: [2]int{e.Line, e.Column}, calls: map[string]bool{}}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				switch fn := ast.Unparen(call.Fun).(type) {
				case *ast.Ident:
					decl.calls[fn.Name] = true
				case *ast.SelectorExpr:
					decl.calls[fn.Sel.Name] = true
				}
			}
			return true
		})
		out = append(out, decl)
	}
	return out
}

// holds reports whether block b lies in d.
func (d funcDecl) holds(b instrument.Block) bool {
	before := func(a, b [2]int) bool { return a[0] < b[0] || a[0] == b[0] && a[1] <= b[1] }
	return b.File == d.file && before(d.start, [2]int{b.StartLine, b.StartCol}) && before([2]int{b.EndLine, b.EndCol}, d.end)
}

// blocks lists the blocks of bin that lie in d.
func (d funcDecl) blocks(bin *instrument.Binary) []int {
	var out []int
	for i, b := range bin.Blocks {
		if d.holds(b) {
			out = append(out, i)
		}
	}
	return out
}

// functionBlocks returns, for each changed block, the blocks of the function
// declaration that holds it (only the block itself when it is in none), and the
// blocks of the functions of the same package that call one of those (by name:
// a method is taken for any method of that name; one level of calls).
func functionBlocks(bin *instrument.Binary, changed []int) (funcs [][]int, callers []int) {
	decls := map[int][]funcDecl{} // file index → its functions
	for _, c := range changed {
		if fi := bin.Blocks[c].File; decls[fi] == nil {
			decls[fi] = parseFuncs(bin, fi)
		}
	}
	funcs = make([][]int, len(changed))
	names := map[string]bool{}   // the changed functions' names
	holding := map[[3]int]bool{} // and their positions (file, line, column)
	dirs := map[string]bool{}    // the changed files' directories (packages)
	for k, c := range changed {
		cb := bin.Blocks[c]
		funcs[k] = []int{c}
		dirs[filepath.Dir(bin.Files[cb.File])] = true
		for _, d := range decls[cb.File] {
			if d.holds(cb) {
				funcs[k] = d.blocks(bin)
				names[d.name] = true
				holding[[3]int{d.file, d.start[0], d.start[1]}] = true
				break
			}
		}
	}
	if len(names) == 0 {
		return funcs, nil
	}
	for fi, f := range bin.Files {
		if !dirs[filepath.Dir(f)] {
			continue
		}
		if decls[fi] == nil {
			decls[fi] = parseFuncs(bin, fi)
		}
		for _, d := range decls[fi] {
			if holding[[3]int{d.file, d.start[0], d.start[1]}] {
				continue
			}
			for name := range d.calls {
				if names[name] {
					callers = append(callers, d.blocks(bin)...)
					break
				}
			}
		}
	}
	return funcs, callers
}

// set learns the changed blocks and comparison sites of a new build bin:
// against the previous build's texts after a rebuild, or against lines
// (Options.Focus) on the first build. prevBlocks is the previous build's
// number of blocks.
func (f *focusState) set(bin *instrument.Binary, prevBlocks int) {
	bt := readTexts(bin)
	f.mu.Lock()
	prev, prevLines := f.texts, f.siteLines
	f.mu.Unlock()
	var lines map[string][]LineRange
	if prev == nil && f.firstLines != nil {
		lines = f.firstLines.Files
	}
	changed := changedBlocks(bin, bt.blocks, prev, lines)
	funcs, callers := functionBlocks(bin, changed)
	var sites []uint32
	var siteCov []int
	if prev != nil || lines != nil {
		for _, i := range changedSites(bin, bt.sites, prevLines, lines) {
			sites = append(sites, uint32(i))
			siteCov = append(siteCov, len(bin.Blocks)+bin.CmpSites[i].Counter)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(changed) == 0 && prev != nil && len(bin.Blocks) == prevBlocks && sameTexts(bt.blockSet, prev) {
		// The same code built again (a save that changed nothing, or a second
		// event of one save): the changed blocks stay what the last edit made them.
		f.gained = time.Now()
		return
	}
	f.texts, f.siteLines = bt.blockSet, bt.siteLines
	f.changed, f.funcs, f.callers, f.sites, f.siteCov = changed, funcs, callers, sites, siteCov
	f.active, f.gained = len(changed) > 0 && !f.noFocus, time.Now()
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

// frontier returns the focus to send the workers, by the coverage cov: nil
// when there is none. Its frontier is the unreached changed blocks and the
// reached blocks of their functions; nearer are the reached changed blocks of
// those functions (of every function once all are reached) and the comparison
// sites on changed lines; farther, the reached blocks of the functions calling
// them.
func (f *focusState) frontier(cov *coverageMap) *fuzzrt.Focus {
	f.mu.Lock()
	active, changed, funcs, callers, sites, siteCov := f.active, f.changed, f.funcs, f.callers, f.sites, f.siteCov
	f.mu.Unlock() // what set stores is never changed, only replaced
	if !active {
		return nil
	}
	hit := cov.hit()
	reached := func(i int) bool { return i < len(hit) && hit[i] }
	isChanged := map[int]bool{}
	for _, c := range changed {
		isChanged[c] = true
	}
	focus := &fuzzrt.Focus{Sites: sites}
	in := map[int]bool{}
	add := func(list *[]uint32, i int) {
		if !in[i] {
			in[i] = true
			*list = append(*list, uint32(i))
		}
	}
	for _, c := range siteCov {
		add(&focus.Near, c)
	}
	all := cov.countReached(changed) == len(changed)
	for k, c := range changed {
		if all {
			add(&focus.Near, c)
			continue
		}
		if reached(c) {
			continue
		}
		for _, b := range funcs[k] {
			if reached(b) && isChanged[b] {
				add(&focus.Near, b)
			}
		}
	}
	for k, c := range changed {
		if reached(c) {
			continue
		}
		add(&focus.Counters, c)
		for _, b := range funcs[k] {
			if reached(b) {
				add(&focus.Counters, b)
			}
		}
	}
	for _, b := range callers { // those already in the focus stay in their tier
		if reached(b) {
			add(&focus.Callers, b)
		}
	}
	return focus
}

// changedBlocks returns the changed blocks' indices.
func (f *focusState) changedBlocks() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

// changedReached counts the changed blocks cov reached.
func (f *focusState) changedReached(cov *coverageMap) int {
	return cov.countReached(f.changedBlocks())
}

// update is called when coverage grew (newly: whether a changed block was
// newly reached) and on each tick: it clears the focus once no changed block
// was newly reached for focusIdle, and returns what to send the workers (nil:
// nothing; an empty Focus: it was just cleared).
func (f *focusState) update(newly bool, cov *coverageMap) *fuzzrt.Focus {
	f.mu.Lock()
	active := f.active
	if active && newly {
		f.gained = time.Now()
	}
	idle := time.Since(f.gained) > focusIdle
	f.mu.Unlock()
	if !active {
		return nil
	}
	if idle {
		f.mu.Lock()
		f.active = false
		f.mu.Unlock()
		return &fuzzrt.Focus{}
	}
	if !newly {
		return nil
	}
	return f.frontier(cov)
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
