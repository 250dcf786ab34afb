package expr

import (
	"testing"

	"fuzzls.dev/fuzzls/fuzzhook"
)

func FuzzExpr(f *testing.F) {
	f.Add("1+2*3")
	f.Fuzz(func(t *testing.T, s string) {
		Eval(s)
	})
}

// FuzzExprGrammar is FuzzExpr with a grammar-aware mutator: it replaces a
// random subexpression of a valid input with a random expression (an invalid
// input is replaced whole). go test ignores it, and runs FuzzExprGrammar as
// FuzzExpr.
func FuzzExprGrammar(f *testing.F) {
	f.Add("1+2*3")
	fuzzhook.Mutator(f, mutate)
	f.Fuzz(func(t *testing.T, s string) {
		Eval(s)
	})
}

func mutate(data []byte, rand uint64) []byte {
	r := rng(rand | 1) // xorshift stays at 0
	n, err := Parse(string(data))
	if err != nil {
		return []byte(r.expr(12).String())
	}
	var nodes []**Node
	var walk func(p **Node)
	walk = func(p **Node) {
		nodes = append(nodes, p)
		if (*p).Op != 0 {
			walk(&(*p).Left)
			walk(&(*p).Right)
		}
	}
	walk(&n)
	*nodes[r.intn(len(nodes))] = r.expr(1 + r.intn(12))
	if s := n.String(); len(s) <= 1000 {
		return []byte(s)
	}
	return []byte(r.expr(12).String())
}

// rng is a small PRNG (xorshift) seeded by the engine's random number.
type rng uint64

func (r *rng) intn(n int) int {
	*r ^= *r << 13
	*r ^= *r >> 7
	*r ^= *r << 17
	return int(uint64(*r) % uint64(n))
}

// expr is a random expression of at most depth levels of operations.
func (r *rng) expr(depth int) *Node {
	if depth == 0 || r.intn(3) == 0 {
		return &Node{Num: r.intn(10)}
	}
	return &Node{Op: "+-*/"[r.intn(4)], Left: r.expr(depth - 1), Right: r.expr(depth - 1)}
}
