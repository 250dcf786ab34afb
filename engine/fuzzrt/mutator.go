package fuzzrt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strconv"
)

// Mutator changes fuzz inputs. It is deterministic for a given seed and
// sequence of calls, and not safe for concurrent use.
type Mutator struct {
	r       Rand
	maxLen  int    // bound on byte results during the current call
	scratch []byte // working copy for string arguments
	tmp     []byte // scratch for byte ops that need a side buffer

	tokens [][]byte         // dictionary for the byte mutators
	ints   []uint64         // integers derived from the dictionary
	seen   map[string]int32 // token → index in tokens
	// hot holds the tokens that proved useful on this target: learned from a
	// comparison it ran, or inserted by a mutation that found new coverage. Half
	// of the token picks come from it, since a static dictionary holds every
	// literal of every package the target links, most of them beside the point.
	hot    [][]byte
	isHot  []bool  // by token index
	picked []int32 // tokens the current mutation used (Promote makes them hot)
}

// NewMutator returns a Mutator whose choices are fixed by seed.
func NewMutator(seed uint64) *Mutator {
	m := &Mutator{}
	m.r.Seed(seed)
	return m
}

// Rand exposes the Mutator's generator so a caller's other choices (which
// input to mutate, splice or not) stay on the same deterministic sequence.
func (m *Mutator) Rand() *Rand { return &m.r }

// Intn is m.Rand().Intn.
func (m *Mutator) Intn(n int) int { return m.r.Intn(n) }

// Mutate changes one randomly chosen element of vals in place, applying one
// or more stacked mutations suited to its type. A []byte may be modified in
// place or reallocated, so callers pass a private copy. Byte and string
// results never exceed maxLen bytes (maxLen <= 0 keeps them empty).
func (m *Mutator) Mutate(vals []any, maxLen int) {
	if len(vals) == 0 {
		return
	}
	m.maxLen = max(maxLen, 0)
	m.picked = m.picked[:0]
	i := m.r.Intn(len(vals))
	switch v := vals[i].(type) {
	case []byte:
		b := m.mutateBytes(v)
		// Re-boxing allocates; skip it when the slice header is unchanged.
		if !sameSlice(b, v) {
			vals[i] = b
		}
	case string:
		m.scratch = append(m.scratch[:0], v...)
		m.scratch = m.mutateBytes(m.scratch)
		vals[i] = string(m.scratch)
	default:
		// Integers as their bits at the kind's width, floats as float64 (a
		// float32's result rounded), a bool flipped.
		switch k, u := Bits(v); {
		case k.IsInt():
			vals[i] = k.FromBits(m.mutateInt(u, k.Width(), k.Signed()))
		case k.IsFloat():
			vals[i] = k.FromFloat(m.mutateFloat(k.Float(u), k == KindFloat32))
		case k == KindBool:
			vals[i] = u == 0
		default:
			panic(fmt.Sprintf("fuzzrt: cannot mutate %T", v))
		}
	}
}

// Splice crosses vals with other, an input of the same types: a []byte or
// string argument receives a piece of other's, a number or bool takes
// other's value. It picks an argument where the two differ; when none does
// it falls back to Mutate.
func (m *Mutator) Splice(vals, other []any, maxLen int) {
	n := min(len(vals), len(other))
	if n == 0 {
		m.Mutate(vals, maxLen)
		return
	}
	m.maxLen = max(maxLen, 0)
	m.picked = m.picked[:0]
	start := m.r.Intn(n)
	for k := range n {
		i := start + k
		if i >= n {
			i -= n
		}
		if m.spliceAt(vals, i, other[i]) {
			return
		}
	}
	m.Mutate(vals, maxLen)
}

