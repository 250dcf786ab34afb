package fuzzrt

import (
	"encoding/binary"
	"strconv"
)

// A byteOp mutates b (in place or by growing it, never past m.maxLen) and
// reports false when it does not apply to b, so the caller picks another.
type byteOp func(m *Mutator, b []byte) ([]byte, bool)

var mutByteOps = [...]byteOp{
	opRemoveRange,
	opRemoveRange, // twice: shrinking keeps inputs fast and small
	opInsertRandom,
	opDuplicateRange,
	opCopyRange,
	opBitFlip,
	opSetByte,
	opSwapByte,
	opArith8,
	opArith16,
	opArith32,
	opArith64,
	opInteresting8,
	opInteresting16,
	opInteresting32,
	opOverwriteToken,
	opInsertToken,
	opShuffleRange,
	opInsertRepeated,
	opOverwriteRepeated,
	opSwapRanges,
	opInsertNumber,
	opDuplicateLine,
	opDeleteLine,
	opReplaceWord,
	opReplaceWord, // twice: on text, the op that most often makes a new valid input
	opInsertTokenAtBoundary,
}

var mutGrowOps = [...]byteOp{opInsertRandom, opInsertToken, opInsertRepeated, opInsertNumber}

// mutateBytes applies 1..8 stacked mutations, biased toward few.
func (m *Mutator) mutateBytes(b []byte) []byte {
	if len(b) > m.maxLen {
		b = b[:m.maxLen]
	}
	n := 1 + m.r.Intn(1<<m.r.Intn(4))
	done := 0
	for tries := 0; done < n && tries < 4*n+16; tries++ {
		op := mutByteOps[m.r.Intn(len(mutByteOps))]
		if len(b) == 0 {
			// Most ops need bytes to work on; go straight to growing.
			op = mutGrowOps[m.r.Intn(len(mutGrowOps))]
		}
		if nb, ok := op(m, b); ok {
			b = nb
			done++
		}
	}
	if done == 0 {
		// Never hand back an unmutated input when a change is possible.
		if nb, ok := opInsertRandom(m, b); ok {
			b = nb
		} else if nb, ok := opSetByte(m, b); ok {
			b = nb
		}
	}
	return b
}

func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && cap(a) == cap(b) && (cap(a) == 0 || &a[:1][0] == &b[:1][0])
}

// chooseLen picks a range length in [1, n], mostly short ones.
func (m *Mutator) chooseLen(n int) int {
	switch x := m.r.Intn(100); {
	case x < 90:
		return 1 + m.r.Intn(min(8, n))
	case x < 99:
		return 1 + m.r.Intn(min(32, n))
	default:
		return 1 + m.r.Intn(n)
	}
}

// makeRoom opens n bytes at pos (contents unspecified). Growing past the
// capacity reserves extra so that stacked inserts do not each reallocate.
func (m *Mutator) makeRoom(b []byte, pos, n int) []byte {
	l := len(b)
	if l+n <= cap(b) {
		b = b[:l+n]
		copy(b[pos+n:], b[pos:l])
		return b
	}
	c := max(min(max(2*cap(b), 64), m.maxLen), l+n)
	nb := make([]byte, l+n, c)
	copy(nb, b[:pos])
	copy(nb[pos+n:], b[pos:])
	return nb
}

func (m *Mutator) room(b []byte) int { return m.maxLen - len(b) }

func (m *Mutator) fillRandom(p []byte) {
	for len(p) >= 8 {
		binary.LittleEndian.PutUint64(p, m.r.Uint64())
		p = p[8:]
	}
	if len(p) > 0 {
		x := m.r.Uint64()
		for i := range p {
			p[i] = byte(x)
			x >>= 8
		}
	}
}

func opRemoveRange(m *Mutator, b []byte) ([]byte, bool) {
	if len(b) == 0 {
		return b, false
	}
	pos := m.r.Intn(len(b))
	n := m.chooseLen(len(b) - pos)
	copy(b[pos:], b[pos+n:])
	return b[:len(b)-n], true
}

func opInsertRandom(m *Mutator, b []byte) ([]byte, bool) {
	room := m.room(b)
	if room <= 0 {
		return b, false
	}
	n := m.chooseLen(min(room, 1024))
	pos := m.r.Intn(len(b) + 1)
	b = m.makeRoom(b, pos, n)
	m.fillRandom(b[pos : pos+n])
	return b, true
}

