package instrument

import (
	"slices"
	"testing"
)

func TestLiterals(t *testing.T) {
	src := `package p

type Config struct {
	Title   string
	Port    int    ` + "`toml:\"listen_port,omitempty\" json:\"port\"`" + `
	Inline  struct{ Depth int } ` + "`yaml:\",inline\"`" + `
	Skipped string ` + "`json:\"-\"`" + `
	hidden  bool
}

func f(s string, n uint32) bool {
	return s == "MAGIC" || n == 0x5A17C0DE || n == 7
}
`
	got := literals("p.go", []byte(src))
	for _, want := range []string{
		"MAGIC", "1511506142", "\xde\xc0\x17\x5a", "\x5a\x17\xc0\xde", // literals
		"Title", "title", "Port", "listen_port", "port", "Depth", "depth", // struct keys
	} {
		if !slices.Contains(got, want) {
			t.Errorf("literals lacks %q; got %q", want, got)
		}
	}
	for _, bad := range []string{"-", "hidden", ",inline", "7"} {
		if slices.Contains(got, bad) {
			t.Errorf("literals has %q; got %q", bad, got)
		}
	}
}

func TestTagValues(t *testing.T) {
	for tag, want := range map[string][]string{
		`json:"a,omitempty" yaml:"b"`: {"a,omitempty", "b"},
		`x:"q\"uote"`:                 {`q"uote`},
		`json:"a" broken`:             {"a"},
		`nocolon`:                     nil,
		``:                            nil,
	} {
		if got := tagValues(tag); !slices.Equal(got, want) {
			t.Errorf("tagValues(%q) = %q, want %q", tag, got, want)
		}
	}
}

func TestShareDict(t *testing.T) {
	table := make([]string, 100) // one package with a big table, first
	for i := range table {
		table[i] = "entity" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	got := shareDict([][]string{table, {"YAML", "TAG", "YAML"}, {"true"}}, 10)
	if len(got) != 10 {
		t.Fatalf("got %d tokens, want 10: %q", len(got), got)
	}
	for _, want := range []string{"YAML", "TAG", "true"} {
		if !slices.Contains(got, want) {
			t.Errorf("the big table crowded out %q: %q", want, got)
		}
	}
	if all := shareDict([][]string{{"a", "b"}, {"b", "c"}}, 10); !slices.Equal(all, []string{"a", "b", "c"}) {
		t.Errorf("under the bound: got %q, want every literal once", all)
	}
}