func (m *Mutator) spliceAt(vals []any, i int, o any) bool {
	switch v := vals[i].(type) {
	case []byte:
		ob, ok := o.([]byte)
		if !ok || len(ob) == 0 || bytes.Equal(v, ob) {
			return false
		}
		if m.r.Bool() {
			if nb, ok := crossoverLines(m, v, ob); ok {
				vals[i] = nb
				return true
			}
		}
		vals[i] = crossover(m, v, ob)
		return true
	case string:
		os, ok := o.(string)
		if !ok || len(os) == 0 || v == os {
			return false
		}
		m.scratch = append(m.scratch[:0], v...)
		lined := false
		if m.r.Bool() {
			m.scratch, lined = crossoverLines(m, m.scratch, os)
		}
		if !lined {
			m.scratch = crossover(m, m.scratch, os)
		}
		vals[i] = string(m.scratch)
		return true
	}
	// A number or a bool takes other's value when it is of the same kind and
	// differs: as == has it, so a NaN differs from every float and -0 equals 0.
	k, u := Bits(vals[i])
	ko, uo := Bits(o)
	same := u == uo
	if k.IsFloat() {
		same = k.Float(u) == k.Float(uo)
	}
	if k == NoKind || ko != k || same {
		return false
	}
	vals[i] = o
	return true
}

// crossover puts a piece of o into b: inserted, overwritten, or as the new
// tail after a cut of b.
func crossover[T []byte | string](m *Mutator, b []byte, o T) []byte {
	if len(b) > m.maxLen {
		b = b[:m.maxLen]
	}
	room := m.maxLen - len(b)
	op := m.r.Intn(3)
	if op == 0 && room == 0 {
		op = 1
	}
	if op == 1 && len(b) == 0 {
		op = 2
	}
	switch op {
	case 0:
		p := m.r.Intn(len(o))
		n := m.pieceLen(min(len(o)-p, room))
		pos := m.r.Intn(len(b) + 1)
		b = m.makeRoom(b, pos, n)
		copy(b[pos:pos+n], o[p:p+n])
	case 1:
		p := m.r.Intn(len(o))
		n := m.pieceLen(min(len(o)-p, len(b)))
		pos := m.r.Intn(len(b) - n + 1)
		copy(b[pos:pos+n], o[p:p+n])
	default:
		cut := m.r.Intn(len(b) + 1)
		q := m.r.Intn(len(o))
		end := min(len(o), q+m.maxLen-cut)
		b = append(b[:cut], o[q:end]...)
	}
	return b
}

// pieceLen picks a crossover length in [1, n]: short pieces as often as
// arbitrary ones, since long pieces mostly just copy the other input.
func (m *Mutator) pieceLen(n int) int {
	if m.r.Bool() {
		return m.chooseLen(n)
	}
	return 1 + m.r.Intn(n)
}

// AddDict adds tokens for the byte mutators; tokens that read as integers
// (decimal text, or 1/2/4/8-byte values in either byte order) also feed the
// number mutators. Duplicates and empty tokens are ignored.
func (m *Mutator) AddDict(tokens [][]byte) {
	for _, t := range tokens {
		m.addToken(t)
	}
}

// AddLearned adds a token learned while the target ran (a comparison's operand)
// and makes it hot.
func (m *Mutator) AddLearned(t []byte) {
	if i := m.addToken(t); i >= 0 {
		m.makeHot(i)
	}
}

// Promote makes hot the tokens the last mutation used; the worker calls it when
// that mutation found new coverage.
func (m *Mutator) Promote() {
	for _, i := range m.picked {
		m.makeHot(i)
	}
	m.picked = m.picked[:0]
}

func (m *Mutator) makeHot(i int32) {
	if !m.isHot[i] {
		m.isHot[i] = true
		m.hot = append(m.hot, m.tokens[i])
	}
}

// pickToken returns a dictionary token (the dictionary must not be empty): a hot
// one half of the time when there are any.
func (m *Mutator) pickToken() []byte {
	if len(m.hot) > 0 && m.r.Bool() {
		return m.hot[m.r.Intn(len(m.hot))]
	}
	i := m.r.Intn(len(m.tokens))
	if !m.isHot[i] {
		m.picked = append(m.picked, int32(i))
	}
	return m.tokens[i]
}

