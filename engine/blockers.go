package engine

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/instrument"
)

// Blockers: why a branch is not covered. The workers summarize what their
// comparison rounds fed each comparison site (fuzzrt/cmpsum.go); the session
// merges the summaries into one bounded table per build, and Blockers turns the
// sites in front of an uncovered branch into what the editor and the CLI show.

// Blocker is a reached comparison whose branch no input has taken yet.
type Blocker struct {
	File string `json:"file"`
	Line int    `json:"line"` // of the comparison's operator (a call's parenthesis, a case's value)
	Col  int    `json:"col"`
	// Expr is the comparison as written (`binary.BigEndian.Uint32(h[:4]) == 0x89504e47`),
	// Want the constant operand's text when one side is a constant.
	Expr string `json:"expr"`
	Want string `json:"want,omitempty"`
	// Block is the uncovered block the comparison guards; Behind counts the
	// uncovered blocks of the enclosing function from Block on (Block included):
	// an approximation of the code the comparison keeps fuzzing from.
	Block  Block `json:"block"`
	Behind int   `json:"behind"`
	// Count is how often comparison rounds recorded the comparison; Nearest and
	// Frequent are the operand seen nearest the constant (or the pair nearest
	// each other) and the most frequent one.
	Count    int64  `json:"count"`
	Nearest  string `json:"nearest"`
	Frequent string `json:"frequent"`
	// FrequentCount is how many of Count had Frequent (approximate).
	FrequentCount int64 `json:"frequentCount"`
}

// Message is the blocker for people: "compared `x == 0x10`: nearest 0xf, most
// frequent 0x0 (12 of 30)".
func (b Blocker) Message() string {
	msg := fmt.Sprintf("compared `%s`: nearest %s", b.Expr, b.Nearest)
	if b.Frequent != b.Nearest {
		msg += fmt.Sprintf(", most frequent %s (%d of %d)", b.Frequent, b.FrequentCount, b.Count)
	} else {
		msg += fmt.Sprintf(" (%d of %d)", b.FrequentCount, b.Count)
	}
	return msg
}

// BlockersEvent lists a target's top blockers (the most code behind first)
// when its run ends; `fuzzls fuzz` reports it, a persistent session does not.
type BlockersEvent struct {
	Target   Target
	Blockers []Blocker
}

func (*BlockersEvent) event() {}

// TopBlockers is how many blockers a BlockersEvent lists at most.
const TopBlockers = 10

// blockerState is a session's table of comparison summaries, for the build
// whose sites it numbers. Its lock is a leaf.
type blockerState struct {
	mu    sync.Mutex
	bin   *instrument.Binary
	table fuzzrt.CmpTable
	// solved holds what SolveBlocker found for bin's sites.
	solved map[int]solution
}

// solution is what SolveBlocker found at a site: an input ("": none, with a
// corpus of corpus entries, at at).
type solution struct {
	input  string
	corpus int
	at     time.Time
}

// solveAgainAfter is how long a search that found nothing stands, however the
// corpus grows: editors ask for code actions at every move of the cursor, and
// each search starts a worker.
const solveAgainAfter = 30 * time.Second

// merge takes a worker of bin's comparison summaries; those of another build
// than the table's start it again.
func (b *blockerState) merge(bin *instrument.Binary, sums []fuzzrt.CmpSummary) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bin != bin {
		b.bin, b.table, b.solved = bin, fuzzrt.CmpTable{}, nil
	}
	b.table.Merge(sums)
}

// known returns the input found for bin's site, and whether that answer
// stands for a corpus of corpus entries now: an input always, none until the
// corpus has grown and solveAgainAfter has passed.
func (b *blockerState) known(bin *instrument.Binary, site, corpus int, now time.Time) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	sol, ok := b.solved[site]
	if !ok || b.bin != bin {
		return "", false
	}
	return sol.input, sol.input != "" || sol.corpus == corpus || now.Sub(sol.at) < solveAgainAfter
}

// setSolution records what was found for bin's site, unless the table is
// another build's by now.
func (b *blockerState) setSolution(bin *instrument.Binary, site int, sol solution) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bin != bin {
		return
	}
	if b.solved == nil {
		b.solved = map[int]solution{}
	}
	b.solved[site] = sol
}

// summaries returns the comparison sites of bin that have a summary, with it;
// none when the table is another build's.
func (b *blockerState) summaries(bin *instrument.Binary) []siteSummary {
	b.mu.Lock()
	defer b.mu.Unlock()
	if bin == nil || b.bin != bin {
		return nil
	}
	var out []siteSummary
	for i := range bin.CmpSites {
		if sum := b.table.Get(int32(i)); sum != nil {
			out = append(out, siteSummary{i, *sum})
		}
	}
	return out
}

