// Package parsers wraps real parsers from public modules for the coverage half of
// the benchmark: no planted bug, the figure is how much of the parser's code each
// engine's corpus reaches after the budget. Three text formats (TOML, YAML,
// HTML), two binary codecs whose layers are guarded by magic numbers and
// checksums (xz, LZ4) and an image format of tagged binary fields (TIFF).
package parsers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/pierrec/lz4/v4"
	"github.com/ulikunitz/xz"
	"golang.org/x/image/tiff"
	"golang.org/x/net/html"
	"gopkg.in/yaml.v3"
)

// Config is the kind of struct a program loads its configuration into. The typed
// half of the toml and yaml wrappers decodes into it, the way these modules are
// mostly used; a key reaches its field's decoding only if the document names it.
type Config struct {
	Title   string
	Owner   Owner
	Servers map[string]Server
	Ports   []int
	Ratio   float64
	Enabled *bool
	Tags    []string      `toml:"tags,omitempty" yaml:"tags,flow"`
	Limits  Limits        `yaml:",inline"`
	Timeout time.Duration `toml:"timeout" yaml:"timeout"`
	Addr    netip.Addr    `toml:"addr,omitempty" yaml:"addr,omitempty"`
	Level   Level         `toml:"level" yaml:"level"`
	Extra   map[string]any
	Matrix  [][]float32 `toml:"matrix" yaml:"matrix,omitempty"`
	Window  [4]uint8    `toml:"window" yaml:"window"`
}

// Owner is a nested table with a date.
type Owner struct {
	Name string
	DOB  time.Time `toml:"dob" yaml:"dob"`
}

// Server is an entry of a map of tables.
type Server struct {
	Host   string
	Port   uint16
	Weight int8 `toml:"weight,omitzero" yaml:"weight,omitempty"`
	Backup bool
}

// Limits is inlined by yaml and a sub-table for toml.
type Limits struct {
	Max uint32 `yaml:"max"`
	Min int64  `yaml:"min"`
}

// Level is a custom scalar, decoded from text.
type Level int

// UnmarshalText accepts the names of the levels.
func (l *Level) UnmarshalText(b []byte) error {
	switch string(b) {
	case "debug":
		*l = 0
	case "info":
		*l = 1
	case "warn":
		*l = 2
	default:
		return fmt.Errorf("unknown level %q", b)
	}
	return nil
}

// MarshalText is UnmarshalText's inverse.
func (l Level) MarshalText() ([]byte, error) {
	switch l {
	case 0:
		return []byte("debug"), nil
	case 1:
		return []byte("info"), nil
	case 2:
		return []byte("warn"), nil
	}
	return nil, fmt.Errorf("bad level %d", int(l))
}

// Toml is the shape of the toml module's own OSS-Fuzz target (decode a document,
// encode what was decoded, decode the encoding again), then the typed half: the
// document decoded into a Config, its undecoded keys listed, the Config encoded.
// Errors are returned, not panicked on, so that the figure measures exploration,
// not the first failure.
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
	if _, err := toml.Decode(buf.String(), &v2); err != nil {
		return err
	}
	var c Config
	md, err := toml.Decode(s, &c)
	if err != nil {
		return err
	}
	_ = md.Undecoded()
	buf.Reset()
	return toml.NewEncoder(&buf).Encode(c)
}

// YAML decodes a YAML document and encodes what was decoded, the round trip a
// user of the module relies on; then does the same through a yaml.Node (the
// module's way to edit a document and keep its comments and styles) and through
// a Config.
func YAML(b []byte) error {
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return err
	}
	if _, err := yaml.Marshal(v); err != nil {
		return err
	}
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil {
		return err
	}
	if _, err := yaml.Marshal(&n); err != nil {
		return err
	}
	var c Config
	if err := yaml.Unmarshal(b, &c); err != nil {
		return err
	}
	_, err := yaml.Marshal(&c)
	return err
}

// HTML parses an HTML document.
func HTML(s string) error {
	_, err := html.Parse(strings.NewReader(s))
	return err
}

// XZ decompresses an xz stream, the way a program reads a .xz file: to the end,
// at most 1 MiB of it. The format guards each layer with a check: a magic number
// and a CRC-32 over the stream header, another over each block header, the
// index and the footer, and a CRC-32, CRC-64 or SHA-256 of the content.
func XZ(b []byte) error {
	r, err := xz.NewReader(bytes.NewReader(b))
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, io.LimitReader(r, 1<<20))
	return err
}

// LZ4 decompresses an LZ4 frame (or a legacy-format stream, which the reader
// tells by its magic number) to the end, at most 1 MiB of it. A frame carries
// a one-byte xxHash of its descriptor, and optionally one per block and one of
// the content.
func LZ4(b []byte) error {
	r := lz4.NewReader(bytes.NewReader(b))
	_, err := io.Copy(io.Discard, io.LimitReader(r, 1<<20))
	return err
}

// TIFF decodes a TIFF image the way the x/image module's own fuzz target does:
// the header first, and the pixels only of an image of at most a million
// pixels; then encodes what it decoded. A TIFF file is a directory of tagged
// entries (16-bit tag numbers, types and counts) that select the layout,
// the compression (LZW, deflate, PackBits, CCITT) and the colour model.
func TIFF(b []byte) error {
	cfg, err := tiff.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return err
	}
	if cfg.Width*cfg.Height > 1e6 {
		return errors.New("too many pixels")
	}
	img, err := tiff.Decode(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return tiff.Encode(io.Discard, img, nil)
}
