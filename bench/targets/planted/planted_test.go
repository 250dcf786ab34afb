package planted

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math"
	"testing"
)

func FuzzPrefix(f *testing.F) {
	f.Add([]byte("seed"))
	f.Fuzz(func(t *testing.T, b []byte) { Prefix(b) })
}

func FuzzMagic32(f *testing.F) {
	f.Add([]byte("seed"))
	f.Fuzz(func(t *testing.T, b []byte) { Magic32(b) })
}

func FuzzMagic64(f *testing.F) {
	f.Add([]byte("seedseed"))
	f.Fuzz(func(t *testing.T, b []byte) { Magic64(b) })
}

func FuzzLiteral(f *testing.F) {
	f.Add("Content-Length: 0")
	f.Fuzz(func(t *testing.T, s string) { Literal(s) })
}

func FuzzEqual(f *testing.F) {
	f.Add("hello")
	f.Fuzz(func(t *testing.T, s string) { Equal(s) })
}

func FuzzMultiArg(f *testing.F) {
	f.Add(1, "a")
	f.Fuzz(func(t *testing.T, a int, s string) { MultiArg(a, s) })
}

func FuzzChecksum(f *testing.F) {
	payload := []byte("data")
	f.Add(append(binary.LittleEndian.AppendUint32(nil, crc32.ChecksumIEEE(payload)), payload...))
	f.Fuzz(func(t *testing.T, b []byte) { Packet(b) })
}

func FuzzTLV(f *testing.F) {
	f.Add([]byte{1, 1, 7, 2, 2, 'h', 'i', 3, 3, 1, 1, 9, 4, 3, 1, 0, 42})
	f.Fuzz(func(t *testing.T, b []byte) { ParseTLV(b) })
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("aaaab"))
	f.Fuzz(func(t *testing.T, b []byte) {
		enc := Encode(b)
		dec, err := Decode(enc)
		if err != nil {
			t.Fatalf("Decode(Encode(%x)) = error %v", b, err)
		}
		if !bytes.Equal(dec, b) {
			t.Fatalf("round trip mismatch: %x -> %x -> %x", b, enc, dec)
		}
	})
}

func FuzzHang(f *testing.F) {
	f.Add([]byte("seed"))
	f.Fuzz(func(t *testing.T, b []byte) { Ring(b) })
}

func FuzzAlloc(f *testing.F) {
	f.Add([]byte("seedseed"))
	f.Fuzz(func(t *testing.T, b []byte) { Frame(b) })
}

func FuzzNaN(f *testing.F) {
	f.Add(0.5)
	f.Fuzz(func(t *testing.T, x float64) {
		var h Histogram
		h.Add(x)
	})
}

func FuzzTokens(f *testing.F) {
	f.Add("a = b")
	f.Fuzz(func(t *testing.T, s string) { Query(s) })
}

// TestPlanted checks that each planted bug is reachable, with the input a
// fuzzer has to find (hang and allocation excepted: they are what they are).
func TestPlanted(t *testing.T) {
	mustPanic := func(name string, fn func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		fn()
	}
	le32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	mustPanic("prefix", func() { Prefix([]byte("FUZZ")) })
	mustPanic("magic32", func() { Magic32(le32(0x5A17C0DE)) })
	mustPanic("magic64", func() { Magic64(binary.LittleEndian.AppendUint64(nil, 0xC0FFEE15DEADBEEF)) })
	mustPanic("literal", func() { Literal("Content-Type: fuzz/x") })
	mustPanic("equal", func() { Equal("open sesame 2026") })
	mustPanic("multiarg", func() { MultiArg(0x1337, "key") })
	mustPanic("checksum", func() { Packet(append(le32(crc32.ChecksumIEEE([]byte("BUG!"))), "BUG!"...)) })
	mustPanic("tlv", func() { ParseTLV([]byte{3, 5, 3, 3, 4, 1, 5}) })
	mustPanic("nan", func() { new(Histogram).Add(math.NaN()) })
	mustPanic("tokens", func() { Query("select a from b where c") })
	if _, err := ParseTLV([]byte{1, 1, 7, 2, 2, 'h', 'i', 3, 3, 1, 1, 9, 4, 3, 1, 0, 42}); err != nil {
		t.Errorf("TLV seed: %v", err)
	}
	for _, in := range []string{"aaaab", "\xfe\xfe\xfe", "\xfe", ""} {
		if dec, _ := Decode(Encode([]byte(in))); !bytes.Equal(dec, []byte(in)) {
			t.Errorf("round trip of %q broken: %q", in, dec)
		}
	}
	if dec, _ := Decode(Encode([]byte("\xfe\xfe\xfe\xfe"))); bytes.Equal(dec, []byte("\xfe\xfe\xfe\xfe")) {
		t.Error("round trip asymmetry not there")
	}
	if Ring([]byte("RG\x01\x05\x00")) != 5 {
		t.Error("Ring")
	}
	if Frame(append(le32(0xA110CA7E), le32(16)...)) != 16 {
		t.Error("Frame")
	}
}