// siteSummary is a comparison site's summary.
type siteSummary struct {
	site int
	sum  fuzzrt.CmpSummary
}

// Blockers returns the reached comparisons in front of an uncovered block, the
// most code behind first.
func (s *Session) Blockers() []Blocker {
	s.mu.Lock()
	bin := s.bin
	hit := s.cov.hit() // bin's: the session swaps bin and resets cov under mu
	s.mu.Unlock()
	sites := s.blk.summaries(bin)
	if sites == nil {
		return nil
	}
	return blockers(bin, hit, func(yield func(int, fuzzrt.CmpSummary)) {
		for _, st := range sites {
			yield(st.site, st.sum)
		}
	})
}

// Bounds of SolveBlocker: the corpus entries reaching the comparison it
// searches from, and the executions a search from each may take (a worker runs
// a small input in microseconds; an image of 64 kB with its operand everywhere
// takes about a second).
const (
	solveEntries = 8
	solveMax     = 1 << 16
)

// SolveBlocker looks for an input that takes b's branch: from the corpus
// entries that reach b's comparison, the input-to-state replacements of its
// operands (in every place, where a comparison round tries a few), run on a
// worker of its own until one reaches the block behind it. It returns the
// input (`go test fuzz v1` text, with the layout line of a target fuzzed field
// by field), "" when there is none; what it found is kept for the build, and
// a search that found nothing is made again once the corpus has grown.
func (s *Session) SolveBlocker(ctx context.Context, b Blocker) (string, error) {
	in, err := s.solveBlocker(ctx, b)
	if in != "" {
		in = string(fuzzrt.WithLayout([]byte(in), s.layout()))
	}
	return in, err
}

func (s *Session) solveBlocker(ctx context.Context, b Blocker) (string, error) {
	s.mu.Lock()
	bin := s.bin
	s.mu.Unlock()
	if bin == nil {
		return "", fmt.Errorf("%s: no build", s.target.Name)
	}
	site, counter := -1, -1
	for i, cs := range bin.CmpSites {
		if bin.Files[cs.File] == b.File && cs.Line == b.Line && cs.Col == b.Col {
			site = i
			break
		}
	}
	for i, bl := range bin.Blocks {
		if bin.Files[bl.File] == b.Block.File && bl.StartLine == b.Block.StartLine && bl.StartCol == b.Block.StartCol {
			counter = i
			break
		}
	}
	if site < 0 || counter < 0 {
		return "", fmt.Errorf("%s:%d: no comparison of the current build of %s", b.File, b.Line, s.target.Name)
	}
	entries := s.corpus.list()
	if in, ok := s.blk.known(bin, site, len(entries), time.Now()); ok {
		return in, nil
	}
	reached := uint32(len(bin.Blocks) + bin.CmpSites[site].Counter)
	r := &replayer{s: s, solve: &fuzzrt.SolveArgs{Site: int32(site), Counter: uint32(counter), Max: solveMax}}
	defer r.close()
	tried := 0
	for _, e := range entries {
		if tried == solveEntries || r.solved != "" {
			break
		}
		if !slices.ContainsFunc(e.cov, func(c uint32) bool { return c>>8 == reached }) {
			continue
		}
		tried++
		r.run(ctx, e.input)
		if err := ctx.Err(); err != nil {
			return "", err
		}
	}
	s.blk.setSolution(bin, site, solution{input: r.solved, corpus: len(entries), at: time.Now()})
	return r.solved, nil
}

