package fuzzrt

import "bytes"

// Text-aware byte mutations. Parsers of text formats (TOML, YAML, HTML, JSON,
// protocol headers) read lines and words; these ops move whole ones, so a
// mutation composes pieces the parser already accepts instead of breaking one.
// Each reports false on input without the structure it needs (no line break, no
// word), and the caller picks another op.

// isWordByte reports whether c continues a word: letters, digits, and the
// punctuation that identifiers, numbers and dates are made of.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c >= 0x80
}

// lineAt returns the bounds of the line holding b[i]; end is past its '\n'.
func lineAt(b []byte, i int) (start, end int) {
	start = bytes.LastIndexByte(b[:i], '\n') + 1
	end = len(b)
	if j := bytes.IndexByte(b[i:], '\n'); j >= 0 {
		end = i + j + 1
	}
	return start, end
}

// lineStart returns a random position at the start of a line of b (len(b) counts).
func (m *Mutator) lineStart(b []byte) int {
	p := m.r.Intn(len(b) + 1)
	if p == len(b) {
		return p
	}
	s, _ := lineAt(b, p)
	return s
}

// wordAt returns the bounds of a random word of b, or ok false when the byte
// picked and its neighbours hold none.
func (m *Mutator) wordAt(b []byte) (start, end int, ok bool) {
	p := m.r.Intn(len(b))
	for p < len(b) && !isWordByte(b[p]) {
		p++
	}
	if p == len(b) {
		return 0, 0, false
	}
	start, end = p, p
	for start > 0 && isWordByte(b[start-1]) {
		start--
	}
	for end < len(b) && isWordByte(b[end]) {
		end++
	}
	return start, end, true
}

// opDuplicateLine copies one line of b (with its break) to the start of another
// line: a second key, a second list item, a repeated header.
func opDuplicateLine(m *Mutator, b []byte) ([]byte, bool) {
	if len(b) == 0 || bytes.IndexByte(b, '\n') < 0 {
		return b, false
	}
	s, e := lineAt(b, m.r.Intn(len(b)))
	n := e - s
	if n > m.room(b) {
		return b, false
	}
	pos := m.lineStart(b)
	line := append(m.tmp[:0], b[s:e]...)
	m.tmp = line
	if pos == len(b) && line[len(line)-1] != '\n' {
		return b, false // would join two lines
	}
	b = m.makeRoom(b, pos, n)
	copy(b[pos:], line)
	return b, true
}

// opDeleteLine removes one line of b.
func opDeleteLine(m *Mutator, b []byte) ([]byte, bool) {
	if len(b) == 0 || bytes.IndexByte(b, '\n') < 0 {
		return b, false
	}
	s, e := lineAt(b, m.r.Intn(len(b)))
	copy(b[s:], b[e:])
	return b[:len(b)-(e-s)], true
}

// opReplaceWord replaces a word of b with a dictionary token or with another
// word of b: a key becomes a known key, a value a value of another type.
func opReplaceWord(m *Mutator, b []byte) ([]byte, bool) {
	if len(b) == 0 {
		return b, false
	}
	s, e, ok := m.wordAt(b)
	if !ok {
		return b, false
	}
	var w []byte
	if len(m.tokens) > 0 && m.r.Bool() {
		w = m.pickToken()
	} else {
		ws, we, ok := m.wordAt(b)
		if !ok || we-ws == e-s && bytes.Equal(b[ws:we], b[s:e]) {
			return b, false
		}
		w = append(m.tmp[:0], b[ws:we]...)
		m.tmp = w
	}
	return m.replaceRange(b, s, e, w)
}

// replaceRange replaces b[s:e] with w, or reports false when that would pass maxLen.
func (m *Mutator) replaceRange(b []byte, s, e int, w []byte) ([]byte, bool) {
	if d := len(w) - (e - s); d > m.room(b) {
		return b, false
	} else if d > 0 {
		b = m.makeRoom(b, e, d)
	} else if d < 0 {
		copy(b[s+len(w):], b[e:])
		b = b[:len(b)+d]
	}
	copy(b[s:], w)
	return b, true
}

// opInsertTokenAtBoundary inserts a dictionary token where a word starts or
// ends, so that it lands beside the input's tokens rather than inside one.
func opInsertTokenAtBoundary(m *Mutator, b []byte) ([]byte, bool) {
	if len(m.tokens) == 0 || len(b) == 0 {
		return b, false
	}
	t := m.pickToken()
	if len(t) > m.room(b) {
		return b, false
	}
	pos := len(b)
	if s, e, ok := m.wordAt(b); ok {
		pos = s
		if m.r.Bool() {
			pos = e
		}
	}
	b = m.makeRoom(b, pos, len(t))
	copy(b[pos:], t)
	return b, true
}

// crossoverLines inserts one to four whole lines of o at a line start of b, or
// replaces one line of b with them. It reports false when either has no lines.
func crossoverLines[T []byte | string](m *Mutator, b []byte, o T) ([]byte, bool) {
	if len(b) > m.maxLen {
		b = b[:m.maxLen]
	}
	ob := []byte(o) // for string, one copy per splice; splices are rare
	if len(b) == 0 || len(ob) == 0 || bytes.IndexByte(b, '\n') < 0 || bytes.IndexByte(ob, '\n') < 0 {
		return b, false
	}
	s, e := lineAt(ob, m.r.Intn(len(ob)))
	for k := m.r.Intn(4); k > 0 && e < len(ob); k-- {
		_, e = lineAt(ob, e)
	}
	piece := ob[s:e]
	if m.r.Bool() { // replace a line of b
		bs, be := lineAt(b, m.r.Intn(len(b)))
		return m.replaceRange(b, bs, be, piece)
	}
	if len(piece) > m.room(b) {
		return b, false
	}
	pos := m.lineStart(b)
	b = m.makeRoom(b, pos, len(piece))
	copy(b[pos:], piece)
	return b, true
}
