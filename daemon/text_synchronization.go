package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	fproto "fuzzls.dev/fuzzls/protocol"
)

// A document is a file the client has open: its text is the client's, which
// may differ from the disk's while it has unsaved edits.
type document struct {
	*mapper
	path    string
	version int32
	dirty   bool      // edited since opened or saved
	edited  time.Time // last didChange (zero if none)
}

// DidOpen records the client's text and, with autoStart "openFiles", starts
// the targets the file declares.
func (s *server) DidOpen(ctx context.Context, params *protocol.DidOpenTextDocumentParams) error {
	path, err := filePath(params.TextDocument.URI)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.docs[pathKey(path)] = &document{mapper: newMapper(params.TextDocument.Text), path: path, version: params.TextDocument.Version}
	autoOpen := s.settings.AutoStart == fproto.AutoStartOpenFiles
	s.mu.Unlock()

	s.goSafe("didOpen", func() {
		if autoOpen && strings.HasSuffix(path, "_test.go") && s.inWorkspace(path) {
			for _, fn := range s.fuzzFuncs(path) {
				if err := s.startTarget(s.ctx, path, fn.name); err != nil {
					s.logf(protocol.MessageTypeWarning, "autoStart %s: %v", fn.name, err)
				}
			}
		}
		s.sendCoverageForFile(path)
	})
	return nil
}

// DidChange applies the client's edits in order. The first edit after a save
// drops the file's coverage ranges until the next build (they no longer match).
func (s *server) DidChange(ctx context.Context, params *protocol.DidChangeTextDocumentParams) error {
	path, err := filePath(params.TextDocument.URI)
	if err != nil {
		return err
	}
	s.mu.Lock()
	doc := s.docs[pathKey(path)]
	if doc == nil {
		s.mu.Unlock()
		return fmt.Errorf("didChange for %s, which is not open", path)
	}
	m := doc.mapper
	s.mu.Unlock()
	// Notifications run one at a time on the read loop, so nothing else
	// changes doc meanwhile; the edits are applied without s.mu, which the
	// requests answered during a storm of edits need. A text's line index is
	// built only when asked for: only the text an incremental change lands
	// in, or one a request reads.
	for _, ch := range params.ContentChanges {
		switch ch := ch.(type) {
		case *protocol.TextDocumentContentChangeWholeDocument:
			m = newMapper(ch.Text)
		case *protocol.TextDocumentContentChangePartial:
			start, end := m.offset(ch.Range.Start), m.offset(ch.Range.End)
			if end < start {
				start, end = end, start
			}
			m = newMapper(m.text[:start] + ch.Text + m.text[end:])
		}
	}
	s.mu.Lock()
	wasDirty := doc.dirty
	doc.mapper = m
	doc.version = params.TextDocument.Version
	doc.dirty = true
	doc.edited = time.Now()
	s.mu.Unlock()

	if !wasDirty {
		s.goSafe("didChange", func() { s.sendCoverageForFile(path) })
	}
	return nil
}

// DidSave marks the document clean and queues the file as changed (the file
// watcher sees the same save; the batcher merges both, and rebuilds sooner
// than after a file event alone: batcher.saved).
func (s *server) DidSave(ctx context.Context, params *protocol.DidSaveTextDocumentParams) error {
	path, err := filePath(params.TextDocument.URI)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if doc := s.docs[pathKey(path)]; doc != nil {
		if params.Text != nil {
			doc.mapper = newMapper(*params.Text)
		}
		doc.dirty = false
	}
	s.mu.Unlock()
	s.changes.saved(path)
	return nil
}

// DidClose forgets the client's text; the disk's is used from now on.
func (s *server) DidClose(ctx context.Context, params *protocol.DidCloseTextDocumentParams) error {
	path, err := filePath(params.TextDocument.URI)
	if err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.docs, pathKey(path))
	s.mu.Unlock()
	return nil
}

// fileText returns the text of path as the client has it (the open document,
// else the disk) and whether it has edits the last build has not seen.
func (s *server) fileText(path string) (m *mapper, stale bool, err error) {
	s.mu.Lock()
	doc := s.docs[pathKey(path)]
	var built time.Time
	if doc != nil {
		built = s.lastBuild[pathKey(filepath.Dir(path))]
	}
	s.mu.Unlock()
	if doc != nil {
		return doc.mapper, doc.dirty || (!doc.edited.IsZero() && doc.edited.After(built)), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false, err
	}
	return newMapper(string(data)), false, nil
}

// A mapper converts between byte offsets, the engine's 1-based lines and byte
// columns, and LSP positions (0-based lines, UTF-16 columns) in one text.
// The two count lines differently: Go (go/token, the compiler, stack traces)
// ends a line at "\n" alone, LSP at "\n", "\r\n" and a lone "\r", so a file
// with a lone "\r" (in a comment, a raw string) has more LSP lines than Go
// lines, and the engine's positions go through byte offsets. A "\r" before
// "\n" belongs to the line break in both (a file saved with CRLF). Invalid
// UTF-8 bytes count as one UTF-16 unit each (as U+FFFD would). The line
// starts are found on first use: of a storm of edits, most texts are never
// asked for a position.
type mapper struct {
	text string

	once    sync.Once
	lines   []int // byte offset of the start of each LSP line
	goLines []int // byte offset of the start of each Go line
}

