// Package expr evaluates arithmetic expressions (digits, + - * /, parentheses)
// by compiling them for a small stack machine. Its planted bug: the machine's
// stack holds 12 values, and a valid expression whose right operands nest
// deeper needs more (1+(1+(1+…)) twelve times): index out of range.
package expr

import "errors"

// Node is a parsed expression: a number (Op 0) or a binary operation.
type Node struct {
	Op          byte
	Num         int
	Left, Right *Node
}

// String is n in full parentheses, which Parse reads back as n.
func (n *Node) String() string {
	if n.Op == 0 {
		return string(rune('0' + n.Num))
	}
	return "(" + n.Left.String() + string(n.Op) + n.Right.String() + ")"
}

var errSyntax = errors.New("syntax error")

// Parse reads an expression; it fails on anything but a whole valid one.
func Parse(s string) (*Node, error) {
	p := &parser{s: s}
	n, err := p.sum()
	if err != nil {
		return nil, err
	}
	if p.i != len(s) {
		return nil, errSyntax
	}
	return n, nil
}

type parser struct {
	s string
	i int
}

func (p *parser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *parser) sum() (*Node, error) {
	l, err := p.product()
	for err == nil && (p.peek() == '+' || p.peek() == '-') {
		op := p.peek()
		p.i++
		var r *Node
		if r, err = p.product(); err == nil {
			l = &Node{Op: op, Left: l, Right: r}
		}
	}
	return l, err
}

func (p *parser) product() (*Node, error) {
	l, err := p.atom()
	for err == nil && (p.peek() == '*' || p.peek() == '/') {
		op := p.peek()
		p.i++
		var r *Node
		if r, err = p.atom(); err == nil {
			l = &Node{Op: op, Left: l, Right: r}
		}
	}
	return l, err
}

func (p *parser) atom() (*Node, error) {
	switch c := p.peek(); {
	case c >= '0' && c <= '9':
		p.i++
		return &Node{Num: int(c - '0')}, nil
	case c == '(':
		p.i++
		n, err := p.sum()
		if err != nil {
			return nil, err
		}
		if p.peek() != ')' {
			return nil, errSyntax
		}
		p.i++
		return n, nil
	}
	return nil, errSyntax
}

// Eval parses s and runs it on the stack machine; division by zero gives 0.
func Eval(s string) (int, error) {
	n, err := Parse(s)
	if err != nil {
		return 0, err
	}
	var code []*Node
	compile(n, &code)
	var m machine
	for _, c := range code {
		if c.Op == 0 {
			m.push(c.Num)
			continue
		}
		b, a := m.pop(), m.pop()
		switch c.Op {
		case '+':
			m.push(a + b)
		case '-':
			m.push(a - b)
		case '*':
			m.push(a * b)
		case '/':
			if b == 0 {
				m.push(0)
			} else {
				m.push(a / b)
			}
		}
	}
	return m.pop(), nil
}

// compile appends n in postfix order.
func compile(n *Node, code *[]*Node) {
	if n.Op != 0 {
		compile(n.Left, code)
		compile(n.Right, code)
	}
	*code = append(*code, n)
}

type machine struct {
	stack [12]int
	sp    int
}

func (m *machine) push(v int) {
	m.stack[m.sp] = v // the bug: no room past 12
	m.sp++
}

func (m *machine) pop() int {
	m.sp--
	return m.stack[m.sp]
}
