package engine

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestMinimize(t *testing.T) {
	xAfterParen := func(s string) bool {
		i := strings.IndexByte(s, '(')
		return i >= 0 && strings.IndexByte(s[i:], 'X') >= 0
	}
	long := strings.Repeat("junk{}[]", 40) + "(" + strings.Repeat("ZYW€", 50) + "X" + strings.Repeat("tail", 30)
	tests := []struct {
		desc  string
		in    []any
		fails func(v []any) bool
		want  []any
	}{
		{
			desc:  "string reduces to the X after a paren",
			in:    []any{long},
			fails: func(v []any) bool { return xAfterParen(v[0].(string)) },
			want:  []any{"(X"},
		},
		{
			desc:  "bytes reduce to the X after a paren",
			in:    []any{[]byte(long)},
			fails: func(v []any) bool { return xAfterParen(string(v[0].([]byte))) },
			want:  []any{[]byte("(X")},
		},
		{
			desc:  "length condition keeps the length, simplifies the bytes",
			in:    []any{"\x00\xff#Q!\x7f~é"},
			fails: func(v []any) bool { return len(v[0].(string)) >= 5 },
			want:  []any{"000a0"},
		},
		{
			desc:  "any string at all becomes empty",
			in:    []any{"whatever"},
			fails: func(v []any) bool { return true },
			want:  []any{""},
		},
		{
			desc:  "int above a threshold converges to it",
			in:    []any{int(123456789)},
			fails: func(v []any) bool { return v[0].(int) > 1000 },
			want:  []any{int(1001)},
		},
		{
			desc:  "negative int16 prefers positive",
			in:    []any{int16(-30000)},
			fails: func(v []any) bool { x := v[0].(int16); return x > 50 || x < -50 },
			want:  []any{int16(51)},
		},
		{
			desc:  "uint64 extreme",
			in:    []any{uint64(math.MaxUint64)},
			fails: func(v []any) bool { return v[0].(uint64) >= 1<<40 },
			want:  []any{uint64(1 << 40)},
		},
		{
			desc:  "int8 minimum",
			in:    []any{int8(math.MinInt8)},
			fails: func(v []any) bool { return v[0].(int8) < -3 },
			want:  []any{int8(-4)},
		},
		{
			desc:  "non-monotone int uses decrements",
			in:    []any{int(5001)},
			fails: func(v []any) bool { x := v[0].(int); return x > 100 && x%3 == 0 },
			want:  []any{int(102)},
		},
		{
			desc:  "bool and float with an int-valued threshold",
			in:    []any{true, float64(-98765.4321), "keep"},
			fails: func(v []any) bool { return v[0].(bool) && v[1].(float64) < -12 },
			want:  []any{true, float64(-13), ""},
		},
		{
			desc:  "bool becomes false, float to zero",
			in:    []any{true, float32(3.25)},
			fails: func(v []any) bool { return true },
			want:  []any{false, float32(0)},
		},
		{
			desc:  "fractional float gets fewer digits",
			in:    []any{float64(0.123456789)},
			fails: func(v []any) bool { f := v[0].(float64); return f > 0.1 && f < 0.2 },
			want:  []any{float64(0.12)}, // 0.1 and 0.2 pass; two digits are needed
		},
		{
			desc:  "huge float shrinks by tens",
			in:    []any{float64(1e300)},
			fails: func(v []any) bool { return v[0].(float64) > 1e20 },
			want:  []any{float64(5e20)}, // 1e21 by tens, then one halving
		},
		{
			desc:  "infinity becomes a small finite value",
			in:    []any{math.Inf(1)},
			fails: func(v []any) bool { return v[0].(float64) > 2 },
			want:  []any{float64(3)},
		},
		{
			desc:  "infinity stays when needed",
			in:    []any{float32(math.Inf(-1))},
			fails: func(v []any) bool { return math.IsInf(float64(v[0].(float32)), -1) },
			want:  []any{float32(math.Inf(-1))},
		},
		{
			desc:  "NaN stays when needed",
			in:    []any{math.NaN()},
			fails: func(v []any) bool { return math.IsNaN(v[0].(float64)) },
			want:  []any{math.NaN()},
		},
		{
			desc: "several arguments, each minimized",
			in:   []any{[]byte("abcdefgh"), int(77), "zzzz", uint16(900)},
			fails: func(v []any) bool {
				return bytes.Contains(v[0].([]byte), []byte("d")) && v[1].(int) > 5 && len(v[2].(string)) > 1 && v[3].(uint16) != 0
			},
			want: []any{[]byte("d"), int(6), "aa", uint16(1)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			types := minTestTypes(tc.in)
			orig := minCloneValues(tc.in)
			calls := 0
			seen := map[string]bool{}
			fails := func(v []any) bool {
				calls++
				if got := minTestTypes(v); !reflect.DeepEqual(got, types) {
					t.Fatalf("fails called with types %v, want %v", got, types)
				}
				k := fmt.Sprintf("%#v", v)
				if seen[k] {
					t.Errorf("candidate tried twice: %s", k)
				}
				seen[k] = true
				return tc.fails(v)
			}
			got := minimize(context.Background(), tc.in, fails)
			if !minTestEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
			if !tc.fails(got) {
				t.Errorf("result %#v does not fail", got)
			}
			if !minTestEqual(tc.in, orig) {
				t.Errorf("input changed to %#v", tc.in)
			}
			t.Logf("%d calls", calls)
		})
	}
}

func TestMinimizeCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := []any{strings.Repeat("ab(cd", 2000) + "X", int64(1 << 50)}
	calls := 0
	fails := func(v []any) bool {
		calls++
		if calls == 25 {
			cancel()
		}
		s := v[0].(string)
		return strings.Contains(s, "(") && strings.Contains(s, "X") && v[1].(int64) > 10
	}
	start := time.Now()
	got := minimize(ctx, in, fails)
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v after cancel", d)
	}
	if calls != 25 {
		t.Errorf("fails called %d times, want 25 (none after cancel)", calls)
	}
	s := got[0].(string)
	if !(strings.Contains(s, "(") && strings.Contains(s, "X") && got[1].(int64) > 10) {
		t.Errorf("result does not fail: %q, %v", s, got[1])
	}
	if len(s) >= len(in[0].(string)) {
		t.Errorf("no progress before cancel: %d bytes", len(s))
	}

	// An already-expired context returns the original without calling fails.
	calls = 0
	got = minimize(ctx, in, fails)
	if calls != 0 || !minTestEqual(got, in) {
		t.Errorf("expired context: %d calls, got changed %v", calls, !minTestEqual(got, in))
	}
}

func TestMinimizeNothingHelps(t *testing.T) {
	// A failure that needs the exact value: the original comes back, and
	// every candidate was distinct from it.
	in := []any{"Q", int32(7), float32(1.5), false, []byte{}}
	calls := 0
	got := minimize(context.Background(), in, func(v []any) bool {
		calls++
		if minTestEqual(v, in) {
			t.Fatalf("candidate equal to the current value")
		}
		return false
	})
	if !minTestEqual(got, in) {
		t.Errorf("got %#v", got)
	}
	if calls > 60 {
		t.Errorf("%d calls for a tiny input", calls)
	}
}

func TestMinimizeFailsMayModify(t *testing.T) {
	// fails gets a private copy: scribbling on it must not corrupt the result.
	got := minimize(context.Background(), []any{[]byte("xxYxx")}, func(v []any) bool {
		b := v[0].([]byte)
		ok := bytes.Contains(b, []byte("Y"))
		for i := range b {
			b[i] = '!'
		}
		return ok
	})
	if string(got[0].([]byte)) != "Y" {
		t.Errorf("got %q", got[0])
	}
}

func minTestTypes(vals []any) []reflect.Type {
	out := make([]reflect.Type, len(vals))
	for i, v := range vals {
		out[i] = reflect.TypeOf(v)
	}
	return out
}

func minTestEqual(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		switch x := a[i].(type) {
		case []byte:
			y, ok := b[i].([]byte)
			if !ok || !bytes.Equal(x, y) {
				return false
			}
		case float64:
			y, ok := b[i].(float64)
			if !ok || math.Float64bits(x) != math.Float64bits(y) {
				return false
			}
		case float32:
			y, ok := b[i].(float32)
			if !ok || math.Float32bits(x) != math.Float32bits(y) {
				return false
			}
		default:
			if a[i] != b[i] {
				return false
			}
		}
	}
	return true
}