// blockers finds the blockers among the sites that have a summary.
func blockers(bin *instrument.Binary, hit []bool, sites func(func(int, fuzzrt.CmpSummary))) []Blocker {
	byFile := map[int][]int{} // file → its blocks, in source order
	for i, b := range bin.Blocks {
		byFile[b.File] = append(byFile[b.File], i)
	}
	for _, bs := range byFile {
		sort.Slice(bs, func(x, y int) bool {
			a, b := bin.Blocks[bs[x]], bin.Blocks[bs[y]]
			return a.StartLine < b.StartLine || a.StartLine == b.StartLine && a.StartCol < b.StartCol
		})
	}
	before := func(l1, c1, l2, c2 int) bool { return l1 < l2 || l1 == l2 && c1 <= c2 }
	funcs := map[int][]funcDecl{}
	exprs := map[int]map[[2]int]cmpExpr{}
	var out []Blocker
	sites(func(i int, sum fuzzrt.CmpSummary) {
		cs := bin.CmpSites[i]
		// The enclosing block is reached; the first block after the comparison,
		// starting on its line or the next, is not.
		enclosing, next := -1, -1
		for _, bi := range byFile[cs.File] {
			b := bin.Blocks[bi]
			if before(b.StartLine, b.StartCol, cs.Line, cs.Col) && before(cs.Line, cs.Col, b.EndLine, b.EndCol) {
				enclosing = bi
			}
			if next < 0 && !before(b.StartLine, b.StartCol, cs.Line, cs.Col) {
				next = bi
			}
		}
		if enclosing < 0 || next < 0 || !hit[enclosing] || hit[next] || bin.Blocks[next].StartLine > cs.Line+1 {
			return
		}
		if exprs[cs.File] == nil {
			exprs[cs.File] = parseCmpExprs(bin.Files[cs.File])
			funcs[cs.File] = parseFuncs(bin, cs.File)
		}
		ce, ok := exprs[cs.File][[2]int{cs.Line, cs.Col}]
		if !ok {
			return
		}
		nb := bin.Blocks[next]
		bl := Blocker{File: bin.Files[cs.File], Line: cs.Line, Col: cs.Col, Expr: ce.text, Want: ce.want,
			Block:  Block{File: bin.Files[cs.File], StartLine: nb.StartLine, StartCol: nb.StartCol, EndLine: nb.EndLine, EndCol: nb.EndCol},
			Behind: 1, Count: sum.Count}
		for _, d := range funcs[cs.File] {
			if d.holds(nb) {
				bl.Behind = 0
				for _, bi := range d.blocks(bin) {
					if b := bin.Blocks[bi]; !hit[bi] && before(nb.StartLine, nb.StartCol, b.StartLine, b.StartCol) {
						bl.Behind++
					}
				}
			}
		}
		// The operand shown is the one that is not the constant (both, "a vs b",
		// when neither is).
		show := func(v fuzzrt.CmpValue) string {
			switch ce.constSide {
			case 'a':
				return v.B
			case 'b':
				return v.A
			}
			return v.A + " vs " + v.B
		}
		near, freq := sum.Vals[0], sum.Vals[0]
		for _, v := range sum.Vals {
			if v.Dist < near.Dist {
				near = v
			}
			if v.Count > freq.Count {
				freq = v
			}
		}
		bl.Nearest, bl.Frequent, bl.FrequentCount = show(near), show(freq), freq.Count
		out = append(out, bl)
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Behind != out[j].Behind {
			return out[i].Behind > out[j].Behind
		}
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out
}

// cmpExpr is a comparison's text and which operand (a, b or neither: 0) is the
// constant.
type cmpExpr struct {
	text      string
	want      string
	constSide byte
}

// parseCmpExprs returns the comparisons of a file by the position of their
// site (see instrument.CmpSite): binary comparisons by their operator, calls by
// their parenthesis, switch cases by their value.
func parseCmpExprs(file string) map[[2]int]cmpExpr {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, 0)
	if err != nil {
		return nil
	}
	text := func(e ast.Node) string {
		s := string(src[fset.Position(e.Pos()).Offset:fset.Position(e.End()).Offset])
		s = strings.Join(strings.Fields(s), " ")
		if len(s) > 80 {
			s = s[:80] + "…"
		}
		return s
	}
	at := func(p token.Pos) [2]int {
		pos := fset.PositionFor(p, false)
		return [2]int{pos.Line, pos.Column}
	}
	out := map[[2]int]cmpExpr{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if n.Op == token.QUO || n.Op == token.REM {
				return true // a divisor's hook guards no branch: never a blocker
			}
			ce := cmpExpr{text: text(n)}
			switch {
			case constLike(n.Y):
				ce.constSide, ce.want = 'b', text(n.Y)
			case constLike(n.X):
				ce.constSide, ce.want = 'a', text(n.X)
			}
			out[at(n.OpPos)] = ce
		case *ast.CallExpr:
			ce := cmpExpr{text: text(n)}
			if len(n.Args) == 2 && constLike(n.Args[1]) {
				ce.constSide, ce.want = 'b', text(n.Args[1])
			}
			out[at(n.Lparen)] = ce
		case *ast.SwitchStmt:
			if n.Tag == nil {
				break
			}
			for _, s := range n.Body.List {
				for _, e := range s.(*ast.CaseClause).List {
					out[at(e.Pos())] = cmpExpr{text: text(n.Tag) + " == " + text(e), want: text(e), constSide: 'b'}
				}
			}
		}
		return true
	})
	return out
}

// constLike reports whether e is written as a constant: a literal, a composite
// literal of literals, a declared constant, or arithmetic of those.
func constLike(e ast.Expr) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.BasicLit:
		return true
	case *ast.Ident:
		return e.Obj != nil && e.Obj.Kind == ast.Con || e.Name == "nil" || e.Name == "true" || e.Name == "false"
	case *ast.UnaryExpr:
		return constLike(e.X)
	case *ast.BinaryExpr:
		return constLike(e.X) && constLike(e.Y)
	case *ast.CompositeLit:
		for _, el := range e.Elts {
			if !constLike(el) {
				return false
			}
		}
		return true
	}
	return false
}
