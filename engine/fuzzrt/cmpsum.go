package fuzzrt

import (
	"bytes"
	"fmt"
	"math/bits"
	"reflect"
	"strconv"
)

// Comparison summaries: what the comparison rounds fed each comparison site, so
// that the editor can say why a branch is not taken ("compared `magic ==
// 0x89504e47`: nearest 0x89504e00"). Only comparison rounds record (see cmp.go),
// so none of this is on the per-execution path. Memory is bounded: CmpValuesMax
// operand pairs per site, CmpSitesMax sites per table.

const (
	// CmpValuesMax bounds the operand pairs kept per site: the nearest pair, and
	// the most frequent ones (approximately: a new pair takes the place of the
	// least frequent, as the space-saving algorithm does).
	CmpValuesMax = 4
	// CmpSitesMax bounds the sites of a table; sites past it are dropped.
	CmpSitesMax = 1 << 14
	// cmpTextMax bounds an operand's text.
	cmpTextMax = 48
)

// CmpSummary is what one comparison site was fed: its operands as Go text (A the
// left one), how often, and how far apart (Dist: |A-B| for integers, the bytes
// after the common prefix for strings, the differing elements of arrays, 1 when
// only equality is known, 0 when equal).
type CmpSummary struct {
	Site  int32      `json:"site"`
	Count int64      `json:"count"`
	Vals  []CmpValue `json:"vals"`
}

// CmpValue is one operand pair of a CmpSummary.
type CmpValue struct {
	A     string `json:"a"`
	B     string `json:"b"`
	Count int64  `json:"count"`
	Dist  uint64 `json:"dist"`
}

// CmpTable is a bounded table of CmpSummary by site.
type CmpTable struct {
	sites map[int32]*CmpSummary
}

// Len is the number of sites in t.
func (t *CmpTable) Len() int { return len(t.sites) }

// Get returns the summary of site (nil: none).
func (t *CmpTable) Get(site int32) *CmpSummary { return t.sites[site] }

// Add counts n times the pair v at site.
func (t *CmpTable) Add(site int32, v CmpValue) {
	if t.sites == nil {
		t.sites = map[int32]*CmpSummary{}
	}
	s := t.sites[site]
	if s == nil {
		if len(t.sites) >= CmpSitesMax {
			return
		}
		s = &CmpSummary{Site: site}
		t.sites[site] = s
	}
	s.add(v)
}

// Merge adds every pair of u to t.
func (t *CmpTable) Merge(u []CmpSummary) {
	for _, s := range u {
		for _, v := range s.Vals {
			t.Add(s.Site, v)
		}
		// Records beyond those of the values kept.
		if t.sites[s.Site] != nil {
			var n int64
			for _, v := range s.Vals {
				n += v.Count
			}
			t.sites[s.Site].Count += s.Count - n
		}
	}
}

// Take returns the summaries and empties t.
func (t *CmpTable) Take() []CmpSummary {
	out := make([]CmpSummary, 0, len(t.sites))
	for _, s := range t.sites {
		out = append(out, *s)
	}
	t.sites = nil
	return out
}

func (s *CmpSummary) add(v CmpValue) {
	s.Count += v.Count
	for i := range s.Vals {
		if s.Vals[i].A == v.A && s.Vals[i].B == v.B {
			s.Vals[i].Count += v.Count
			return
		}
	}
	if len(s.Vals) < CmpValuesMax {
		s.Vals = append(s.Vals, v)
		return
	}
	// Full: the nearest pair stays; of the others the least frequent gives its
	// place to v (which inherits its count, as in space-saving), unless v is
	// nearer than all, which then takes the place.
	near, least := nearLeast(len(s.Vals), func(i int) (uint64, int64) { return s.Vals[i].Dist, s.Vals[i].Count })
	if v.Dist < s.Vals[near].Dist && s.Vals[near].Count > s.Vals[least].Count {
		s.Vals[least] = s.Vals[near] // the old nearest may be frequent: keep it
		s.Vals[near] = v
		return
	}
	v.Count += s.Vals[least].Count
	s.Vals[least] = v
}

// cmpValue renders a recorded comparison's operands.
func cmpValue(a, b any) CmpValue {
	return CmpValue{A: cmpText(a), B: cmpText(b), Count: 1, Dist: cmpDist(a, b)}
}

func cmpText(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = strconv.Quote(clip(x))
	case []byte:
		s = strconv.Quote(clip(string(x)))
	default:
		if k, u := Bits(v); k.IsInt() {
			if k.Signed() {
				return strconv.FormatInt(signExt(u, k.Size()), 10)
			}
			return "0x" + strconv.FormatUint(u, 16)
		}
		s = fmt.Sprint(v)
	}
	if len(s) > cmpTextMax {
		s = s[:cmpTextMax] + "…"
	}
	return s
}

