// Package calc evaluates integer arithmetic expressions such as "(1+2)*3".
package calc

import "fmt"

// Eval evaluates expr: integers, + - * /, and parentheses.
func Eval(expr string) (int, error) {
	p := &parser{src: expr}
	v, err := p.expr()
	if err != nil {
		return 0, err
	}
	if p.pos < len(p.src) {
		return 0, fmt.Errorf("unexpected %q at %d", p.src[p.pos], p.pos)
	}
	return v, nil
}

type parser struct {
	src string
	pos int
}

func (p *parser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *parser) expr() (int, error) {
	v, err := p.term()
	if err != nil {
		return 0, err
	}
	for p.peek() == '+' || p.peek() == '-' {
		op := p.src[p.pos]
		p.pos++
		w, err := p.term()
		if err != nil {
			return 0, err
		}
		if op == '+' {
			v += w
		} else {
			v -= w
		}
	}
	return v, nil
}

func (p *parser) term() (int, error) {
	v, err := p.factor()
	if err != nil {
		return 0, err
	}
	for p.peek() == '*' || p.peek() == '/' {
		op := p.src[p.pos]
		p.pos++
		w, err := p.factor()
		if err != nil {
			return 0, err
		}
		if op == '*' {
			v *= w
		} else {
			v /= w // BUG: division by zero panics
		}
	}
	return v, nil
}

func (p *parser) factor() (int, error) {
	if p.peek() == '(' {
		p.pos++
		v, err := p.expr()
		if err != nil {
			return 0, err
		}
		if p.peek() != ')' {
			return 0, fmt.Errorf("missing ) at %d", p.pos)
		}
		p.pos++
		return v, nil
	}
	start := p.pos
	v := 0
	for p.peek() >= '0' && p.peek() <= '9' {
		v = v*10 + int(p.src[p.pos]-'0')
		p.pos++
	}
	if p.pos == start {
		return 0, fmt.Errorf("number expected at %d", p.pos)
	}
	return v, nil
}
