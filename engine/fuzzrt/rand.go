package fuzzrt

import "math/bits"

// Rand is a small, fast, seedable PRNG (wyrand). It is not safe for
// concurrent use; each worker owns one. math/rand/v2 would do, but its
// generators are heavier than the fuzzing loop needs.
type Rand struct {
	state uint64
}

// NewRand returns a generator whose sequence is fixed by seed.
func NewRand(seed uint64) *Rand {
	r := &Rand{}
	r.Seed(seed)
	return r
}

// Seed resets the generator to the sequence fixed by seed.
func (r *Rand) Seed(seed uint64) {
	r.state = seed
}

// Uint64 returns 64 random bits.
func (r *Rand) Uint64() uint64 {
	r.state += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(r.state, r.state^0xe7037ed1a0b428db)
	return hi ^ lo
}

// Uint32 returns 32 random bits.
func (r *Rand) Uint32() uint32 {
	return uint32(r.Uint64() >> 32)
}

// Intn returns a number in [0, n); it returns 0 for n <= 0 rather than
// panicking, which keeps callers on the hot path branch-free.
func (r *Rand) Intn(n int) int {
	if n <= 1 {
		return 0
	}
	// Lemire's multiply-shift: the bias is below 2^-32 for the sizes used here.
	hi, _ := bits.Mul64(r.Uint64(), uint64(n))
	return int(hi)
}

// Bool returns true half of the time.
func (r *Rand) Bool() bool {
	return r.Uint64()&1 == 1
}

// OneIn returns true with probability 1/n.
func (r *Rand) OneIn(n int) bool {
	return r.Intn(n) == 0
}