func clip(s string) string {
	if len(s) > cmpTextMax {
		return s[:cmpTextMax]
	}
	return s
}

func cmpDist(a, b any) uint64 {
	x, ok1 := toOperand(a)
	y, ok2 := toOperand(b)
	switch {
	case ok1 && ok2 && x.isInt && y.isInt:
		if x.u > y.u {
			return x.u - y.u
		}
		return y.u - x.u
	case ok1 && ok2 && x.isStr && y.isStr:
		n := 0
		for n < len(x.s) && n < len(y.s) && x.s[n] == y.s[n] {
			n++
		}
		return uint64(max(len(x.s), len(y.s)) - n)
	case ok1 && ok2 && x.isFlt && y.isFlt:
		d := x.f - y.f
		if d < 0 {
			d = -d
		}
		if d != d || d > 1<<62 {
			return 1 << 62
		}
		return uint64(d)
	}
	ra, rb := reflect.ValueOf(a), reflect.ValueOf(b)
	if ra.Kind() == reflect.Array && rb.Kind() == reflect.Array && ra.Len() == rb.Len() && ra.Type() == rb.Type() {
		var d uint64
		for i := 0; i < ra.Len(); i++ {
			ea, eb := ra.Index(i), rb.Index(i)
			if i >= 8 {
				break
			}
			if ea.CanUint() && eb.CanUint() {
				d = d<<8 | uint64(bits.OnesCount64(ea.Uint()^eb.Uint()))
				continue
			}
			if !ea.Equal(eb) {
				d++
			}
		}
		return d
	}
	if a == b {
		return 0
	}
	return 1
}

// rawSums are the worker's summaries before they are rendered: operands kept as
// recorded (the hook copied byte slices), so that a comparison seen again costs
// a comparison of values; text is made when they are sent.
type rawSums map[int32]*rawSum

type rawSum struct {
	count int64
	vals  [CmpValuesMax]rawVal
	n     int
}

type rawVal struct {
	a, b  any
	count int64
	dist  uint64
}

// summarize adds the records of a comparison round's execution to c.sum.
func (c *cmpState) summarize(recs []cmpRecord) {
	if c.sum == nil {
		c.sum = rawSums{}
	}
	for _, r := range recs {
		s := c.sum[r.site]
		if s == nil {
			if len(c.sum) >= CmpSitesMax {
				continue
			}
			s = &rawSum{}
			c.sum[r.site] = s
		}
		s.count++
		a, b := r.a, r.b
		found := false
		for i := range s.vals[:s.n] {
			if v := &s.vals[i]; sameOperand(v.a, a) && sameOperand(v.b, b) {
				v.count++
				found = true
				break
			}
		}
		if found {
			continue
		}
		v := rawVal{a: a, b: b, count: 1, dist: cmpDist(a, b)}
		if s.n < CmpValuesMax {
			s.vals[s.n] = v
			s.n++
			continue
		}
		// As CmpSummary.add: the nearest stays, the least frequent other makes way.
		near, least := nearLeast(s.n, func(i int) (uint64, int64) { return s.vals[i].dist, s.vals[i].count })
		if v.dist < s.vals[near].dist && s.vals[near].count > s.vals[least].count {
			s.vals[least] = s.vals[near]
			s.vals[near] = v
			continue
		}
		v.count += s.vals[least].count
		s.vals[least] = v
	}
}

// takeSums renders and empties c.sum.
func (c *cmpState) takeSums() []CmpSummary {
	out := make([]CmpSummary, 0, len(c.sum))
	for site, s := range c.sum {
		cs := CmpSummary{Site: site, Count: s.count}
		for _, v := range s.vals[:s.n] {
			cs.Vals = append(cs.Vals, CmpValue{A: cmpText(v.a), B: cmpText(v.b), Count: v.count, Dist: v.dist})
		}
		out = append(out, cs)
	}
	c.sum = nil
	return out
}

// sameOperand compares recorded operands: byte slices by content, the rest
// (comparable: the hooks take comparable types) with ==.
func sameOperand(x, y any) bool {
	if xb, ok := x.([]byte); ok {
		yb, ok := y.([]byte)
		return ok && bytes.Equal(xb, yb)
	}
	if _, ok := y.([]byte); ok {
		return false
	}
	return x == y
}

// nearLeast picks, among n values (dist, count) = at(i), the nearest and, of
// the others, the least frequent.
func nearLeast(n int, at func(int) (uint64, int64)) (near, least int) {
	least = -1
	nearDist, _ := at(0)
	for i := 1; i < n; i++ {
		if d, _ := at(i); d < nearDist {
			near, nearDist = i, d
		}
	}
	var leastCount int64
	for i := 0; i < n; i++ {
		if _, c := at(i); i != near && (least < 0 || c < leastCount) {
			least, leastCount = i, c
		}
	}
	return near, least
}
