package fuzzrt

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// A line of a corpus file is a Go expression, which the toolchain reads with
// go/parser (internal/fuzz.parseCorpusValue). The runtime does not import
// go/parser (nor go/scanner, go/token, go/ast): it would then be a package the
// user's test binary holds, and its standard library targets could not be
// fuzzed with it. So parseLine reads the line as go/scanner and go/parser do
// (the scanner's rules for tokens, literals, comments and encodings are those of
// $GOROOT/src/go/scanner/scanner.go), into the few node kinds a corpus value's
// checks (encoding.go) tell apart. It accepts a line exactly when go/parser
// does, for every line that can hold a value; other expressions, which the
// checks refuse anyway, are parsed as far as the checks' messages need.
// TestParseLineAsGoParser holds it to go/parser.

// Token kinds, named after go/token's.
type lineTok uint8

const (
	tEOF lineTok = iota
	tIllegal
	tIdent
	tInt
	tFloat
	tImag
	tChar
	tString
	tLParen
	tRParen
	tLBrack
	tRBrack
	tLBrace
	tRBrace
	tPeriod
	tEllipsis
	tComma
	tSemicolon
	tColon
	tOp // any operator; its text says which
)

// punctuation is the token of each character that is one by itself.
var punctuation = [...]lineTok{'(': tLParen, ')': tRParen, '[': tLBrack, ']': tRBrack, '{': tLBrace, '}': tRBrace, ',': tComma, ';': tSemicolon}

// lineToken is one token of a line: its kind, its text and where it starts (a byte offset).
type lineToken struct {
	tok  lineTok
	lit  string
	offs int
}

func (t lineToken) String() string {
	switch t.tok {
	case tEOF:
		return "'EOF'"
	case tIdent, tInt, tFloat, tImag, tChar, tString:
		return t.lit
	}
	return "'" + t.lit + "'"
}

// lineError is the first error of a line, at byte offset offs, as go/parser
// spells it (its file name is "(test)", as the toolchain's).
type lineError struct {
	offs int
	msg  string
}

func (e *lineError) Error() string { return "(test):1:" + strconv.Itoa(e.offs+1) + ": " + e.msg }

// lineScanner is go/scanner's Scanner for one line, without positions beyond
// the byte offset; errors are kept, the first (by offset) reported.
type lineScanner struct {
	src      string
	ch       rune // current character; < 0 at the end
	offset   int  // its offset
	rdOffset int  // the offset after it
	err      *lineError
}

const bom = 0xFEFF

func (s *lineScanner) error(offs int, msg string) {
	if s.err == nil || offs < s.err.offs {
		s.err = &lineError{offs, msg}
	}
}

func (s *lineScanner) init(src string) {
	s.src = src
	s.next()
	if s.ch == bom {
		s.next() // ignored at the beginning, as go/scanner does
	}
}

func (s *lineScanner) next() {
	if s.rdOffset >= len(s.src) {
		s.offset, s.ch = len(s.src), -1
		return
	}
	s.offset = s.rdOffset
	r, w := rune(s.src[s.rdOffset]), 1
	switch {
	case r == 0:
		s.error(s.offset, "illegal character NUL")
	case r >= utf8.RuneSelf:
		r, w = utf8.DecodeRuneInString(s.src[s.rdOffset:])
		if r == utf8.RuneError && w == 1 {
			in := s.src[s.rdOffset:]
			if s.offset == 0 && len(in) >= 2 && (in[0] == 0xFF && in[1] == 0xFE || in[0] == 0xFE && in[1] == 0xFF) {
				s.error(s.offset, "illegal UTF-8 encoding (got UTF-16)")
				s.rdOffset += len(in)
			} else {
				s.error(s.offset, "illegal UTF-8 encoding")
			}
		} else if r == bom && s.offset > 0 {
			s.error(s.offset, "illegal byte order mark")
		}
	}
	s.rdOffset += w
	s.ch = r
}

func (s *lineScanner) peek() byte {
	if s.rdOffset < len(s.src) {
		return s.src[s.rdOffset]
	}
	return 0
}

func lower(ch rune) rune     { return ('a' - 'A') | ch }
func isDecimal(ch rune) bool { return '0' <= ch && ch <= '9' }
func isHex(ch rune) bool     { return '0' <= ch && ch <= '9' || 'a' <= lower(ch) && lower(ch) <= 'f' }
func isLetter(ch rune) bool {
	return 'a' <= lower(ch) && lower(ch) <= 'z' || ch == '_' || ch >= utf8.RuneSelf && unicode.IsLetter(ch)
}
func isDigit(ch rune) bool { return isDecimal(ch) || ch >= utf8.RuneSelf && unicode.IsDigit(ch) }