func opDuplicateRange(m *Mutator, b []byte) ([]byte, bool) {
	room := m.room(b)
	if len(b) == 0 || room <= 0 {
		return b, false
	}
	src := m.r.Intn(len(b))
	n := m.chooseLen(min(len(b)-src, room))
	// The source may move when room is made; keep a copy aside.
	m.tmp = append(m.tmp[:0], b[src:src+n]...)
	dst := m.r.Intn(len(b) + 1)
	b = m.makeRoom(b, dst, n)
	copy(b[dst:], m.tmp)
	return b, true
}

func opCopyRange(m *Mutator, b []byte) ([]byte, bool) {
	if len(b) < 2 {
		return b, false
	}
	src := m.r.Intn(len(b))
	dst := m.r.Intn(len(b))
	if src == dst {
		return b, false
	}
	n := m.chooseLen(len(b) - max(src, dst))
	copy(b[dst:dst+n], b[src:src+n])
	return b, true
}

func opBitFlip(m *Mutator, b []byte) ([]byte, bool) {
	if len(b) == 0 {
		return b, false
	}
	b[m.r.Intn(len(b))] ^= 1 << m.r.Intn(8)
	return b, true
}

func opSetByte(m *Mutator, b []byte) ([]byte, bool) {
	if len(b) == 0 {
		return b, false
	}
	// XOR with a nonzero value so the byte always changes.
	b[m.r.Intn(len(b))] ^= byte(1 + m.r.Intn(255))
	return b, true
}

func opSwapByte(m *Mutator, b []byte) ([]byte, bool) {
	if len(b) < 2 {
		return b, false
	}
	i, j := m.r.Intn(len(b)), m.r.Intn(len(b))
	if b[i] == b[j] {
		return b, false
	}
	b[i], b[j] = b[j], b[i]
	return b, true
}

// delta returns a nonzero step in [-35, 35], like AFL's arithmetic stage.
func (m *Mutator) delta() uint64 {
	d := uint64(1 + m.r.Intn(35))
	if m.r.Bool() {
		return -d
	}
	return d
}

