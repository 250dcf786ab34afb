package fuzzrt

import (
	"bytes"
	"encoding/binary"
	"math"
	"reflect"
	"strconv"
)

// Comparison feedback (input-to-state, as REDQUEEN and go-fuzz's sonar do): the
// instrumented code calls a hook with both operands of comparisons on the fuzzed
// path, but only while cmpOn is set, which the worker does for one execution of an
// entry now and then. Where one operand shows up in the input — raw (at its width
// or a narrower one it fits), byte-swapped, ±1, as decimal or hex text, as a
// varint — the other operand is tried there.

// maxCmpRecords bounds the records of one execution, and those of the focus's
// sites apart: a parser makes thousands of comparisons, and the one in the
// code just changed may come after all of them.
const maxCmpRecords = 512

// cmpRecord is one comparison seen during a recorded execution.
type cmpRecord struct {
	site int32
	a, b any
}

// cmpState is the runtime side of the hooks. Owned by the worker goroutine, except
// that hooks append from whatever goroutine the target runs them on while on is set.
type cmpState struct {
	on   bool
	recs []cmpRecord
	// focus holds the sites on changed lines (nil: none); their records go to
	// frecs, whose candidates are tried first, and their keys in tried hold the
	// operand found also for strings: the value that reaches the comparison
	// changes as the corpus grows toward it.
	focus map[int32]bool
	frecs []cmpRecord
	// tried remembers the (site, operand put in the input) pairs already turned
	// into candidates, so a comparison that keeps showing up costs nothing after
	// the first time. For integers the operand found is part of the key: at one
	// site (`switch tag` over a file's tagged entries) each value comes from its
	// own place in the input, and putting the wanted value in one entry says
	// nothing about putting it in another. Strings found vary with every input (a
	// line, a word) and would make every record new. The count is of rounds: a pair
	// whose operand showed up in more places than one round tries is tried again,
	// at other places, up to maxCmpRounds times.
	tried map[cmpKey]uint8
	// intn picks the places tried when there are too many (nil: the first ones).
	intn func(int) int
	// sum summarizes the records for the coordinator (cmpsum.go).
	sum rawSums
}

const (
	// maxCmpPlaces bounds the inputs one (site, from, to) pair becomes in a round.
	maxCmpPlaces = 16
	// maxCmpRounds bounds the rounds of a pair found in more places than that: a
	// small integer (a count of 1) is in every entry of a directory, and the place
	// that matters (the fourteenth entry's value) is rarely among the first.
	maxCmpRounds = 4
)

type cmpKey struct {
	site     int32
	from, to string
}

func (c *cmpState) hook(base int) func(site int, a, b any) {
	return func(site int, a, b any) {
		if !c.on {
			return
		}
		recs := &c.recs
		if c.focus != nil && c.focus[int32(base+site)] {
			recs = &c.frecs
		}
		if len(*recs) < maxCmpRecords {
			// Copy byte slices: the target may reuse them before the records are read.
			if x, ok := a.([]byte); ok {
				a = append([]byte(nil), x...)
			}
			if x, ok := b.([]byte); ok {
				b = append([]byte(nil), x...)
			}
			*recs = append(*recs, cmpRecord{site: int32(base + site), a: a, b: b})
		}
	}
}

// setFocus sets the sites whose comparisons are tried first (none: nil or empty).
func (c *cmpState) setFocus(sites []uint32) {
	c.focus = nil
	if len(sites) > 0 {
		c.focus = make(map[int32]bool, len(sites))
		for _, s := range sites {
			c.focus[int32(s)] = true
		}
	}
}

// operand is a comparison operand in a form the mutations understand.
type operand struct {
	isInt bool
	u     uint64 // integer bits (two's complement)
	size  int    // bytes: 1, 2, 4, 8
	isStr bool
	s     []byte
	isFlt bool
	f     float64
}

func toOperand(v any) (operand, bool) {
	switch k, u := Bits(v); {
	case k.IsInt():
		return operand{isInt: true, u: u, size: k.Size()}, true
	case k.IsFloat():
		return operand{isFlt: true, f: k.Float(u)}, true
	case k == KindString:
		return operand{isStr: true, s: []byte(v.(string))}, true
	case k == KindBytes:
		return operand{isStr: true, s: v.([]byte)}, true
	}
	if x, ok := v.(uintptr); ok {
		return operand{isInt: true, u: uint64(x), size: 8}, true
	}
	// Named types (token kinds, time.Duration…): by their underlying kind.
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return operand{isInt: true, u: uint64(rv.Int()), size: int(rv.Type().Size())}, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return operand{isInt: true, u: rv.Uint(), size: int(rv.Type().Size())}, true
	case reflect.Float32, reflect.Float64:
		return operand{isFlt: true, f: rv.Float()}, true
	case reflect.String:
		return operand{isStr: true, s: []byte(rv.String())}, true
	}
	return operand{}, false
}