func digitVal(ch rune) int {
	switch {
	case '0' <= ch && ch <= '9':
		return int(ch - '0')
	case 'a' <= lower(ch) && lower(ch) <= 'f':
		return int(lower(ch) - 'a' + 10)
	}
	return 16
}

// scan returns the next token, comments and white space skipped.
func (s *lineScanner) scan() lineToken {
	for {
		for s.ch == ' ' || s.ch == '\t' || s.ch == '\n' || s.ch == '\r' {
			s.next()
		}
		offs, ch := s.offset, s.ch
		switch {
		case isLetter(ch):
			for isLetter(s.ch) || isDigit(s.ch) {
				s.next()
			}
			return lineToken{tIdent, s.src[offs:s.offset], offs}
		case isDecimal(ch) || ch == '.' && isDecimal(rune(s.peek())):
			tok := s.scanNumber()
			return lineToken{tok, s.src[offs:s.offset], offs}
		}
		s.next()
		t := lineToken{offs: offs}
		switch ch {
		case -1:
			t.tok = tEOF
		case '"':
			t.tok, t.lit = tString, s.scanString(offs)
		case '\'':
			t.tok, t.lit = tChar, s.scanRune(offs)
		case '`':
			t.tok, t.lit = tString, s.scanRawString(offs)
		case '/':
			if s.ch == '/' || s.ch == '*' {
				s.skipComment(offs)
				continue
			}
			t.tok = tOp
		case '.':
			t.tok = tPeriod
			if s.ch == '.' && s.peek() == '.' {
				s.next()
				s.next()
				t.tok = tEllipsis
			}
		case '(', ')', '[', ']', '{', '}', ',', ';':
			t.tok = punctuation[ch]
		case ':':
			t.tok = tColon
			if s.ch == '=' {
				s.next()
				t.tok = tOp
			}
		case '+', '-', '*', '%', '^', '<', '>', '=', '!', '&', '|', '~':
			t.tok = tOp
			s.operator(ch)
		default:
			if ch != bom {
				if ch == '“' || ch == '”' {
					s.error(offs, "curly quotation mark "+strconv.QuoteRune(ch)+" (use neutral '\"')")
				} else {
					s.error(offs, "illegal character "+unicodeName(ch))
				}
			}
			t.tok = tIllegal
		}
		if t.lit == "" {
			t.lit = s.src[offs:s.offset]
		}
		return t
	}
}

// unicodeName spells ch as fmt's %#U does.
func unicodeName(ch rune) string {
	hex := strconv.FormatInt(int64(ch), 16)
	for len(hex) < 4 {
		hex = "0" + hex
	}
	name := "U+" + toUpper(hex)
	if strconv.IsPrint(ch) {
		name += " '" + string(ch) + "'"
	}
	return name
}

func toUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// operator reads the rest of an operator starting with ch (already read), as
// the scanner's longest match: "-" "--" "-=", "<-" "<<=", "&^=" ….
func (s *lineScanner) operator(ch rune) {
	switch ch {
	case '<':
		if s.ch == '-' {
			s.next()
			return
		}
		if s.ch == '<' {
			s.next()
		}
	case '>':
		if s.ch == '>' {
			s.next()
		}
	case '&':
		if s.ch == '^' || s.ch == '&' {
			amp := s.ch == '&'
			s.next()
			if amp {
				return
			}
		}
	case '+', '-', '|':
		if s.ch == ch {
			s.next()
			return
		}
	case '~':
		return
	}
	if s.ch == '=' {
		s.next()
	}
}

func (s *lineScanner) skipComment(offs int) {
	if s.ch == '/' {
		for s.ch != '\n' && s.ch >= 0 {
			s.next()
		}
		return
	}
	s.next()
	for s.ch >= 0 {
		ch := s.ch
		s.next()
		if ch == '*' && s.ch == '/' {
			s.next()
			return
		}
	}
	s.error(offs, "comment not terminated")
}

func litname(prefix rune) string {
	switch prefix {
	case 'x':
		return "hexadecimal literal"
	case 'o', '0':
		return "octal literal"
	case 'b':
		return "binary literal"
	}
	return "decimal literal"
}

