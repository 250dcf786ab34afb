package engine

import (
	"context"
	"encoding/binary"
	"hash/maphash"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
)

// minimize shrinks vals while fails(candidate) stays true, until ctx is done
// or no candidate helps. It never returns a value for which fails was not
// true (the original is assumed failing). Arguments are worked on left to
// right, in passes repeated until one makes no progress. The search is
// deterministic and greedy; since each call of fails may cost a process
// start, no candidate is tried twice and none equals the current value.
// fails receives a private copy it may modify; vals itself is not changed.
func minimize(ctx context.Context, vals []any, fails func([]any) bool) []any {
	m := &minimizer{
		ctx:   ctx,
		fails: fails,
		cur:   minCloneValues(vals),
		tried: make(map[uint64]struct{}),
		seed:  maphash.MakeSeed(),
		lows:  make(map[int]minLow),
	}
	m.tried[m.key(m.cur)] = struct{}{}
	for !m.done() {
		progress := false
		for i := range m.cur {
			if m.arg(i) {
				progress = true
			}
		}
		if !progress {
			break
		}
	}
	return m.cur
}

// minimizer is the state of one minimize call.
type minimizer struct {
	ctx   context.Context
	fails func([]any) bool
	cur   []any               // the smallest failing value so far
	tried map[uint64]struct{} // hashes of every value run (or known failing)
	seed  maphash.Seed
	lows  map[int]minLow // per argument: what its last binary search learned
	calls int            // calls of fails
}

// minLow records a magnitude known to pass for argument arg while the other
// arguments hash to others; a later pass resumes its binary search there
// instead of redoing it from 0.
type minLow struct {
	others uint64
	neg    bool
	lo     uint64
}

// low returns where a binary search for argument i may start.
func (m *minimizer) low(i int, neg bool, hi uint64) uint64 {
	if l, ok := m.lows[i]; ok && l.others == m.othersKey(i) && l.neg == neg && l.lo < hi {
		return l.lo
	}
	return 0
}

func (m *minimizer) setLow(i int, neg bool, lo uint64) {
	m.lows[i] = minLow{others: m.othersKey(i), neg: neg, lo: lo}
}

func (m *minimizer) othersKey(i int) uint64 {
	vals := make([]any, len(m.cur))
	copy(vals, m.cur)
	vals[i] = nil
	return m.key(vals)
}

func (m *minimizer) done() bool { return m.ctx.Err() != nil }

// try runs cur with argument i replaced by v and keeps it if it still fails.
func (m *minimizer) try(i int, v any) bool {
	if m.done() {
		return false
	}
	cand := make([]any, len(m.cur))
	copy(cand, m.cur)
	cand[i] = v
	k := m.key(cand)
	if _, ok := m.tried[k]; ok {
		return false
	}
	m.tried[k] = struct{}{}
	m.calls++
	if !m.fails(minCloneValues(cand)) {
		return false
	}
	m.cur = cand
	return true
}

// key hashes a value list; a 64-bit collision would only skip one candidate.
func (m *minimizer) key(vals []any) uint64 {
	var h maphash.Hash
	h.SetSeed(m.seed)
	var buf [9]byte
	num := func(tag byte, x uint64) {
		buf[0] = tag
		binary.LittleEndian.PutUint64(buf[1:], x)
		h.Write(buf[:])
	}
	for _, v := range vals {
		// The kind, then its bits, or the length and bytes; unsupported
		// values (NoKind) are never changed.
		k, u := fuzzrt.Bits(v)
		switch k {
		case fuzzrt.KindBytes:
			b := v.([]byte)
			num(byte(k), uint64(len(b)))
			h.Write(b)
		case fuzzrt.KindString:
			s := v.(string)
			num(byte(k), uint64(len(s)))
			h.WriteString(s)
		default:
			num(byte(k), u)
		}
	}
	return h.Sum64()
}

func (m *minimizer) arg(i int) bool {
	switch k, u := fuzzrt.Bits(m.cur[i]); {
	case k == fuzzrt.KindBytes || k == fuzzrt.KindString:
		return m.bytesArg(i)
	case k == fuzzrt.KindBool:
		return u != 0 && m.try(i, false)
	case k.IsFloat():
		return m.floatArg(i)
	case k.IsInt():
		return m.intArg(i)
	}
	return false
}

