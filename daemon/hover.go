package daemon

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"go.lsp.dev/protocol"

	"fuzzls.dev/fuzzls/engine"
	"fuzzls.dev/fuzzls/engine/fuzzrt"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// Hover on a crash line shows each failure there: its message, the full input
// in the `go test fuzz v1` format, the stack, and the command that replays it
// once the input is in the seed corpus. On an uncovered block behind a reached
// comparison (or the comparison's line), it shows the blocker (blockers.go).
func (s *server) Hover(ctx context.Context, params *protocol.HoverParams) (*protocol.Hover, error) {
	path, err := filePath(params.TextDocument.URI)
	if err != nil {
		return nil, nil
	}
	m, _, err := s.fileText(path)
	line := int(params.Position.Line) + 1
	if err == nil {
		line = m.goLine(params.Position)
	}
	crashes := s.crashesAt(path, line)
	blockers := s.blockersIn(path, line, line)
	if len(crashes) == 0 && len(blockers) == 0 {
		return nil, nil
	}
	var parts []string
	for _, c := range crashes {
		parts = append(parts, crashMarkdown(c))
	}
	for _, b := range blockers {
		parts = append(parts, blockerMarkdown(b.Blocker))
	}
	var rng *protocol.Range
	if err == nil {
		r := m.lineRange(line)
		rng = &r
	}
	return &protocol.Hover{
		Contents: &protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: strings.Join(parts, "\n\n---\n\n")},
		Range:    rng,
	}, nil
}

func crashMarkdown(c *engine.Crash) string {
	var b strings.Builder
	state := "minimizing…"
	if c.Minimized {
		state = "minimized"
	}
	fmt.Fprintf(&b, "**%s: %s** (%s, seen %d×)\n\n", c.Target.Name, c.Kind, state, max(c.Count, 1))
	fmt.Fprintf(&b, "```\n%s\n```\n\n", strings.TrimSpace(c.Message))
	fmt.Fprintf(&b, "Input:\n\n```go\n%s\n```\n\n", strings.TrimRight(c.Input, "\n"))
	if c.Kind == fproto.KindRace && c.Output != "" {
		// Both goroutines' stacks, under the race detector's own headings.
		fmt.Fprintf(&b, "Race report:\n\n```\n%s\n```\n\n", strings.TrimSpace(c.Output))
	} else if len(c.Frames) > 0 {
		b.WriteString("Stack:\n\n```\n")
		for _, f := range c.Frames {
			fmt.Fprintf(&b, "%s\n\t%s:%d\n", f.Function, f.File, f.Line)
		}
		b.WriteString("```\n\n")
	}
	fmt.Fprintf(&b, "Replay once added to the seed corpus:\n\n```sh\n%s\n```", replayCommand(c))
	return b.String()
}

// replayCommand is the command line that replays the crash's input once it
// is the seed testdata/fuzz/FuzzXxx/<name> (engine.Crash.ReplayCommand), in
// the target's directory, and why it is not go test's when it is not.
func replayCommand(c *engine.Crash) string {
	dir := cmp.Or(c.Target.Dir, filepath.Dir(c.Target.File))
	cmd, why := c.ReplayCommand(fuzzrt.FileName(corpusFile(c.Input)))
	if why != "" {
		cmd += "  # " + why
	}
	return fmt.Sprintf("cd %s && %s", engine.ShellQuote(dir), cmd)
}
