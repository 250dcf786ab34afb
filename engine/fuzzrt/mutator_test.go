package fuzzrt

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"testing"
)

// mutSamples holds one starting value of every supported type.
var mutSamples = []any{
	[]byte("hello, world"), "hello", true, byte(7), rune('x'),
	int(42), int8(-3), int16(300), int32(-70000), int64(1 << 40),
	uint(9), uint16(65535), uint32(12345), uint64(1 << 63),
	float32(1.5), float64(-2.25),
}

func mutTestClone(vals []any) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		if b, ok := v.([]byte); ok {
			v = bytes.Clone(b)
		}
		out[i] = v
	}
	return out
}

func mutTestEqual(a, b any) bool {
	switch x := a.(type) {
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case float32:
		y, ok := b.(float32)
		return ok && math.Float32bits(x) == math.Float32bits(y)
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	}
	return a == b
}

func TestMutateEveryType(t *testing.T) {
	for _, start := range mutSamples {
		t.Run(fmt.Sprintf("%T", start), func(t *testing.T) {
			m := NewMutator(1)
			const n = 2000
			changed := 0
			cur := []any{start}
			for range n {
				prev := mutTestClone(cur)
				m.Mutate(cur, 64)
				if reflect.TypeOf(cur[0]) != reflect.TypeOf(start) {
					t.Fatalf("type changed: %T -> %T", start, cur[0])
				}
				if !mutTestEqual(prev[0], cur[0]) {
					changed++
				}
			}
			if changed < n*9/10 {
				t.Errorf("value changed in %d of %d mutations", changed, n)
			}
		})
	}
}

func TestMutateFromZero(t *testing.T) {
	// Zero values (the usual seeds) must leave zero, and empty inputs must grow.
	zeros := []any{[]byte{}, "", false, byte(0), rune(0), int(0), int8(0), int16(0),
		int32(0), int64(0), uint(0), uint16(0), uint32(0), uint64(0), float32(0), float64(0)}
	m := NewMutator(2)
	for _, z := range zeros {
		for range 50 {
			vals := []any{z}
			if b, ok := z.([]byte); ok {
				vals[0] = bytes.Clone(b)
			}
			m.Mutate(vals, 16)
			if mutTestEqual(vals[0], z) {
				t.Errorf("%T: zero value unchanged", z)
				break
			}
		}
	}
}

func TestMutateMaxLen(t *testing.T) {
	m := NewMutator(3)
	for _, maxLen := range []int{0, 1, 2, 7, 64} {
		vals := []any{[]byte{}, ""}
		for range 5000 {
			m.Mutate(vals, maxLen)
			if n := len(vals[0].([]byte)); n > maxLen {
				t.Fatalf("maxLen %d: []byte has %d bytes", maxLen, n)
			}
			if n := len(vals[1].(string)); n > maxLen {
				t.Fatalf("maxLen %d: string has %d bytes", maxLen, n)
			}
		}
	}
	// An input already over the bound is cut back to it.
	vals := []any{bytes.Repeat([]byte("x"), 100)}
	m.Mutate(vals, 10)
	if n := len(vals[0].([]byte)); n > 10 {
		t.Fatalf("oversized input kept %d bytes", n)
	}
}

func TestSpliceMaxLen(t *testing.T) {
	m := NewMutator(4)
	other := []any{bytes.Repeat([]byte("o"), 50), "ooooooooooooooooooo"}
	for _, maxLen := range []int{0, 1, 5, 30} {
		vals := []any{[]byte{}, ""}
		for range 2000 {
			m.Splice(vals, other, maxLen)
			if n := len(vals[0].([]byte)); n > maxLen {
				t.Fatalf("maxLen %d: []byte has %d bytes", maxLen, n)
			}
			if n := len(vals[1].(string)); n > maxLen {
				t.Fatalf("maxLen %d: string has %d bytes", maxLen, n)
			}
		}
	}
}

