package fuzzrt

import (
	"strconv"
	"testing"
)

// TestCmpTableBound: a table keeps at most CmpValuesMax pairs per site and
// CmpSitesMax sites, whatever it is fed; the nearest pair and the most frequent
// one stay among them, and the counts add up.
func TestCmpTableBound(t *testing.T) {
	var tab CmpTable
	const target = uint32(0x89504e47)
	for i := 0; i < 10000; i++ {
		v := uint32(i * 7919)
		if i%3 == 0 {
			v = 12 // the most frequent
		}
		if i == 5000 {
			v = 0x89504e00 // the nearest, seen once
		}
		tab.Add(1, cmpValue(v, target))
	}
	s := tab.Get(1)
	if s == nil || len(s.Vals) > CmpValuesMax {
		t.Fatalf("site 1: %+v, want at most %d values", s, CmpValuesMax)
	}
	if s.Count != 10000 {
		t.Errorf("count %d, want 10000", s.Count)
	}
	var nearest, frequent bool
	for _, v := range s.Vals {
		nearest = nearest || v.A == "0x89504e00" && v.B == "0x89504e47" && v.Dist == 0x47
		frequent = frequent || v.A == "0xc" && v.Count >= 3334
	}
	if !nearest || !frequent {
		t.Errorf("values %+v: nearest kept %v, most frequent kept %v", s.Vals, nearest, frequent)
	}
	for i := 0; i < CmpSitesMax+100; i++ {
		tab.Add(int32(i+2), cmpValue(strconv.Itoa(i), "x"))
	}
	if tab.Len() != CmpSitesMax {
		t.Errorf("%d sites, want the bound %d", tab.Len(), CmpSitesMax)
	}

	// Merging summaries keeps the bound and the counts.
	var merged CmpTable
	merged.Merge([]CmpSummary{*tab.Get(1)})
	merged.Merge([]CmpSummary{*tab.Get(1)})
	if m := merged.Get(1); m.Count != 20000 || len(m.Vals) > CmpValuesMax {
		t.Errorf("merged twice: %+v, want count 20000 and at most %d values", m, CmpValuesMax)
	}
}

// TestCmpDist: how far apart operands are, by kind.
func TestCmpDist(t *testing.T) {
	for _, c := range []struct {
		a, b any
		want uint64
	}{
		{12, 64, 52},
		{uint32(0x89504e00), uint32(0x89504e47), 0x47},
		{"PNG", "PNx", 1},
		{[]byte("abcd"), []byte("ab"), 2},
		{[4]byte{1, 2, 3, 4}, [4]byte{1, 2, 3, 4}, 0},
		{[2]byte{1, 0}, [2]byte{0, 0}, 1 << 8},
		{true, false, 1},
	} {
		if got := cmpDist(c.a, c.b); got != c.want {
			t.Errorf("cmpDist(%#v, %#v) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// BenchmarkCmpSummarize is the summary's cost per recorded comparison, paid
// only in comparison rounds: a round's execution of a parser-like target, up to
// maxCmpRecords records over a few hundred sites.
func BenchmarkCmpSummarize(b *testing.B) {
	var c cmpState
	recs := make([]cmpRecord, maxCmpRecords)
	for i := range recs {
		recs[i] = cmpRecord{site: int32(i % 200), a: uint32(i * 7919), b: uint32(0x89504e47)}
		if i%3 == 0 {
			recs[i].a, recs[i].b = []byte("GET /index.html"), []byte("POST")
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		c.summarize(recs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
}

// TestCmpSummarizeBound: the worker's own summaries keep the same bounds, the
// nearest pair and the most frequent, and render as the coordinator's.
func TestCmpSummarizeBound(t *testing.T) {
	var c cmpState
	var recs []cmpRecord
	for i := 0; i < 10000; i++ {
		v := uint32(i * 7919)
		if i%3 == 0 {
			v = 12
		}
		if i == 5000 {
			v = 0x89504e00
		}
		recs = append(recs, cmpRecord{site: 1, a: v, b: uint32(0x89504e47)})
	}
	for i := 0; i < CmpSitesMax+100; i++ {
		recs = append(recs, cmpRecord{site: int32(i + 2), a: []byte(strconv.Itoa(i)), b: []byte("x")})
	}
	c.summarize(recs)
	if len(c.sum) != CmpSitesMax {
		t.Errorf("%d sites, want the bound %d", len(c.sum), CmpSitesMax)
	}
	sums := c.takeSums()
	var s *CmpSummary
	for i := range sums {
		if sums[i].Site == 1 {
			s = &sums[i]
		}
	}
	if s == nil || s.Count != 10000 || len(s.Vals) > CmpValuesMax {
		t.Fatalf("site 1: %+v, want count 10000 and at most %d values", s, CmpValuesMax)
	}
	var nearest, frequent bool
	for _, v := range s.Vals {
		nearest = nearest || v.A == "0x89504e00" && v.Dist == 0x47
		frequent = frequent || v.A == "0xc" && v.Count >= 3334
	}
	if !nearest || !frequent || c.sum != nil {
		t.Errorf("values %+v: nearest kept %v, most frequent kept %v; emptied: %v", s.Vals, nearest, frequent, c.sum == nil)
	}
}
