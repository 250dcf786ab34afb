package engine

import (
	"context"
	"testing"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
)

// TestEveryKind walks fuzzrt's table of argument kinds (checked against the
// toolchain's own list by fuzzrt's TestKindTable) through the engine's uses of
// it: the minimizer and the corpus's type check (libfuzzer's TestEveryKind walks
// it through the go-fuzz-headers layout).
func TestEveryKind(t *testing.T) {
	for _, k := range fuzzrt.Kinds() {
		t.Run(k.String(), func(t *testing.T) {
			sample := func() any {
				switch k {
				case fuzzrt.KindBytes:
					return []byte("seed\xff")
				case fuzzrt.KindString:
					return "seed☃"
				}
				return k.FromBits(0xfedcba9876543210)
			}
			same := func(a, b any) bool { return string(fuzzrt.Marshal([]any{a})) == string(fuzzrt.Marshal([]any{b})) }

			// Any value of the kind fails: the minimizer ends at the zero value.
			calls := 0
			got := minimize(context.Background(), []any{sample()}, func(v []any) bool {
				calls++
				return fuzzrt.KindOf(v[0]) == k
			})
			if calls == 0 || !same(got[0], k.Zero()) {
				t.Errorf("minimizing %#v, always failing, gave %#v after %d calls", sample(), got[0], calls)
			}
			// Any value but the zero value fails: it ends at the smallest other.
			if k.IsInt() {
				got := minimize(context.Background(), []any{sample()}, func(v []any) bool {
					return !same(v[0], k.Zero())
				})
				if want := k.FromBits(1); !same(got[0], want) {
					t.Errorf("minimizing %#v, failing unless zero, gave %#v, want %#v", sample(), got[0], want)
				}
			}

			vals := []any{sample(), k.Zero()}
			types := []string{k.String(), k.String()}
			if !sameTypes(vals, types) {
				t.Errorf("sameTypes(%#v, %q) = false", vals, types)
			}
			other := fuzzrt.KindBool
			if k == other {
				other = fuzzrt.KindInt
			}
			if sameTypes([]any{sample()}, []string{other.String()}) {
				t.Errorf("sameTypes(%#v, %q) = true", sample(), other)
			}
		})
	}
}
