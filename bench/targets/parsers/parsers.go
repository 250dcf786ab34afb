// Package parsers wraps real parsers from public modules for the coverage half of
// the benchmark: no planted bug, the figure is how much of the parser's code each
// engine's corpus reaches after the budget.
package parsers

import (
	"strings"

	"github.com/BurntSushi/toml"
	"golang.org/x/net/html"
	"gopkg.in/yaml.v3"
)

// Toml decodes a TOML document.
func Toml(s string) error {
	var v map[string]any
	_, err := toml.Decode(s, &v)
	return err
}

// YAML decodes a YAML document.
func YAML(b []byte) error {
	var v any
	return yaml.Unmarshal(b, &v)
}

// HTML parses an HTML document.
func HTML(s string) error {
	_, err := html.Parse(strings.NewReader(s))
	return err
}