func (m *Mutator) order() binary.ByteOrder {
	if m.r.Bool() {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

func opArith8(m *Mutator, b []byte) ([]byte, bool) {
	if len(b) == 0 {
		return b, false
	}
	b[m.r.Intn(len(b))] += byte(m.delta())
	return b, true
}

func opArith16(m *Mutator, b []byte) ([]byte, bool) {
	if len(b) < 2 {
		return b, false
	}
	p := b[m.r.Intn(len(b)-1):]
	o := m.order()
	o.PutUint16(p, o.Uint16(p)+uint16(m.delta()))
	return b, true
}

func opArith32(m *Mutator, b []byte) ([]byte, bool) {
	if len(b) < 4 {
		return b, false
	}
	p := b[m.r.Intn(len(b)-3):]
	o := m.order()
	o.PutUint32(p, o.Uint32(p)+uint32(m.delta()))
	return b, true
}

func opArith64(m *Mutator, b []byte) ([]byte, bool) {
	if len(b) < 8 {
		return b, false
	}
	p := b[m.r.Intn(len(b)-7):]
	o := m.order()
	o.PutUint64(p, o.Uint64(p)+m.delta())
	return b, true
}

// Each wider table includes the narrower ones (sign-extended) in
// interestingValue, so they are not repeated here.
var (
	mutInteresting8  = [...]int8{-128, -1, 0, 1, 16, 32, 64, 100, 127}
	mutInteresting16 = [...]int16{-32768, -129, 128, 255, 256, 512, 1000, 1024, 4096, 32767}
	mutInteresting32 = [...]int32{-2147483648, -100663046, -32769, 32768, 65535, 65536, 100663045, 2147483647}
)

// interestingValue picks from the tables up to the given byte width.
func (m *Mutator) interestingValue(size int) int64 {
	n := len(mutInteresting8)
	if size >= 2 {
		n += len(mutInteresting16)
	}
	if size >= 4 {
		n += len(mutInteresting32)
	}
	i := m.r.Intn(n)
	if i < len(mutInteresting8) {
		return int64(mutInteresting8[i])
	}
	i -= len(mutInteresting8)
	if i < len(mutInteresting16) {
		return int64(mutInteresting16[i])
	}
	return int64(mutInteresting32[i-len(mutInteresting16)])
}

func opInteresting8(m *Mutator, b []byte) ([]byte, bool) {
	if len(b) == 0 {
		return b, false
	}
	b[m.r.Intn(len(b))] = byte(m.interestingValue(1))
	return b, true
}

func opInteresting16(m *Mutator, b []byte) ([]byte, bool) {
	if len(b) < 2 {
		return b, false
	}
	m.order().PutUint16(b[m.r.Intn(len(b)-1):], uint16(m.interestingValue(2)))
	return b, true
}

func opInteresting32(m *Mutator, b []byte) ([]byte, bool) {
	if len(b) < 4 {
		return b, false
	}
	m.order().PutUint32(b[m.r.Intn(len(b)-3):], uint32(m.interestingValue(4)))
	return b, true
}

func opOverwriteToken(m *Mutator, b []byte) ([]byte, bool) {
	if len(m.tokens) == 0 {
		return b, false
	}
	t := m.pickToken()
	if len(t) > len(b) {
		return b, false
	}
	copy(b[m.r.Intn(len(b)-len(t)+1):], t)
	return b, true
}

func opInsertToken(m *Mutator, b []byte) ([]byte, bool) {
	if len(m.tokens) == 0 {
		return b, false
	}
	t := m.pickToken()
	if len(t) > m.room(b) {
		return b, false
	}
	pos := m.r.Intn(len(b) + 1)
	b = m.makeRoom(b, pos, len(t))
	copy(b[pos:], t)
	return b, true
}

func opShuffleRange(m *Mutator, b []byte) ([]byte, bool) {
	if len(b) < 2 {
		return b, false
	}
	pos := m.r.Intn(len(b) - 1)
	n := 1 + m.chooseLen(len(b)-pos-1) // at least 2 bytes
	p := b[pos : pos+n]
	for i := n - 1; i > 0; i-- {
		j := m.r.Intn(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	return b, true
}

// repeatedByte favors bytes that parsers treat specially.
func (m *Mutator) repeatedByte() byte {
	switch m.r.Intn(4) {
	case 0:
		return 0
	case 1:
		return 0xff
	case 2:
		return "0a ,\n\"'(<{[\\"[m.r.Intn(12)]
	default:
		return byte(m.r.Uint64())
	}
}

func opInsertRepeated(m *Mutator, b []byte) ([]byte, bool) {
	room := m.room(b)
	if room <= 0 {
		return b, false
	}
	n := m.chooseLen(min(room, 4096))
	pos := m.r.Intn(len(b) + 1)
	b = m.makeRoom(b, pos, n)
	c := m.repeatedByte()
	for i := range n {
		b[pos+i] = c
	}
	return b, true
}

func opOverwriteRepeated(m *Mutator, b []byte) ([]byte, bool) {
	if len(b) == 0 {
		return b, false
	}
	pos := m.r.Intn(len(b))
	n := m.chooseLen(len(b) - pos)
	c := m.repeatedByte()
	for i := range n {
		b[pos+i] = c
	}
	return b, true
}

// opSwapRanges exchanges two non-overlapping ranges of equal length.
func opSwapRanges(m *Mutator, b []byte) ([]byte, bool) {
	if len(b) < 2 {
		return b, false
	}
	n := m.chooseLen(len(b) / 2)
	p1 := m.r.Intn(len(b) - 2*n + 1)
	p2 := p1 + n + m.r.Intn(len(b)-p1-2*n+1)
	m.tmp = append(m.tmp[:0], b[p1:p1+n]...)
	copy(b[p1:p1+n], b[p2:p2+n])
	copy(b[p2:p2+n], m.tmp)
	return b, true
}

// opInsertNumber inserts or overwrites with an interesting integer as
// decimal text, for inputs that are parsed as text.
func opInsertNumber(m *Mutator, b []byte) ([]byte, bool) {
	var v int64
	if len(m.ints) > 0 && m.r.Bool() {
		v = int64(m.ints[m.r.Intn(len(m.ints))])
	} else if m.r.Bool() {
		v = m.interestingValue(4)
	} else {
		v = signExtend(m.interestingInt(64, true), 64)
	}
	m.tmp = strconv.AppendInt(m.tmp[:0], v, 10)
	t := m.tmp
	if m.r.Bool() && len(t) <= len(b) {
		copy(b[m.r.Intn(len(b)-len(t)+1):], t)
		return b, true
	}
	if len(t) > m.room(b) {
		return b, false
	}
	pos := m.r.Intn(len(b) + 1)
	b = m.makeRoom(b, pos, len(t))
	copy(b[pos:], t)
	return b, true
}
