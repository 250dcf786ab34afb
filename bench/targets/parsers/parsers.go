// Package parsers wraps real parsers from public modules for the coverage half of
// the benchmark: no planted bug, the figure is how much of the parser's code each
// engine's corpus reaches after the budget.
package parsers

import (
	"bytes"
	"strings"

	"github.com/BurntSushi/toml"
	"golang.org/x/net/html"
	"gopkg.in/yaml.v3"
)

// Toml is the shape of the toml module's own OSS-Fuzz target: decode a document,
// encode what was decoded, decode the encoding again. Errors are returned, not
// panicked on, so that the figure measures exploration, not the first failure.
func Toml(s string) error {
	var v any
	if _, err := toml.Decode(s, &v); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(v); err != nil {
		return err
	}
	var v2 any
	_, err := toml.Decode(buf.String(), &v2)
	return err
}

// YAML decodes a YAML document and encodes what was decoded, the round trip a
// user of the module relies on.
func YAML(b []byte) error {
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return err
	}
	_, err := yaml.Marshal(v)
	return err
}

// HTML parses an HTML document.
func HTML(s string) error {
	_, err := html.Parse(strings.NewReader(s))
	return err
}