func (s *lineScanner) digits(base int, invalid *int) (digsep int) {
	if base <= 10 {
		maxDigit := rune('0' + base)
		for isDecimal(s.ch) || s.ch == '_' {
			ds := 1
			if s.ch == '_' {
				ds = 2
			} else if s.ch >= maxDigit && *invalid < 0 {
				*invalid = s.offset
			}
			digsep |= ds
			s.next()
		}
	} else {
		for isHex(s.ch) || s.ch == '_' {
			ds := 1
			if s.ch == '_' {
				ds = 2
			}
			digsep |= ds
			s.next()
		}
	}
	return
}

func (s *lineScanner) scanNumber() lineTok {
	offs := s.offset
	tok := tIllegal
	base, prefix, digsep, invalid := 10, rune(0), 0, -1
	if s.ch != '.' {
		tok = tInt
		if s.ch == '0' {
			s.next()
			switch lower(s.ch) {
			case 'x':
				s.next()
				base, prefix = 16, 'x'
			case 'o':
				s.next()
				base, prefix = 8, 'o'
			case 'b':
				s.next()
				base, prefix = 2, 'b'
			default:
				base, prefix = 8, '0'
				digsep = 1
			}
		}
		digsep |= s.digits(base, &invalid)
	}
	if s.ch == '.' {
		tok = tFloat
		if prefix == 'o' || prefix == 'b' {
			s.error(s.offset, "invalid radix point in "+litname(prefix))
		}
		s.next()
		digsep |= s.digits(base, &invalid)
	}
	if digsep&1 == 0 {
		s.error(s.offset, litname(prefix)+" has no digits")
	}
	if e := lower(s.ch); e == 'e' || e == 'p' {
		switch {
		case e == 'e' && prefix != 0 && prefix != '0':
			s.error(s.offset, strconv.QuoteRune(s.ch)+" exponent requires decimal mantissa")
		case e == 'p' && prefix != 'x':
			s.error(s.offset, strconv.QuoteRune(s.ch)+" exponent requires hexadecimal mantissa")
		}
		s.next()
		tok = tFloat
		if s.ch == '+' || s.ch == '-' {
			s.next()
		}
		ds := s.digits(10, nil)
		digsep |= ds
		if ds&1 == 0 {
			s.error(s.offset, "exponent has no digits")
		}
	} else if prefix == 'x' && tok == tFloat {
		s.error(s.offset, "hexadecimal mantissa requires a 'p' exponent")
	}
	if s.ch == 'i' {
		tok = tImag
		s.next()
	}
	lit := s.src[offs:s.offset]
	if tok == tInt && invalid >= 0 {
		s.error(invalid, "invalid digit "+strconv.QuoteRune(rune(lit[invalid-offs]))+" in "+litname(prefix))
	}
	if digsep&2 != 0 {
		if i := invalidSep(lit); i >= 0 {
			s.error(offs+i, "'_' must separate successive digits")
		}
	}
	return tok
}

func invalidSep(x string) int {
	x1 := ' '
	d := '.'
	i := 0
	if len(x) >= 2 && x[0] == '0' {
		x1 = lower(rune(x[1]))
		if x1 == 'x' || x1 == 'o' || x1 == 'b' {
			d = '0'
			i = 2
		}
	}
	for ; i < len(x); i++ {
		p := d
		d = rune(x[i])
		switch {
		case d == '_':
			if p != '0' {
				return i
			}
		case isDecimal(d) || x1 == 'x' && isHex(d):
			d = '0'
		default:
			if p == '_' {
				return i - 1
			}
			d = '.'
		}
	}
	if d == '_' {
		return len(x) - 1
	}
	return -1
}

func (s *lineScanner) scanEscape(quote rune) bool {
	offs := s.offset
	var n int
	var base, maxVal uint32
	switch s.ch {
	case 'a', 'b', 'f', 'n', 'r', 't', 'v', '\\', quote:
		s.next()
		return true
	case '0', '1', '2', '3', '4', '5', '6', '7':
		n, base, maxVal = 3, 8, 255
	case 'x':
		s.next()
		n, base, maxVal = 2, 16, 255
	case 'u':
		s.next()
		n, base, maxVal = 4, 16, unicode.MaxRune
	case 'U':
		s.next()
		n, base, maxVal = 8, 16, unicode.MaxRune
	default:
		msg := "unknown escape sequence"
		if s.ch < 0 {
			msg = "escape sequence not terminated"
		}
		s.error(offs, msg)
		return false
	}
	var x uint32
	for n > 0 {
		d := uint32(digitVal(s.ch))
		if d >= base {
			msg := "illegal character " + unicodeName(s.ch) + " in escape sequence"
			if s.ch < 0 {
				msg = "escape sequence not terminated"
			}
			s.error(s.offset, msg)
			return false
		}
		x = x*base + d
		s.next()
		n--
	}
	if x > maxVal || 0xD800 <= x && x < 0xE000 {
		s.error(offs, "escape sequence is invalid Unicode code point")
		return false
	}
	return true
}