// candidates turns the recorded comparisons into inputs derived from vals, calling
// try for each (try returns false to stop), and feeds learned tokens to dict.
func (c *cmpState) candidates(vals []any, dict func([]byte), try func([]any) bool) {
	if c.tried == nil {
		c.tried = map[cmpKey]uint8{}
	}
	focused := len(c.frecs)
	recs := append(c.frecs, c.recs...)
	c.recs, c.frecs = nil, nil
	c.summarize(recs)
	for k, r := range recs {
		a, ok1 := toOperand(r.a)
		b, ok2 := toOperand(r.b)
		if !ok1 || !ok2 {
			continue
		}
		// Either operand may be the one derived from the input.
		for _, pair := range [2][2]operand{{a, b}, {b, a}} {
			from, to := pair[0], pair[1]
			if equalOperand(from, to) {
				continue
			}
			key := cmpKey{site: r.site, to: operandKey(to)}
			if from.isInt && to.isInt || k < focused {
				key.from = operandKey(from)
			}
			rounds := c.tried[key]
			if rounds >= maxCmpRounds {
				continue
			}
			if len(c.tried) > 1<<16 {
				clear(c.tried)
			}
			if rounds == 0 {
				c.learn(to, dict)
			}
			capped := false
			var cands [][]any
			for i := range vals {
				vs, more := replaceIn(vals[i], from, to, c.intn, maxCmpPlaces)
				capped = capped || more
				for _, v := range vs {
					cand := CloneValues(vals)
					cand[i] = v
					cands = append(cands, cand)
				}
			}
			c.tried[key] = maxCmpRounds
			if capped {
				c.tried[key] = rounds + 1
			}
			for _, cand := range cands {
				if !try(cand) {
					return
				}
			}
		}
	}
}

// learn feeds the operand a comparison wanted to the dictionary.
func (c *cmpState) learn(to operand, dict func([]byte)) {
	if to.isStr && len(to.s) >= 2 && len(to.s) <= 64 {
		dict(to.s)
	}
	if to.isInt && to.size >= 2 {
		var buf [8]byte
		binary.LittleEndian.PutUint64(buf[:], to.u)
		dict(buf[:to.size])
	}
}

func equalOperand(a, b operand) bool {
	switch {
	case a.isInt && b.isInt:
		return a.u == b.u
	case a.isStr && b.isStr:
		return bytes.Equal(a.s, b.s)
	case a.isFlt && b.isFlt:
		return a.f == b.f || (a.f != a.f && b.f != b.f)
	}
	return false
}

func operandKey(o operand) string {
	switch {
	case o.isInt:
		return "i" + strconv.FormatUint(o.u, 16)
	case o.isFlt:
		return "f" + strconv.FormatUint(math.Float64bits(o.f), 16)
	}
	return "s" + string(o.s)
}

// replaceIn returns values derived from v with from replaced by to, in at most
// places places, and whether from was found in more places than were used.
func replaceIn(v any, from, to operand, intn func(int) int, places int) ([]any, bool) {
	switch x := v.(type) {
	case []byte:
		bs, capped := replaceBytes(x, from, to, intn, places)
		out := make([]any, len(bs))
		for i, b := range bs {
			out[i] = b
		}
		return out, capped
	case string:
		bs, capped := replaceBytes([]byte(x), from, to, intn, places)
		out := make([]any, len(bs))
		for i, b := range bs {
			out[i] = string(b)
		}
		return out, capped
	}
	k, u := Bits(v)
	if k.IsFloat() {
		if from.isFlt && to.isFlt && k.Float(u) == from.f {
			return []any{k.FromFloat(to.f)}, false
		}
		return nil, false
	}
	// An integer argument equal to from (as bits of its own width) becomes to, to±1.
	if !k.IsInt() || !from.isInt || !to.isInt {
		return nil, false
	}
	mask := uint64(math.MaxUint64)
	if size := k.Size(); size < 8 {
		mask = 1<<(8*size) - 1
	}
	if u&mask != from.u&mask {
		return nil, false
	}
	var out []any
	for _, d := range []uint64{0, 1, ^uint64(0)} {
		out = append(out, k.FromBits(to.u+d))
	}
	return out, false
}