// bytesArg minimizes a []byte or string argument: cut the tail, remove
// chunks of decreasing size down to single bytes, then simplify bytes.
func (m *minimizer) bytesArg(i int) bool {
	_, isStr := m.cur[i].(string)
	get := func() []byte {
		if s, ok := m.cur[i].(string); ok {
			return []byte(s)
		}
		return m.cur[i].([]byte)
	}
	// Candidates are always fresh slices, so cur never aliases one we edit.
	tryB := func(b []byte) bool {
		if isStr {
			return m.try(i, string(b))
		}
		return m.try(i, b)
	}
	cat := func(parts ...[]byte) []byte {
		n := 0
		for _, p := range parts {
			n += len(p)
		}
		out := make([]byte, 0, n)
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}

	progress := false
	b := get()
	if len(b) == 0 {
		return false
	}
	if tryB([]byte{}) {
		return true
	}

	// Cut the tail: half, then smaller pieces, repeating a size that works.
	for cut := len(b) / 2; cut >= 1 && !m.done(); {
		b = get()
		if cut >= len(b) {
			cut = len(b) / 2
			continue
		}
		if tryB(cat(b[:len(b)-cut])) {
			progress = true
			continue
		}
		cut /= 2
	}

	// Remove chunks of n/2 … 1 bytes anywhere.
	for size := len(get()) / 2; size >= 1 && !m.done(); size /= 2 {
		for start := 0; !m.done(); {
			b = get()
			if start+size > len(b) {
				break
			}
			if tryB(cat(b[:start], b[start+size:])) {
				progress = true
				continue
			}
			start += size
		}
	}

	// Simplify: first everything at once, then byte by byte.
	b = get()
	all := make([]byte, len(b))
	for j, c := range b {
		all[j] = c
		if s := minSimpler(c); s != "" {
			all[j] = s[0]
		}
	}
	if tryB(all) {
		return true
	}
	for j := 0; j < len(get()) && !m.done(); j++ {
		b = get()
		if isStr && b[j] >= utf8.RuneSelf {
			// Prefer ASCII: one byte in place of the whole rune.
			if _, size := utf8.DecodeRune(b[j:]); size > 1 {
				for _, c := range []byte("0a ") {
					if tryB(cat(b[:j], []byte{c}, b[j+size:])) {
						progress = true
						break
					}
				}
				continue
			}
		}
		for _, c := range []byte(minSimpler(b[j])) {
			if tryB(cat(b[:j], []byte{c}, b[j+1:])) {
				progress = true
				break
			}
		}
	}
	return progress
}

// minSimpler lists the replacements to try for c, best first. The targets
// list nothing, so simplification cannot cycle.
func minSimpler(c byte) string {
	switch {
	case c == '0' || c == 'a' || c == ' ':
		return ""
	case c >= '1' && c <= '9':
		return "0"
	case c >= 'b' && c <= 'z' || c >= 'A' && c <= 'Z':
		return "a"
	default:
		return "0a "
	}
}

// intArg tries 0, then the positive value, then a binary search of the
// magnitude toward 0, then a few decrements for non-monotone conditions.
func (m *minimizer) intArg(i int) bool {
	k, u := fuzzrt.Bits(m.cur[i])
	mag, neg := u, false
	if k.Signed() && int64(u) < 0 {
		mag, neg = -u, true // -MinInt64 wraps to the right magnitude
	}
	if mag == 0 {
		return false
	}
	if m.try(i, minMakeInt(k, 0, false)) {
		return true
	}
	progress := false
	if neg && m.try(i, minMakeInt(k, mag, false)) {
		neg, progress = false, true
	}
	lo, hi := m.low(i, neg, mag), mag // lo passes, hi fails
	for hi-lo > 1 && !m.done() {
		mid := lo + (hi-lo)/2
		if m.try(i, minMakeInt(k, mid, neg)) {
			hi, progress = mid, true
		} else {
			lo = mid
		}
	}
	m.setLow(i, neg, lo)
	const maxMisses, maxSteps = 4, 64
	for d, steps := uint64(1), 0; d <= maxMisses && d < hi && steps < maxSteps && !m.done(); d++ {
		if m.try(i, minMakeInt(k, hi-d, neg)) {
			hi, progress = hi-d, true
			d = 0
			steps++
		}
	}
	return progress
}

// minMakeInt builds a value of integer kind k; magnitudes come from the
// argument's own range, so the conversion loses nothing that matters.
func minMakeInt(k fuzzrt.Kind, mag uint64, neg bool) any {
	if neg {
		mag = -mag
	}
	return k.FromBits(mag)
}

