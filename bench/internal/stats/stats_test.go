package stats

import (
	"math"
	"testing"
)

// The figures are scipy 1.10.1's: scipy.stats.mannwhitneyu(x, y,
// alternative='two-sided') gives U1 (its statistic) and p; A12 is U1/(n1·n2).
// Two are also checked by hand: [1 2 3] against [4 5 6] is the most extreme of
// C(6,3) = 20 arrangements, p = 2/20; [1 2 3] against 12 greater values, 2/C(15,3).
func TestMannWhitneyAgainstScipy(t *testing.T) {
	for _, c := range []struct {
		name string
		x, y []float64
		u, p float64
	}{
		{"exact, by hand", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 0.1},
		{"exact, n=5, fuzzls ahead", []float64{392, 401, 388, 420, 415}, []float64{330, 341, 339, 352, 347}, 25, 0.007936507936507936},
		{"all tied (a saturating target)", []float64{34, 34, 34, 34, 34}, []float64{34, 34, 34, 34, 34}, 12.5, 1},
		{"ties: normal approximation", []float64{34, 34, 34, 35, 34}, []float64{34, 34, 33, 34, 34}, 17, 0.23303798227390538},
		{"one tie across the samples", []float64{1116, 1223, 1180, 1150, 1199}, []float64{826, 841, 1116, 830, 900}, 24.5, 0.015970696353780123},
		{"n=10, normal approximation", []float64{5, 7, 9, 11, 13, 15, 17, 19, 21, 23}, []float64{6, 8, 10, 12, 14, 16, 18, 20, 22, 24}, 45, 0.7337299956962472},
		{"exact, unequal sizes, by hand", []float64{1, 2, 3}, []float64{10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}, 0, 2.0 / 455},
		{"n=10 with ties", []float64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3}, []float64{2, 7, 1, 8, 2, 8, 1, 8, 2, 8}, 45.5, 0.7595466927122063},
		{"one each", []float64{7}, []float64{3}, 1, 1},
	} {
		if u := U1(c.x, c.y); u != c.u {
			t.Errorf("%s: U1 = %v, want %v", c.name, u, c.u)
		}
		if p := MannWhitneyP(c.x, c.y); math.Abs(p-c.p) > 1e-12*math.Max(1, c.p) {
			t.Errorf("%s: p = %.17g, want %.17g", c.name, p, c.p)
		}
		if p, q := MannWhitneyP(c.x, c.y), MannWhitneyP(c.y, c.x); math.Abs(p-q) > 1e-15 {
			t.Errorf("%s: two-sided p depends on the order: %v and %v", c.name, p, q)
		}
		if a, want := A12(c.x, c.y), c.u/float64(len(c.x)*len(c.y)); a != want {
			t.Errorf("%s: A12 = %v, want %v", c.name, a, want)
		}
	}
}

func TestA12(t *testing.T) {
	// by hand: of the 4 pairs, 5>4, 5=5 (a half), 7>4, 7>5: 3.5/4
	if a := A12([]float64{5, 7}, []float64{4, 5}); a != 0.875 {
		t.Errorf("A12 = %v, want 0.875", a)
	}
	if a := A12([]float64{1, 2}, []float64{3, 4}); a != 0 {
		t.Errorf("A12 of a sample wholly below = %v, want 0", a)
	}
	if !math.IsNaN(A12(nil, []float64{1})) || !math.IsNaN(MannWhitneyP([]float64{1}, nil)) {
		t.Error("an empty sample gives a figure, want NaN")
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{7}, 7},
	} {
		in := append([]float64(nil), c.xs...)
		if m := Median(in); m != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.xs, m, c.want)
		}
		for i := range in {
			if in[i] != c.xs[i] {
				t.Errorf("Median changed its input: %v", in)
			}
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median of none is not NaN")
	}
}

// The exact distribution summed over every U is the number of arrangements,
// C(n1+n2, n1), and is symmetric.
func TestExactDistribution(t *testing.T) {
	if p := exactSF(0, 8, 12); p != 1 {
		t.Errorf("P(U ≥ 0) = %v, want 1", p)
	}
	// P(U ≥ 96) for 8 and 12: only the most extreme arrangement, 1/C(20,8)
	if p, want := exactSF(96, 8, 12), 1.0/125970; math.Abs(p-want) > 1e-18 {
		t.Errorf("P(U ≥ max) = %v, want %v", p, want)
	}
	for u := 0; u <= 96; u++ {
		if a, b := exactSF(u, 8, 12), 1-exactSF(96-u+1, 8, 12); math.Abs(a-b) > 1e-12 {
			t.Fatalf("not symmetric at %d: P(U ≥ u) = %v, P(U ≤ mn-u) = %v", u, a, b)
		}
	}
}