// replaceBytes finds encodings of from in data and writes the same encoding of to
// there, each in a fresh slice. Where there are more places than places, a
// sample of them is used (capped is then true).
func replaceBytes(data []byte, from, to operand, intn func(int) int, places int) (out [][]byte, capped bool) {
	edits := byteEdits(data, from, to, 4*places)
	if len(edits) == 0 && from.isStr && to.isStr && len(to.s) > 0 {
		// Not found: try the token at the start, before and after the input.
		n := append(append([]byte(nil), to.s...), data[min(len(data), len(to.s)):]...)
		return [][]byte{n, append(append([]byte(nil), to.s...), data...), append(append([]byte(nil), data...), to.s...)}, false
	}
	if len(edits) > places {
		capped = true
		if intn != nil {
			for i := 0; i < places; i++ {
				j := i + intn(len(edits)-i)
				edits[i], edits[j] = edits[j], edits[i]
			}
		}
		edits = edits[:places]
	}
	for _, e := range edits {
		out = append(out, e.apply(data))
	}
	return out, capped
}

// byteEdit writes rep over the n bytes at off.
type byteEdit struct {
	off, n int
	rep    string
}

func (e byteEdit) apply(data []byte) []byte {
	n := make([]byte, 0, len(data)-e.n+len(e.rep))
	return append(append(append(n, data[:e.off]...), e.rep...), data[e.off+e.n:]...)
}

// byteEdits finds encodings of from in data, at most limit places an
// encoding, and returns the edits that write the same encoding of to there.
func byteEdits(data []byte, from, to operand, limit int) []byteEdit {
	var edits []byteEdit
	seen := map[byteEdit]bool{}
	add := func(pat, rep []byte) {
		// Each encoding gets its own bound, so a noisy one (the byte 0x01)
		// cannot crowd out a precise one (a 4-byte little-endian 1).
		if bytes.Equal(pat, rep) {
			return
		}
		pre, suf := 0, 0
		for pre < min(len(pat), len(rep)) && pat[pre] == rep[pre] {
			pre++
		}
		for suf < min(len(pat), len(rep))-pre && pat[len(pat)-1-suf] == rep[len(rep)-1-suf] {
			suf++
		}
		for off, n := 0, 0; len(pat) > 0 && n < limit && off <= len(data)-len(pat); n++ {
			i := bytes.Index(data[off:], pat)
			if i < 0 {
				return
			}
			// Only the bytes that change: the same change found through two
			// encodings (a 1 as 2 and as 4 little-endian bytes) is one edit.
			e := byteEdit{off + i + pre, len(pat) - pre - suf, string(rep[pre : len(rep)-suf])}
			if !seen[e] {
				seen[e] = true
				edits = append(edits, e)
			}
			off += i + 1
		}
	}
	switch {
	case from.isStr && to.isStr:
		add(from.s, to.s)
		// A partial match (HasPrefix on a longer input): overwrite where its first
		// bytes are.
		if len(from.s) > len(to.s) && len(to.s) > 0 {
			add(from.s[:len(to.s)], to.s)
		}
	case from.isInt && to.isInt:
		for _, d := range []uint64{0, 1, ^uint64(0)} {
			t := to.u + d
			// Raw, in either byte order, at the operand's width and at each
			// narrower one both values fit: a Go int compared is often a
			// uint16 or uint32 field of the input, converted.
			for _, w := range []int{8, 4, 2} {
				if w > from.size || !fitsIn(from.u, from.size, w) || !fitsIn(t, from.size, w) {
					continue
				}
				var fb, tb [8]byte
				binary.LittleEndian.PutUint64(fb[:], from.u)
				binary.LittleEndian.PutUint64(tb[:], t)
				add(fb[:w], tb[:w])
				binary.BigEndian.PutUint64(fb[:], from.u)
				binary.BigEndian.PutUint64(tb[:], t)
				add(fb[8-w:], tb[8-w:])
			}
			add([]byte(strconv.FormatInt(signExt(from.u, from.size), 10)), []byte(strconv.FormatInt(signExt(t, from.size), 10)))
			add([]byte(strconv.FormatUint(from.u, 16)), []byte(strconv.FormatUint(t, 16)))
			add(binary.AppendUvarint(nil, from.u), binary.AppendUvarint(nil, t))
			if d == 0 && from.size == 1 {
				add([]byte{byte(from.u)}, []byte{byte(t)})
			}
		}
	}
	return edits
}

// fitsIn reports whether u, an integer of size bytes, keeps its value in w bytes,
// as an unsigned or a signed number.
func fitsIn(u uint64, size, w int) bool {
	if w >= size {
		return true
	}
	if u>>(8*w) == 0 {
		return true
	}
	s, lim := signExt(u, size), int64(1)<<(8*w-1)
	return s >= -lim && s < lim
}

func signExt(u uint64, size int) int64 {
	if size >= 8 {
		return int64(u)
	}
	shift := uint(64 - 8*size)
	return int64(u<<shift) >> shift
}