// floatArg tries 0, the positive value, the integer part (binary-searched
// toward 0 like an integer), fewer significant digits, then halving and
// division by 10 as long as the text does not get longer.
func (m *minimizer) floatArg(i int) bool {
	k := fuzzrt.KindOf(m.cur[i])
	is32 := k == fuzzrt.KindFloat32
	mk := k.FromFloat
	get := func() float64 {
		_, u := fuzzrt.Bits(m.cur[i])
		return k.Float(u)
	}
	v := get()
	if math.Float64bits(v) == 0 {
		return false
	}
	if m.try(i, mk(0)) {
		return true
	}
	if math.IsNaN(v) {
		return false
	}
	progress := false
	if v < 0 && m.try(i, mk(-v)) {
		v, progress = -v, true
	}
	if math.IsInf(v, 0) {
		// A finite value that still fails is simpler; 2^62 is in reach of the
		// binary search below, the largest finite value of the digit steps.
		big := math.MaxFloat64
		if is32 {
			big = math.MaxFloat32
		}
		sign := math.Copysign(1, v)
		switch {
		case m.try(i, mk(sign*(1<<62))):
			v = sign * (1 << 62)
		case m.try(i, mk(sign*big)):
			v = sign * big
		default:
			return progress
		}
		progress = true
	}
	if t := math.Trunc(v); t != v && m.try(i, mk(t)) {
		v, progress = t, true
	}
	if v == math.Trunc(v) && math.Abs(v) < 1<<63 {
		sign := math.Copysign(1, v)
		hi := uint64(math.Abs(v))
		lo := m.low(i, sign < 0, hi)
		for hi-lo > 1 && !m.done() {
			mid := lo + (hi-lo)/2
			if m.try(i, mk(sign*float64(mid))) {
				hi, progress = mid, true
			} else {
				lo = mid
			}
		}
		m.setLow(i, sign < 0, lo)
		v = get()
	}
	bits := int(k.Width())
	if mant, exp, ok := minSplitFloat(v, bits); ok && exp > 18 {
		// Beyond the integer search's range: binary-search the decimal
		// exponent, keeping the digits.
		lo, hi := 18, exp
		for hi-lo > 1 && !m.done() {
			mid := lo + (hi-lo)/2
			c, err := strconv.ParseFloat(mant+strconv.Itoa(mid), bits)
			if err == nil && m.try(i, mk(c)) {
				hi, progress = mid, true
			} else {
				lo = mid
			}
		}
		v = get()
	}
	for prec := 1; prec < 17 && !m.done(); prec++ {
		c, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', prec, bits), bits)
		if err != nil || c == v {
			break
		}
		if m.try(i, mk(c)) {
			v, progress = c, true
			break
		}
	}
	short := func(f float64) int { return len(strconv.FormatFloat(f, 'g', -1, bits)) }
	const maxSteps = 64
	for steps := 0; steps < maxSteps && !m.done(); steps++ {
		tenth, ok := minTenth(v, bits)
		switch {
		case ok && m.try(i, mk(tenth)):
		case short(v/2) <= short(v) && m.try(i, mk(v/2)):
		default:
			return progress
		}
		v, progress = get(), true
	}
	return progress
}

// minTenth divides v by ten in decimal (one less exponent, same digits),
// which v/10 in binary does not always give.
func minTenth(v float64, bits int) (float64, bool) {
	mant, exp, ok := minSplitFloat(v, bits)
	if !ok {
		return 0, false
	}
	c, err := strconv.ParseFloat(mant+strconv.Itoa(exp-1), bits)
	return c, err == nil && c != 0
}

// minSplitFloat splits v's shortest 'e' form into "d.ddde" and the exponent.
func minSplitFloat(v float64, bits int) (string, int, bool) {
	s := strconv.FormatFloat(v, 'e', -1, bits)
	e := strings.LastIndexByte(s, 'e')
	if e < 0 {
		return "", 0, false
	}
	exp, err := strconv.Atoi(s[e+1:])
	return s[:e+1], exp, err == nil
}

// minCloneValues copies vals so that no []byte is shared.
func minCloneValues(vals []any) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		if b, ok := v.([]byte); ok && b != nil {
			v = append([]byte{}, b...)
		}
		out[i] = v
	}
	return out
}
