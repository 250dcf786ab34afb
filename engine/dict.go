package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// parseDict reads a dictionary in the AFL/libFuzzer syntax: one token a line,
// `name="value"` or `"value"`, with \\, \" and \xNN escapes; blank lines and lines
// starting with # are ignored.
func parseDict(data []byte) ([]string, error) {
	var toks []string
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.IndexByte(line, '"')
		if i < 0 || !strings.HasSuffix(line, `"`) || len(line) < i+2 {
			return nil, fmt.Errorf("line %d: want name=\"value\" or \"value\"", n+1)
		}
		tok, err := unescapeDict(line[i+1 : len(line)-1])
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n+1, err)
		}
		if tok != "" {
			toks = append(toks, tok)
		}
	}
	return toks, nil
}

func unescapeDict(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(s) {
			return "", fmt.Errorf("trailing backslash")
		}
		i++
		switch s[i] {
		case '\\', '"':
			b.WriteByte(s[i])
		case 'x':
			if i+2 >= len(s) {
				return "", fmt.Errorf("short \\x escape")
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return "", fmt.Errorf("bad \\x escape %q", s[i-1:i+3])
			}
			b.WriteByte(byte(v))
			i += 2
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		default:
			return "", fmt.Errorf("unknown escape \\%c", s[i])
		}
	}
	return b.String(), nil
}

// userDict reads the target's dictionaries: the file given with -dict (Options.Dict)
// and testdata/fuzz/FuzzXxx.dict if present.
func userDict(t Target, explicit string) ([]string, error) {
	var toks []string
	for _, path := range []string{explicit, filepath.Join(t.Dir, "testdata", "fuzz", t.Name+".dict")} {
		if path == "" {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			if path != explicit && os.IsNotExist(err) {
				continue
			}
			return nil, fmt.Errorf("dictionary: %v", err)
		}
		d, err := parseDict(data)
		if err != nil {
			return nil, fmt.Errorf("dictionary %s: %v", path, err)
		}
		toks = append(toks, d...)
	}
	return toks, nil
}
