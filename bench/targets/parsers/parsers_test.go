package parsers

import (
	"bytes"
	"image"
	"image/color"
	"io"
	"testing"

	"github.com/pierrec/lz4/v4"
	"github.com/ulikunitz/xz"
	"golang.org/x/image/tiff"
)

func FuzzToml(f *testing.F) {
	f.Add("title = \"x\"\n[owner]\nname = \"a\"\ndob = 1979-05-27T07:32:00Z\n")
	f.Add("a = [1, 2.5, true]\n")
	f.Fuzz(func(t *testing.T, s string) { Toml(s) })
}

func FuzzYAML(f *testing.F) {
	f.Add([]byte("a: 1\nb: [x, y]\nc: {d: true}\n"))
	f.Add([]byte("- &x 1\n- *x\n"))
	f.Fuzz(func(t *testing.T, b []byte) { YAML(b) })
}

func FuzzHTML(f *testing.F) {
	f.Add("<html><body><p class=a>hi</p></body></html>")
	f.Add("<table><tr><td>1</td></tr></table>")
	f.Fuzz(func(t *testing.T, s string) { HTML(s) })
}

// The compressed seeds are made by the modules' own writers, so both engines
// start from valid streams.
const seedText = "The quick brown fox jumps over the lazy dog. The quick brown fox.\n"

func FuzzXZ(f *testing.F) {
	for _, s := range xzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) { XZ(b) })
}

func FuzzLZ4(f *testing.F) {
	for _, s := range lz4Seeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) { LZ4(b) })
}

func FuzzTIFF(f *testing.F) {
	for _, s := range tiffSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) { TIFF(b) })
}

// tiffSeeds holds small images of the kinds the module's encoder writes (grey,
// 16-bit grey, paletted, RGBA, non-premultiplied RGBA), uncompressed and
// deflated (it writes no other compression).
func tiffSeeds() (seeds [][]byte) {
	r := image.Rect(0, 0, 5, 3)
	imgs := []image.Image{
		image.NewGray(r), image.NewGray16(r), image.NewRGBA(r), image.NewNRGBA(r),
		image.NewPaletted(r, color.Palette{color.Black, color.White, color.RGBA{200, 10, 10, 255}}),
	}
	opts := []*tiff.Options{
		nil,
		{Compression: tiff.Deflate},
	}
	for i, img := range imgs {
		if p, ok := img.(interface{ Set(x, y int, c color.Color) }); ok {
			for x := range 5 {
				p.Set(x, x%3, color.RGBA{uint8(40 * x), 200, uint8(i * 50), 255})
			}
		}
		var buf bytes.Buffer
		if err := tiff.Encode(&buf, img, opts[i%len(opts)]); err != nil {
			panic(err)
		}
		seeds = append(seeds, buf.Bytes())
	}
	return seeds
}

// xzSeeds holds the text compressed with each of the four content checks.
func xzSeeds() (seeds [][]byte) {
	for _, check := range []byte{xz.CRC32, xz.CRC64, xz.SHA256, xz.None} {
		var buf bytes.Buffer
		w, err := xz.WriterConfig{CheckSum: check, DictCap: 1 << 16}.NewWriter(&buf)
		if err != nil {
			panic(err)
		}
		seeds = append(seeds, compress(&buf, w))
	}
	return seeds
}

// compress writes seedText through w, which writes to buf, and returns what it wrote.
func compress(buf *bytes.Buffer, w io.WriteCloser) []byte {
	io.WriteString(w, seedText)
	if err := w.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// lz4Seeds holds the text as a default frame, a frame with block checksums and
// the content size, and a legacy-format stream.
func lz4Seeds() (seeds [][]byte) {
	for _, opts := range [][]lz4.Option{
		nil,
		{lz4.BlockChecksumOption(true), lz4.SizeOption(uint64(len(seedText)))},
		{lz4.LegacyOption(true)},
	} {
		var buf bytes.Buffer
		w := lz4.NewWriter(&buf)
		if err := w.Apply(opts...); err != nil {
			panic(err)
		}
		seeds = append(seeds, compress(&buf, w))
	}
	return seeds
}

// The wrappers accept their own seeds: a seed that fails would start both
// engines from an error path.
func TestSeedsDecode(t *testing.T) {
	for _, c := range []struct {
		name string
		fn   func([]byte) error
		seed func() [][]byte
	}{
		{"xz", XZ, xzSeeds},
		{"lz4", LZ4, lz4Seeds},
		{"tiff", TIFF, tiffSeeds},
	} {
		seeds := c.seed()
		if len(seeds) == 0 {
			t.Fatalf("%s: no seeds", c.name)
		}
		for i, s := range seeds {
			if err := c.fn(s); err != nil {
				t.Errorf("%s seed %d: %v", c.name, i, err)
			}
		}
	}
}
