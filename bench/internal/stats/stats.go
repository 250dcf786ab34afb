// Package stats holds the statistics of FuzzBench's protocol that the
// benchmarks report: the median, Mann-Whitney U's two-sided p and
// Vargha-Delaney's A12. Each gives what scipy.stats.mannwhitneyu(x, y,
// alternative='two-sided') (method 'auto', continuity correction on) gives, so
// that figures can be checked against it.
package stats

import (
	"math"
	"sort"
)

// Median is the middle value of xs (the mean of the two middle ones for an even
// count); NaN for none. xs is not changed.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// U1 is Mann-Whitney's U of x against y: the pairs (x[i], y[j]) with x[i] >
// y[j], ties counted a half.
func U1(x, y []float64) float64 {
	u := 0.0
	for _, a := range x {
		for _, b := range y {
			switch {
			case a > b:
				u++
			case a == b:
				u += 0.5
			}
		}
	}
	return u
}

// A12 is Vargha and Delaney's effect size: the probability that a value drawn
// from x is greater than one drawn from y, ties counted a half. 0.5 is no
// difference; FuzzBench calls > 0.71 (< 0.29) a large effect. NaN when either
// is empty.
func A12(x, y []float64) float64 {
	if len(x) == 0 || len(y) == 0 {
		return math.NaN()
	}
	return U1(x, y) / float64(len(x)*len(y))
}

// MannWhitneyP is the two-sided p of Mann-Whitney's U test of x against y, as
// scipy's method 'auto' computes it: exact when either sample has at most 8
// values and no value occurs twice in both together; otherwise the normal
// approximation with the tie correction of the variance and the continuity
// correction (good from about 5 values in each). NaN when either is empty.
func MannWhitneyP(x, y []float64) float64 {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return math.NaN()
	}
	u1 := U1(x, y)
	u := math.Max(u1, float64(n1*n2)-u1) // the larger of U1 and U2
	all := append(append([]float64(nil), x...), y...)
	sort.Float64s(all)
	ties := 0.0 // Σ (t³ - t) over the groups of t equal values
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j] == all[i] {
			j++
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	var p float64
	if (n1 <= 8 || n2 <= 8) && ties == 0 {
		p = 2 * exactSF(int(u), n1, n2)
	} else {
		n := float64(n1 + n2)
		mu := float64(n1*n2) / 2
		sd := math.Sqrt(float64(n1*n2) / 12 * ((n + 1) - ties/(n*(n-1))))
		if sd == 0 {
			return 1 // every value the same
		}
		z := (u - mu - 0.5) / sd
		p = math.Erfc(z / math.Sqrt2) // 2 × the normal's upper tail at z
	}
	return math.Min(1, math.Max(0, p))
}

// exactSF is P(U ≥ u) for samples of n1 and n2 distinct values under the null
// hypothesis: the count of the arrangements with U = k is the coefficient of
// q^k in the Gaussian binomial [n1+n2 choose m]_q (m the smaller size) =
// Π_{i=1..m} (1 - q^(n-m+i)) / (1 - q^i), over their total count.
func exactSF(u, n1, n2 int) float64 {
	m, n := min(n1, n2), max(n1, n2)
	c := make([]float64, m*n+1)
	c[0] = 1
	for i := 1; i <= m; i++ {
		// multiply by 1 - q^(n+i), truncated at degree m·n: the quotient's
		// coefficients up to there depend on no higher ones
		for k := len(c) - 1; k >= n+i; k-- {
			c[k] -= c[k-(n+i)]
		}
		// divide by 1 - q^i: a running sum with stride i
		for k := i; k < len(c); k++ {
			c[k] += c[k-i]
		}
	}
	total, tail := 0.0, 0.0
	for k, v := range c {
		total += v
		if k >= u {
			tail += v
		}
	}
	return tail / total
}