// addToken adds t to the dictionary if it is new and returns its index (-1 for
// an empty token).
func (m *Mutator) addToken(t []byte) int32 {
	if len(t) == 0 {
		return -1
	}
	if m.seen == nil {
		m.seen = make(map[string]int32)
	}
	if i, ok := m.seen[string(t)]; ok {
		return i
	}
	i := int32(len(m.tokens))
	m.seen[string(t)] = i
	m.tokens = append(m.tokens, bytes.Clone(t))
	m.isHot = append(m.isHot, false)
	if v, err := strconv.ParseInt(string(t), 0, 64); err == nil {
		m.ints = append(m.ints, uint64(v))
	} else if v, err := strconv.ParseUint(string(t), 0, 64); err == nil {
		m.ints = append(m.ints, v)
	}
	switch len(t) {
	case 1:
		m.ints = append(m.ints, uint64(t[0]))
	case 2:
		m.ints = append(m.ints, uint64(binary.LittleEndian.Uint16(t)), uint64(binary.BigEndian.Uint16(t)))
	case 4:
		m.ints = append(m.ints, uint64(binary.LittleEndian.Uint32(t)), uint64(binary.BigEndian.Uint32(t)))
	case 8:
		m.ints = append(m.ints, binary.LittleEndian.Uint64(t), binary.BigEndian.Uint64(t))
	}
	return i
}

// Integers are mutated as their two's complement bit pattern of the given
// width; the caller's conversion truncates (and sign-extends) the result.

func (m *Mutator) mutateInt(v uint64, width uint, signed bool) uint64 {
	mask := ^uint64(0) >> (64 - width)
	v &= mask
	orig := v
	for range 16 {
		v = m.intOp(v, width, signed) & mask
		if m.r.OneIn(4) {
			v = m.intOp(v, width, signed) & mask
		}
		if v != orig {
			return v
		}
	}
	return (orig ^ 1) & mask
}

func (m *Mutator) intOp(v uint64, width uint, signed bool) uint64 {
	switch m.r.Intn(10) {
	case 0, 1, 2:
		// Small steps are the most productive: off-by-one and length checks.
		d := uint64(1 + m.chooseLen(64))
		if m.r.Bool() {
			return v + d
		}
		return v - d
	case 3, 4:
		return m.interestingInt(width, signed)
	case 5:
		switch m.r.Intn(3) {
		case 0:
			return m.r.Uint64()
		case 1:
			return uint64(m.r.Intn(256)) - 128
		default:
			return uint64(m.r.Intn(1 << 16))
		}
	case 6:
		return v ^ 1<<m.r.Intn(int(width))
	case 7:
		if width == 8 {
			return v<<4 | v>>4&0xf
		}
		return bits.ReverseBytes64(v) >> (64 - width)
	case 8:
		if m.r.Bool() {
			return -v
		}
		return ^v
	default:
		if m.r.Bool() {
			return v << 1
		}
		if signed {
			return uint64(signExtend(v, width) >> 1)
		}
		return v >> 1
	}
}

func signExtend(v uint64, width uint) int64 {
	return int64(v<<(64-width)) >> (64 - width)
}

// mutInterestingInts are values that commonly sit on branch boundaries.
var mutInterestingInts = [...]int64{
	-129, -128, -100, 16, 32, 64, 100, 127, 128, 255, 256, 512, 1000, 1023,
	1024, 4096, 32767, 32768, 65535, 65536, 100663045, -100663046, 1e6, 1e9,
}

