package strength

import "testing"

func FuzzMagic32(f *testing.F) {
	f.Add([]byte("abcdefgh"))
	f.Fuzz(func(t *testing.T, b []byte) { Magic32(b) })
}

func FuzzMagic64(f *testing.F) {
	f.Add([]byte("abcdefgh"))
	f.Fuzz(func(t *testing.T, b []byte) { Magic64(b) })
}

func FuzzBytesPrefix(f *testing.F) {
	f.Add([]byte("hello"))
	f.Fuzz(func(t *testing.T, b []byte) { BytesPrefix(b) })
}

func FuzzSuffix(f *testing.F) {
	f.Add("file.txt")
	f.Fuzz(func(t *testing.T, s string) { Suffix(s) })
}

func FuzzStringPrefix(f *testing.F) {
	f.Add("hello")
	f.Fuzz(func(t *testing.T, s string) { StringPrefix(s) })
}

func FuzzContains(f *testing.F) {
	f.Add("hay")
	f.Fuzz(func(t *testing.T, s string) { Contains(s) })
}

func FuzzEqualFold(f *testing.F) {
	f.Add("keyword")
	f.Fuzz(func(t *testing.T, s string) { EqualFold(s) })
}

func FuzzIndex(f *testing.F) {
	f.Add("abcdefgh")
	f.Fuzz(func(t *testing.T, s string) { Index(s) })
}

func FuzzBytesEqual(f *testing.F) {
	f.Add([]byte("something"))
	f.Fuzz(func(t *testing.T, b []byte) { BytesEqual(b) })
}

func FuzzCompare(f *testing.F) {
	f.Add("a=b;")
	f.Fuzz(func(t *testing.T, s string) { Compare(s) })
}

func FuzzInts(f *testing.F) {
	f.Add(1, int64(2), uint32(3))
	f.Fuzz(func(t *testing.T, n int, x int64, u uint32) { Ints(n, x, u) })
}

func FuzzSwitch(f *testing.F) {
	f.Add("beta")
	f.Fuzz(func(t *testing.T, s string) { Switch(s) })
}

func FuzzSwitchTag(f *testing.F) {
	f.Add([]byte("II abcdefgh"))
	f.Fuzz(func(t *testing.T, b []byte) { SwitchTag(b) })
}

func FuzzStringEq(f *testing.F) {
	f.Add("super")
	f.Fuzz(func(t *testing.T, s string) { StringEq(s) })
}

func FuzzDecimal(f *testing.F) {
	f.Add("12")
	f.Fuzz(func(t *testing.T, s string) { Decimal(s) })
}

func FuzzVarint(f *testing.F) {
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) { Varint(b) })
}

func FuzzChecksum(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x00!payload"))
	f.Fuzz(func(t *testing.T, b []byte) { Checksum(b) })
}

func FuzzFieldChecksum(f *testing.F) {
	f.Add([]byte("\x02\x00\x00\x00\x00\x00ab"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if sameValue(len(b), -1) {
			return
		}
		FieldChecksum(b)
	})
}
