package fuzzrt

import (
	"testing"
	"time"
)

// TestReweigh: an entry reaching a block no other entry reaches outweighs entries
// reaching only common blocks; a slow or large entry weighs less than a fast, small
// one with the same coverage.
func TestReweigh(t *testing.T) {
	common := []uint32{0<<8 | 1, 1<<8 | 1}
	rare := []uint32{0<<8 | 1, 1<<8 | 1, 2<<8 | 1}
	w := &worker{seen: make([]uint8, 3), mut: NewMutator(1)}
	w.corpus = []corpusItem{
		{vals: []any{"a"}, cov: common, dur: time.Microsecond},
		{vals: []any{"b"}, cov: common, dur: time.Microsecond},
		{vals: []any{"c"}, cov: rare, dur: time.Microsecond},
		{vals: []any{"d"}, cov: common, dur: 100 * time.Microsecond},
		{vals: []any{string(make([]byte, 10000))}, cov: common, dur: time.Microsecond},
	}
	w.reweigh()
	wt := func(i int) float64 { return w.corpus[i].weight }
	if !(wt(2) > wt(0)) {
		t.Errorf("rare entry %.3f does not outweigh a common one %.3f", wt(2), wt(0))
	}
	if !(wt(3) < wt(0)) {
		t.Errorf("slow entry %.3f not below a fast one %.3f", wt(3), wt(0))
	}
	if !(wt(4) < wt(0)) {
		t.Errorf("large entry %.3f not below a small one %.3f", wt(4), wt(0))
	}
	// pick follows the weights.
	counts := make([]int, len(w.corpus))
	for range 20000 {
		counts[w.pick()]++
	}
	if !(counts[2] > counts[0] && counts[0] > counts[3]) {
		t.Errorf("picks %v do not follow the weights", counts)
	}
}