func (m *Mutator) interestingInt(width uint, signed bool) uint64 {
	switch m.r.Intn(5) {
	case 0:
		return uint64(m.r.Intn(3)) - 1 // -1, 0, 1
	case 1:
		// The top bit alone is the signed minimum; for unsigned types it is
		// still a boundary worth hitting.
		top := uint64(1) << (width - 1)
		switch {
		case m.r.Bool():
			return top
		case signed:
			return top - 1
		default:
			return ^uint64(0)
		}
	case 2:
		p := uint64(1)<<m.r.Intn(int(width)) + uint64(m.r.Intn(3)) - 1
		if signed && m.r.Bool() {
			return -p
		}
		return p
	case 3:
		if len(m.ints) > 0 {
			return m.ints[m.r.Intn(len(m.ints))]
		}
		fallthrough
	default:
		return uint64(mutInterestingInts[m.r.Intn(len(mutInterestingInts))])
	}
}

// mutateFloat works in float64; for float32 the result is rounded and the
// change is judged on the float32 bits.
func (m *Mutator) mutateFloat(v float64, is32 bool) float64 {
	c := v
	for range 16 {
		c = m.floatOp(v, is32)
		if m.r.OneIn(4) {
			c = m.floatOp(c, is32)
		}
		if is32 {
			if math.Float32bits(float32(c)) != math.Float32bits(float32(v)) {
				return float64(float32(c))
			}
		} else if math.Float64bits(c) != math.Float64bits(v) {
			return c
		}
	}
	return c
}

var mutInterestingFloats = [...]float64{
	0, 1, -1, 0.5, 2, 10, 100, 1e-10, 1e10, 1e300, -1e300,
	math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64,
	math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32,
	math.MaxInt64, math.MinInt64, math.MaxUint32, 1 << 53, 1<<53 + 1,
}

func (m *Mutator) floatOp(v float64, is32 bool) float64 {
	switch m.r.Intn(9) {
	case 0, 1:
		d := float64(1 + m.chooseLen(100))
		if m.r.OneIn(3) {
			d = m.float01()
		}
		if m.r.Bool() {
			return v + d
		}
		return v - d
	case 2:
		d := float64(1 + m.r.Intn(10))
		if m.r.Bool() {
			return v * d
		}
		return v / d
	case 3:
		switch m.r.Intn(6) {
		case 0:
			return math.NaN()
		case 1:
			return math.Inf(1)
		case 2:
			return math.Inf(-1)
		case 3:
			return math.Copysign(0, -1)
		default:
			return mutInterestingFloats[m.r.Intn(len(mutInterestingFloats))]
		}
	case 4:
		if is32 {
			return float64(math.Float32frombits(m.r.Uint32()))
		}
		return math.Float64frombits(m.r.Uint64())
	case 5:
		switch m.r.Intn(3) {
		case 0:
			if !math.IsInf(v, 0) && !math.IsNaN(v) && math.Trunc(v) != v {
				return math.Trunc(v)
			}
			fallthrough
		case 1:
			return float64(int64(m.r.Intn(2001)) - 1000)
		default:
			if len(m.ints) > 0 {
				return float64(int64(m.ints[m.r.Intn(len(m.ints))]))
			}
			return float64(m.r.Intn(1 << 20))
		}
	case 6:
		return -v
	case 7:
		// Mostly mantissa bits: exponent flips mostly land on extremes,
		// which the other ops already produce.
		if is32 {
			n := 23
			if m.r.OneIn(4) {
				n = 32
			}
			return float64(math.Float32frombits(math.Float32bits(float32(v)) ^ 1<<m.r.Intn(n)))
		}
		n := 52
		if m.r.OneIn(4) {
			n = 64
		}
		return math.Float64frombits(math.Float64bits(v) ^ 1<<m.r.Intn(n))
	default:
		// A random magnitude over the range where most thresholds live.
		return m.float01() * math.Pow10(m.r.Intn(13)-3)
	}
}

// float01 returns a float in [0, 1).
func (m *Mutator) float01() float64 {
	return float64(m.r.Uint64()>>11) / (1 << 53)
}