func TestSplice(t *testing.T) {
	m := NewMutator(5)
	// Numbers take the other's value.
	vals := []any{int(1), true}
	m.Splice(vals, []any{int(2), true}, 10)
	if vals[0] != 2 || vals[1] != true {
		t.Fatalf("got %v", vals)
	}
	// Bytes receive pieces of the other.
	saw := false
	for range 200 {
		vals := []any{[]byte("aaaaaaaa")}
		m.Splice(vals, []any{[]byte("bbbb")}, 100)
		if bytes.Contains(vals[0].([]byte), []byte("b")) {
			saw = true
			break
		}
	}
	if !saw {
		t.Error("splice never took bytes from the other input")
	}
	// Identical inputs still change, through Mutate.
	vals = []any{int(7)}
	m.Splice(vals, []any{int(7)}, 10)
	if vals[0] == 7 {
		t.Error("splice of equal inputs left the value unchanged")
	}
	// The other input is only read.
	o := []byte("other")
	m.Splice([]any{[]byte("x")}, []any{o}, 10)
	if string(o) != "other" {
		t.Errorf("other modified: %q", o)
	}
}

func TestMutateDeterministic(t *testing.T) {
	run := func(seed uint64) []any {
		m := NewMutator(seed)
		m.AddDict([][]byte{[]byte("token"), []byte("1234")})
		vals := mutTestClone(mutSamples)
		other := mutTestClone(mutSamples)
		for i := range 3000 {
			if i%5 == 0 {
				m.Splice(vals, other, 100)
			} else {
				m.Mutate(vals, 100)
			}
		}
		return vals
	}
	a, b := run(42), run(42)
	for i := range a {
		if !mutTestEqual(a[i], b[i]) {
			t.Errorf("arg %d differs between runs: %v vs %v", i, a[i], b[i])
		}
	}
	c := run(43)
	same := true
	for i := range a {
		same = same && mutTestEqual(a[i], c[i])
	}
	if same {
		t.Error("different seeds gave the same result")
	}
}

func TestDictTokens(t *testing.T) {
	m := NewMutator(6)
	m.AddDict([][]byte{[]byte("MAGIC"), []byte("31337"), nil, []byte("MAGIC")})
	if len(m.tokens) != 2 {
		t.Fatalf("tokens = %q", m.tokens)
	}
	sawTok, sawInt := false, false
	for range 20000 {
		vals := []any{[]byte("0123456789"), int(0)}
		m.Mutate(vals, 100)
		sawTok = sawTok || bytes.Contains(vals[0].([]byte), []byte("MAGIC"))
		sawInt = sawInt || vals[1] == 31337
	}
	if !sawTok || !sawInt {
		t.Errorf("dictionary unused: token %v, int %v", sawTok, sawInt)
	}
}

// TestHotTokens: among a thousand static tokens, one learned from a comparison and
// one that a mutation used to find coverage (Promote) are picked far more often
// than the others.
func TestHotTokens(t *testing.T) {
	m := NewMutator(8)
	var static [][]byte
	for i := range 1000 {
		static = append(static, []byte(fmt.Sprintf("entity%03d", i)))
	}
	m.AddDict(static)
	m.AddLearned([]byte("YAML"))
	if len(m.hot) != 1 {
		t.Fatalf("hot = %q after AddLearned", m.hot)
	}
	// Mutate until a mutation uses entity007, then promote it as a worker would.
	for n := 0; !m.isHot[7]; n++ {
		if n > 1e6 {
			t.Fatal("entity007 never picked")
		}
		vals := []any{[]byte("key: value\n")}
		m.Mutate(vals, 100)
		if bytes.Contains(vals[0].([]byte), []byte("entity007")) {
			m.Promote()
		}
	}
	if len(m.hot) != 2 {
		t.Fatalf("hot = %q, want YAML and entity007 only", m.hot)
	}
	counts := map[string]int{}
	for range 20000 {
		counts[string(m.pickToken())]++
	}
	// Uniform picking would give each about 20 of the 20000.
	for _, tok := range []string{"YAML", "entity007"} {
		if counts[tok] < 2000 {
			t.Errorf("%s picked %d times in 20000", tok, counts[tok])
		}
	}
	if counts["entity500"] > 100 {
		t.Errorf("a cold token picked %d times", counts["entity500"])
	}
}

func TestIntBoundaries(t *testing.T) {
	// The type's extremes are among the values tried.
	m := NewMutator(7)
	sawMin, sawMax := false, false
	for range 20000 {
		vals := []any{int16(5)}
		m.Mutate(vals, 0)
		sawMin = sawMin || vals[0] == int16(math.MinInt16)
		sawMax = sawMax || vals[0] == int16(math.MaxInt16)
	}
	if !sawMin || !sawMax {
		t.Errorf("min seen %v, max seen %v", sawMin, sawMax)
	}
}