func newMapper(text string) *mapper { return &mapper{text: text} }

// index finds the line starts, once; every method reading them calls it.
func (m *mapper) index() *mapper {
	m.once.Do(func() {
		if !strings.Contains(m.text, "\r") {
			// The common case, without a '\r' both count the same lines,
			// found a word at a time by IndexByte.
			m.lines = make([]int, 1, strings.Count(m.text, "\n")+1)
			for i := 0; ; {
				j := strings.IndexByte(m.text[i:], '\n')
				if j < 0 {
					break
				}
				i += j + 1
				m.lines = append(m.lines, i)
			}
			m.goLines = m.lines
			return
		}
		m.lines, m.goLines = []int{0}, []int{0}
		for i := 0; i < len(m.text); i++ {
			switch m.text[i] {
			case '\n':
				m.lines = append(m.lines, i+1)
				m.goLines = append(m.goLines, i+1)
			case '\r':
				if i+1 == len(m.text) || m.text[i+1] != '\n' {
					m.lines = append(m.lines, i+1)
				}
			}
		}
	})
	return m
}

// lineBounds returns the byte offsets of the start and end (before the line
// break) of LSP line (0-based); ok is false past the last line.
func (m *mapper) lineBounds(line int) (start, end int, ok bool) {
	return m.bounds(m.index().lines, line)
}

// bounds is lineBounds for the line starts given (LSP's or Go's).
func (m *mapper) bounds(starts []int, line int) (start, end int, ok bool) {
	if line < 0 || line >= len(starts) {
		return len(m.text), len(m.text), false
	}
	start = starts[line]
	end = len(m.text)
	if line+1 < len(starts) {
		end = starts[line+1] - 1 // the break's last byte: "\n" or a lone "\r"
		if m.text[end] == '\n' && end > start && m.text[end-1] == '\r' {
			end--
		}
	}
	return start, end, true
}

// goLine is the engine's (1-based) line of an LSP position.
func (m *mapper) goLine(pos protocol.Position) int {
	off := m.offset(pos)
	goLines := m.index().goLines
	return sort.Search(len(goLines), func(i int) bool { return goLines[i] > off })
}

// offset returns the byte offset of an LSP position, clamped into the text: a
// column past the end of its line is the line's end, a line past the last is
// the end of the text, and a column inside a surrogate pair is the rune's start.
func (m *mapper) offset(pos protocol.Position) int {
	start, end, ok := m.lineBounds(int(pos.Line))
	if !ok {
		return len(m.text)
	}
	units := uint32(0)
	for i := start; i < end; {
		if units >= pos.Character {
			return i
		}
		r, size := utf8.DecodeRuneInString(m.text[i:end])
		n := uint32(utf16Len(r))
		if units+n > pos.Character {
			return i
		}
		units += n
		i += size
	}
	return end
}

// position returns the LSP position of a byte offset (clamped into the text).
func (m *mapper) position(off int) protocol.Position {
	off = max(0, min(off, len(m.text)))
	lines := m.index().lines
	line := sort.Search(len(lines), func(i int) bool { return lines[i] > off }) - 1
	start, end, _ := m.lineBounds(line)
	off = min(off, end)
	return protocol.Position{Line: uint32(line), Character: utf16Count(m.text[start:off])}
}

// enginePosition converts the engine's 1-based line and 1-based byte column.
func (m *mapper) enginePosition(line, col int) protocol.Position {
	start, end, ok := m.bounds(m.index().goLines, line-1)
	if !ok {
		return m.position(len(m.text))
	}
	return m.position(min(start+max(col-1, 0), end))
}

// lineRange is the range of the engine's line (1-based) from its first
// non-blank character to its end: where a diagnostic for the whole line goes.
func (m *mapper) lineRange(line int) protocol.Range {
	start, end, ok := m.bounds(m.index().goLines, line-1)
	if !ok {
		p := m.position(len(m.text))
		return protocol.Range{Start: p, End: p}
	}
	first := start + len(m.text[start:end]) - len(strings.TrimLeft(m.text[start:end], " \t"))
	return protocol.Range{Start: m.position(first), End: m.position(end)}
}

// utf16Count is the number of UTF-16 code units of s.
func utf16Count(s string) uint32 {
	n := uint32(0)
	for _, r := range s { // invalid bytes decode as U+FFFD: one unit
		n += uint32(utf16Len(r))
	}
	return n
}

func utf16Len(r rune) int {
	if r >= 0x10000 && r <= utf8.MaxRune {
		return 2
	}
	return 1
}