func (s *lineScanner) scanRune(offs int) string {
	valid := true
	n := 0
	for {
		ch := s.ch
		if ch == '\n' || ch < 0 {
			if valid {
				s.error(offs, "rune literal not terminated")
				valid = false
			}
			break
		}
		s.next()
		if ch == '\'' {
			break
		}
		n++
		if ch == '\\' {
			if !s.scanEscape('\'') {
				valid = false
			}
		}
	}
	if valid && n != 1 {
		s.error(offs, "illegal rune literal")
	}
	return s.src[offs:s.offset]
}

func (s *lineScanner) scanString(offs int) string {
	for {
		ch := s.ch
		if ch == '\n' || ch < 0 {
			s.error(offs, "string literal not terminated")
			break
		}
		s.next()
		if ch == '"' {
			break
		}
		if ch == '\\' {
			s.scanEscape('"')
		}
	}
	return s.src[offs:s.offset]
}

// scanRawString returns a raw string literal without its carriage returns, as
// the scanner does.
func (s *lineScanner) scanRawString(offs int) string {
	for {
		ch := s.ch
		if ch < 0 {
			s.error(offs, "raw string literal not terminated")
			break
		}
		s.next()
		if ch == '`' {
			break
		}
	}
	lit := []byte(s.src[offs:s.offset])
	out := lit[:0]
	for _, c := range lit {
		if c != '\r' {
			out = append(out, c)
		}
	}
	return string(out)
}

// A node is an expression, as far as the checks of a corpus value tell kinds
// apart (go/ast's node of the same name in brackets).
type node struct {
	kind   nodeKind
	tok    lineTok // nLit: the literal's kind
	text   string  // nLit: its text; nIdent: the name; nUnary: the operator; nSelector: the selected name
	x      *node   // nUnary, nStar, nParen: the operand; nSelector: what is selected from; nCall: the function; nArray: the element type
	hasLen bool    // nArray: a length or ... between the brackets
	args   []*node // nCall
}

type nodeKind uint8

const (
	nOther    nodeKind = iota // any other expression
	nLit                      // [ast.BasicLit]
	nIdent                    // [ast.Ident]
	nUnary                    // [ast.UnaryExpr]
	nStar                     // [ast.StarExpr]
	nParen                    // [ast.ParenExpr]
	nSelector                 // [ast.SelectorExpr]
	nCall                     // [ast.CallExpr]
	nArray                    // [ast.ArrayType]
)

// maxNest bounds the nesting of expressions, as go/parser's maxNestLev.
const maxNest = 1e5

// lineParser is go/parser's expression parser, for one line.
type lineParser struct {
	s    lineScanner
	tok  lineToken
	nest int
	err  *lineError
}

// parseLine parses line as go/parser.ParseExprFrom does; the error is the
// first, by position, of the scanner's and the parser's.
func parseLine(line string) (*node, error) {
	p := &lineParser{}
	p.s.init(line)
	p.next()
	x := p.expr()
	p.expect(tEOF, "EOF")
	err := p.err
	if p.s.err != nil && (err == nil || p.s.err.offs <= err.offs) {
		err = p.s.err
	}
	if err != nil {
		return nil, err
	}
	return x, nil
}

func (p *lineParser) next() { p.tok = p.s.scan() }

// fail records a syntax error at the current token; the parser stops there.
func (p *lineParser) fail(what string) {
	if p.err == nil {
		p.err = &lineError{p.tok.offs, "expected " + what + ", found " + p.tok.String()}
	}
	p.tok = lineToken{tok: tEOF, offs: len(p.s.src)}
	p.s.offset, p.s.rdOffset, p.s.ch = len(p.s.src), len(p.s.src), -1
}

func (p *lineParser) expect(tok lineTok, what string) {
	if p.tok.tok != tok {
		p.fail("'" + what + "'")
		return
	}
	p.next()
}