func TestMutateNoPanic(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	r := NewRand(99)
	m := NewMutator(100)
	m.AddDict([][]byte{[]byte("ab"), []byte("\x00\x01\x02\x03"), []byte("-1"), bytes.Repeat([]byte("z"), 40)})
	randBytes := func() []byte {
		b := make([]byte, r.Intn(40))
		m.fillRandom(b)
		return b
	}
	randVals := func() []any {
		return []any{randBytes(), string(randBytes()), r.Bool(), byte(r.Uint64()), rune(r.Uint64()),
			int(r.Uint64()), int8(r.Uint64()), int16(r.Uint64()), int32(r.Uint64()), int64(r.Uint64()),
			uint(r.Uint64()), uint16(r.Uint64()), uint32(r.Uint64()), r.Uint64(),
			math.Float32frombits(r.Uint32()), math.Float64frombits(r.Uint64())}
	}
	vals, other := randVals(), randVals()
	types := make([]reflect.Type, len(vals))
	for i, v := range vals {
		types[i] = reflect.TypeOf(v)
	}
	for i := range n {
		if i%4096 == 0 {
			vals, other = randVals(), randVals()
		}
		maxLen := 1 + r.Intn(64)
		if i%3 == 0 {
			m.Splice(vals, other, maxLen)
		} else {
			m.Mutate(vals, maxLen)
		}
		if i%1024 == 0 {
			for j, v := range vals {
				if reflect.TypeOf(v) != types[j] {
					t.Fatalf("arg %d: type %T, want %v", j, v, types[j])
				}
			}
		}
	}
}

func TestRand(t *testing.T) {
	r := NewRand(1)
	var counts [10]int
	for range 100000 {
		counts[r.Intn(10)]++
	}
	for i, c := range counts {
		if c < 9000 || c > 11000 {
			t.Errorf("Intn(10) gave %d %d times of 100000", i, c)
		}
	}
	if r.Intn(0) != 0 || r.Intn(1) != 0 {
		t.Error("Intn of n <= 1 must be 0")
	}
}

func BenchmarkMutate(b *testing.B) {
	b.Run("bytes", func(b *testing.B) {
		m := NewMutator(1)
		seed := bytes.Repeat([]byte("fuzz input "), 20)
		buf := make([]byte, 0, 4096)
		vals := make([]any, 1)
		b.ReportAllocs()
		for b.Loop() {
			buf = append(buf[:0], seed...)
			vals[0] = buf
			m.Mutate(vals, 4096)
			buf = vals[0].([]byte)
		}
	})
	b.Run("multi", func(b *testing.B) {
		m := NewMutator(1)
		seed := []any{[]byte("some bytes here"), "a string", int(12), uint32(7), float64(1.5), true}
		vals := make([]any, len(seed))
		buf := make([]byte, 0, 4096)
		b.ReportAllocs()
		for b.Loop() {
			copy(vals, seed)
			buf = append(buf[:0], seed[0].([]byte)...)
			vals[0] = buf
			m.Mutate(vals, 4096)
			if nb, ok := vals[0].([]byte); ok {
				buf = nb
			}
		}
	})
	b.Run("scalars", func(b *testing.B) {
		// Every number and bool kind, so the per-kind dispatch shows.
		m := NewMutator(1)
		seed := mutSamples[2:]
		vals := make([]any, len(seed))
		b.ReportAllocs()
		for b.Loop() {
			copy(vals, seed)
			m.Mutate(vals, 4096)
		}
	})
	b.Run("splice", func(b *testing.B) {
		m := NewMutator(1)
		other := []any{"another string", []byte("other bytes"), int8(9), float32(2.5), false, uint16(3)}
		seed := []any{"a string", []byte("some bytes here"), int8(4), float32(1.5), true, uint16(4)}
		vals := make([]any, len(seed))
		buf := make([]byte, 0, 4096)
		b.ReportAllocs()
		for b.Loop() {
			copy(vals, seed)
			buf = append(buf[:0], seed[1].([]byte)...)
			vals[1] = buf
			m.Splice(vals, other, 4096)
			if nb, ok := vals[1].([]byte); ok {
				buf = nb
			}
		}
	})
}

