package engine

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"hash/maphash"
	"os"
	"path/filepath"
	"slices"
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

	// share returns a build's text sets as another session of the same build
	// holds them, when it does (Engine.shareTexts); nil: not shared.
	share func(path string, t *textSets) *textSets

	mu      sync.Mutex
	texts   *textSets // the previous build's; nil before the first
	changed []int     // block indices of the changed blocks
	funcs   [][]int   // per changed block: the blocks of its function
	callers []int     // the blocks of the functions calling those (functionBlocks)
	sites   []uint32  // the comparison sites on changed lines
	siteCov []int     // the counters of those sites (len(blocks)+CmpSite.Counter)
	active  bool      // a focus is sent to the workers
	gained  time.Time // when a changed block was last newly reached (or the focus set)
}

// buildTexts is the source text of a build's blocks and comparison sites, each
// as a key: a hash of its file's name and the text. A session keeps a build's
// key sets until the next build, for every file the build instruments (a
// dependency's too): the texts themselves would cost as much as the sources.
type buildTexts struct {
	blocks []uint64 // block i's key (its text "" when its file cannot be read)
	sites  []uint64 // the key of site i's line
	sets   *textSets
}

// textSets are a build's keys as multisets: what the next build is compared
// with. They are never modified, so that sessions of one build share them.
type textSets struct {
	blocks textSet // the blocks' keys
	sites  textSet // the sites' lines' keys (one per site)
}

// textSet is a multiset of text keys, sorted.
type textSet []uint64

// textSeed seeds the text keys: they are compared only within the process.
var textSeed = maphash.MakeSeed()

// textKey is the key of text in file.
func textKey(file string, text []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(textSeed)
	h.WriteString(file)
	h.WriteByte(0)
	h.Write(text)
	return h.Sum64()
}

// readTexts reads each block's source text and each comparison site's line from
// their files and returns their keys.
func readTexts(bin *instrument.Binary) buildTexts {
	srcs := make([][]byte, len(bin.Files))
	starts := make([][]int, len(bin.Files)) // offsets of each line's start
	read := func(fi int) {
		if starts[fi] == nil {
			srcs[fi], _ = os.ReadFile(bin.Files[fi])
			starts[fi] = lineStarts(srcs[fi])
		}
	}
	bt := buildTexts{blocks: make([]uint64, len(bin.Blocks)), sites: make([]uint64, len(bin.CmpSites))}
	for i, b := range bin.Blocks {
		read(b.File)
		bt.blocks[i] = textKey(bin.Files[b.File], sliceBlock(srcs[b.File], starts[b.File], b.CoverBlock))
	}
	for i, cs := range bin.CmpSites {
		read(cs.File)
		line := sliceBlock(srcs[cs.File], starts[cs.File], instrument.CoverBlock{StartLine: cs.Line, StartCol: 1, EndLine: cs.Line + 1, EndCol: 1})
		bt.sites[i] = textKey(bin.Files[cs.File], bytes.TrimSpace(line))
	}
	bt.sets = &textSets{blocks: newTextSet(bt.blocks), sites: newTextSet(bt.sites)}
	return bt
}

func newTextSet(keys []uint64) textSet {
	set := append(make(textSet, 0, len(keys)), keys...)
	slices.Sort(set)
	return set
}

// blockTexts is readTexts' blocks.
func blockTexts(bin *instrument.Binary) (keys []uint64, set textSet) {
	bt := readTexts(bin)
	return bt.blocks, bt.sets.blocks
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
func sliceBlock(src []byte, starts []int, b instrument.CoverBlock) []byte {
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
		return nil
	}
	return src[start:end]
}

// changedBlocks lists the blocks of bin whose text is not in prev (the previous
// build's multiset, consumed as it matches: a block moved is not changed, one
// copied is), and those overlapping lines (absolute file → line ranges, from a
// diff) when given.
func changedBlocks(bin *instrument.Binary, keys []uint64, prev textSet, lines map[string][]LineRange) []int {
	return changedItems(len(bin.Blocks), func(i int) (string, uint64, int, int) {
		b := bin.Blocks[i]
		return bin.Files[b.File], keys[i], b.StartLine, b.EndLine
	}, prev, lines)
}

// changedSites lists the comparison sites of bin whose line's text is not in prev
// (the previous build's sites' lines), and those on lines when given.
func changedSites(bin *instrument.Binary, keys []uint64, prev textSet, lines map[string][]LineRange) []int {
	return changedItems(len(bin.CmpSites), func(i int) (string, uint64, int, int) {
		cs := bin.CmpSites[i]
		return bin.Files[cs.File], keys[i], cs.Line, cs.Line
	}, prev, lines)
}

// changedItems lists the items (of n) whose key is not in prev, a multiset
// consumed as it matches, or whose lines overlap lines.
func changedItems(n int, item func(i int) (file string, key uint64, start, end int), prev textSet, lines map[string][]LineRange) []int {
	left := make(map[uint64]int, len(prev))
	for _, k := range prev {
		left[k]++
	}
	var out []int
	for i := range n {
		f, key, start, end := item(i)
		changed := false
		if prev != nil {
			if left[key] > 0 {
				left[key]--
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
	if f.share != nil {
		bt.sets = f.share(bin.Path, bt.sets)
	}
	f.mu.Lock()
	var prev, prevLines textSet // nil before the first build
	if f.texts != nil {
		prev, prevLines = f.texts.blocks, f.texts.sites
	}
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
	if len(changed) == 0 && prev != nil && len(bin.Blocks) == prevBlocks && slices.Equal(bt.sets.blocks, prev) {
		// The same code built again (a save that changed nothing, or a second
		// event of one save): the changed blocks stay what the last edit made them.
		f.gained = time.Now()
		return
	}
	f.texts = bt.sets
	f.changed, f.funcs, f.callers, f.sites, f.siteCov = changed, funcs, callers, sites, siteCov
	f.active, f.gained = len(changed) > 0 && !f.noFocus, time.Now()
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