func (p *lineParser) isOp(ops ...string) bool {
	if p.tok.tok != tOp {
		return false
	}
	for _, op := range ops {
		if p.tok.lit == op {
			return true
		}
	}
	return false
}

// expr is a binary expression; only whether there is an operator matters.
func (p *lineParser) expr() *node {
	x := p.unary()
	for p.err == nil && p.isOp("||", "&&", "==", "!=", "<", "<=", ">", ">=", "+", "-", "|", "^", "*", "/", "%", "<<", ">>", "&", "&^") {
		p.next()
		p.unary()
		x = &node{kind: nOther}
	}
	return x
}

func (p *lineParser) unary() *node {
	if p.nest++; p.nest > maxNest {
		if p.err == nil {
			p.err = &lineError{p.tok.offs, "exceeded max nesting depth"}
		}
		p.fail("")
		return &node{}
	}
	defer func() { p.nest-- }()
	switch {
	case p.isOp("+", "-", "!", "^", "&", "~", "<-"):
		op := p.tok.lit
		p.next()
		return &node{kind: nUnary, text: op, x: p.unary()}
	case p.isOp("*"):
		p.next()
		return &node{kind: nStar, x: p.unary()}
	}
	return p.primary()
}

func (p *lineParser) primary() *node {
	x := p.operand()
	for p.err == nil {
		switch p.tok.tok {
		case tPeriod:
			p.next()
			switch p.tok.tok {
			case tIdent:
				x = &node{kind: nSelector, text: p.tok.lit, x: x}
				p.next()
			case tLParen: // a type assertion
				p.next()
				p.expr()
				p.expect(tRParen, ")")
				x = &node{kind: nOther}
			default:
				p.fail("selector or type assertion")
			}
		case tLBrack: // an index or a slice expression
			p.next()
			for p.err == nil && p.tok.tok != tRBrack {
				if p.tok.tok != tColon && p.tok.tok != tComma {
					p.expr()
				}
				if p.tok.tok == tColon || p.tok.tok == tComma {
					p.next()
				} else {
					break
				}
			}
			p.expect(tRBrack, "]")
			x = &node{kind: nOther}
		case tLParen:
			x = p.call(x)
		default:
			return x
		}
	}
	return x
}

// call parses the arguments of a call of fun, as parseCallOrConversion: an
// argument list may end with ... and a comma.
func (p *lineParser) call(fun *node) *node {
	p.next()
	c := &node{kind: nCall, x: fun}
	ellipsis := false
	for p.err == nil && p.tok.tok != tRParen && p.tok.tok != tEOF && !ellipsis {
		c.args = append(c.args, p.expr())
		if p.tok.tok == tEllipsis {
			ellipsis = true
			p.next()
		}
		if p.tok.tok != tComma {
			break
		}
		p.next()
	}
	p.expect(tRParen, ")")
	return c
}

func (p *lineParser) operand() *node {
	t := p.tok
	switch t.tok {
	case tIdent:
		p.next()
		return &node{kind: nIdent, text: t.lit}
	case tInt, tFloat, tImag, tChar, tString:
		p.next()
		return &node{kind: nLit, tok: t.tok, text: t.lit}
	case tLParen:
		p.next()
		x := p.expr()
		p.expect(tRParen, ")")
		return &node{kind: nParen, x: x}
	case tLBrack:
		p.next()
		a := &node{kind: nArray}
		if p.tok.tok != tRBrack {
			a.hasLen = true
			if p.tok.tok == tEllipsis {
				p.next()
			} else {
				p.expr()
			}
		}
		p.expect(tRBrack, "]")
		a.x = p.typ()
		return a
	}
	p.fail("operand")
	return &node{}
}

// typ parses the element type of an array or slice type: a name, qualified or
// not, or another array or slice type, a pointer or a parenthesized type.
func (p *lineParser) typ() *node {
	switch {
	case p.tok.tok == tIdent:
		x := &node{kind: nIdent, text: p.tok.lit}
		p.next()
		if p.tok.tok == tPeriod {
			p.next()
			if p.tok.tok != tIdent {
				p.fail("name")
				return x
			}
			x = &node{kind: nSelector, text: p.tok.lit, x: x}
			p.next()
		}
		return x
	case p.tok.tok == tLBrack, p.tok.tok == tLParen:
		return p.operand()
	case p.isOp("*"):
		p.next()
		return &node{kind: nStar, x: p.typ()}
	}
	p.fail("type")
	return &node{}
}