func TestByteOps(t *testing.T) {
	m := NewMutator(8)
	m.AddDict([][]byte{[]byte("tok"), bytes.Repeat([]byte("T"), 20)})
	r := NewRand(9)
	for k, op := range mutByteOps {
		applied := 0
		for range 20000 {
			m.maxLen = r.Intn(48)
			n := r.Intn(m.maxLen + 1)
			b := make([]byte, n, n+r.Intn(64))
			m.fillRandom(b)
			if r.Bool() { // text, for the ops that need lines and words
				for i := range b {
					b[i] = "ab1 =[]\n"[r.Intn(8)]
				}
			}
			orig := bytes.Clone(b)
			nb, ok := op(m, b)
			if len(nb) > m.maxLen {
				t.Fatalf("op %d: %d bytes over maxLen %d", k, len(nb), m.maxLen)
			}
			if !ok {
				if !bytes.Equal(nb, orig) {
					t.Fatalf("op %d: declined but changed %x to %x", k, orig, nb)
				}
				continue
			}
			applied++
		}
		if applied < 1000 {
			t.Errorf("op %d applied only %d times", k, applied)
		}
	}
}

func TestTextOps(t *testing.T) {
	doc := []byte("title = \"x\"\n[owner]\nname = \"a\"\n")
	lines := func(b []byte) map[string]int {
		c := map[string]int{}
		for _, l := range bytes.SplitAfter(b, []byte("\n")) {
			if len(l) > 0 {
				c[string(l)]++
			}
		}
		return c
	}
	m := NewMutator(11)
	m.maxLen = 1 << 10
	m.AddDict([][]byte{[]byte("ports")})

	// A duplicated line is a whole line of the input, added at a line start.
	for range 200 {
		b, ok := opDuplicateLine(m, bytes.Clone(doc))
		if !ok {
			t.Fatal("opDuplicateLine declined a document with lines")
		}
		got, want := lines(b), lines(doc)
		extra := 0
		for l, n := range got {
			if n < want[l] {
				t.Fatalf("line %q lost: %q", l, b)
			}
			extra += n - want[l]
			if want[l] == 0 {
				t.Fatalf("new line %q is not a line of the input: %q", l, b)
			}
		}
		if extra != 1 {
			t.Fatalf("%d lines added, want 1: %q", extra, b)
		}
	}
	// A replaced word is a whole word: the dictionary's, or one of the input's.
	sawToken := false
	for range 200 {
		b, ok := opReplaceWord(m, bytes.Clone(doc))
		if !ok {
			continue
		}
		sawToken = sawToken || bytes.Contains(b, []byte("ports"))
		if bytes.Count(b, []byte("\n")) != 3 || bytes.Count(b, []byte("=")) != 2 {
			t.Fatalf("replacing a word broke the structure: %q", b)
		}
	}
	if !sawToken {
		t.Error("opReplaceWord never used the dictionary token")
	}
	// Lines crossed over from another input arrive whole.
	other := []byte("a = 1\nb = [2]\n")
	for range 200 {
		b, ok := crossoverLines(m, bytes.Clone(doc), other)
		if !ok {
			t.Fatal("crossoverLines declined two documents with lines")
		}
		for l := range lines(b) {
			if !bytes.Contains(doc, []byte(l)) && !bytes.Contains(other, []byte(l)) {
				t.Fatalf("line %q is from neither input: %q", l, b)
			}
		}
	}
	if _, ok := opDeleteLine(m, []byte("no line break")); ok {
		t.Error("opDeleteLine applied to input without lines")
	}
}

func TestSpliceLinesMaxLen(t *testing.T) {
	m := NewMutator(12)
	for _, maxLen := range []int{0, 1, 7, 30} {
		for range 2000 {
			vals := []any{[]byte("x = 1\ny = 2\n")}
			m.Splice(vals, []any{[]byte("k = v\nk2 = v2\nk3 = v3\n")}, maxLen)
			if n := len(vals[0].([]byte)); n > maxLen {
				t.Fatalf("maxLen %d: []byte has %d bytes", maxLen, n)
			}
			vals = []any{"q: 1\nr: 2\n"}
			m.Splice(vals, []any{"a: 1\nb: 2\nc: 3\n"}, maxLen)
			if n := len(vals[0].(string)); n > maxLen {
				t.Fatalf("maxLen %d: string has %d bytes", maxLen, n)
			}
		}
	}
}
