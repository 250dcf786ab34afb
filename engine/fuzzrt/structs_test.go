package fuzzrt

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

type port uint16

type inner struct {
	Max    port
	strict bool // unexported: set too
}

type word string

func (w *word) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		return errors.New("empty")
	}
	*w = word(strings.ToUpper(string(b)))
	return nil
}

func (w word) MarshalText() ([]byte, error) { return []byte(strings.ToLower(string(w))), nil }

type blob struct{ n int }

func (b *blob) UnmarshalBinary(p []byte) error { b.n = len(p); return nil }

type config struct {
	Name  string
	In    inner
	Ptr   *inner
	Tags  []string
	Nums  []int16
	Pair  [2]bool
	Word  word
	Blob  *blob
	_     int
	Float float32
}

// TestAdaptStruct: a struct of every shape fuzzls flattens, built from its
// flattened values and flattened back (AdaptAdd's way) to the same values.
func TestAdaptStruct(t *testing.T) {
	var got config
	g, layout, err := Adapt(func(t *testing.T, c config) { got = c })
	if err != nil {
		t.Fatal(err)
	}
	const want = "fuzzrt.config{Name, In.Max, In.strict, Ptr.Max, Ptr.strict, Tags, Nums, Pair[0], Pair[1], Word, Blob, Float}"
	if layout != want {
		t.Errorf("layout\n%s, want\n%s", layout, want)
	}
	vals := []any{"n", uint16(7), true, uint16(9), false, "a\x00b", []byte{1, 0, 0xff, 0xff, 3}, false, true, "hi", []byte("xyz"), float32(1.5)}
	args := []reflect.Value{reflect.ValueOf(t)}
	for _, v := range vals {
		args = append(args, reflect.ValueOf(v))
	}
	ft := reflect.TypeOf(g)
	if ft.NumIn() != len(args) {
		t.Fatalf("adapted function takes %v, want %d arguments", ft, len(args))
	}
	reflect.ValueOf(g).Call(args)
	wantCfg := config{Name: "n", In: inner{7, true}, Ptr: &inner{9, false}, Tags: []string{"a", "b"}, Nums: []int16{1, -1},
		Pair: [2]bool{false, true}, Word: "HI", Blob: &blob{3}, Float: 1.5}
	if !reflect.DeepEqual(got, wantCfg) {
		t.Errorf("built %+v (%+v, %+v), want %+v", got, got.Ptr, got.Blob, wantCfg)
	}

	// Flattening for f.Add, and a *blob has no MarshalBinary to give its bytes.
	p, err := planType(reflect.TypeFor[inner](), 0, "")
	if err != nil {
		t.Fatal(err)
	}
	flat, err := p.flatten(reflect.ValueOf(inner{Max: 5, strict: true}))
	if err != nil || fmt.Sprint(flat) != "[5 true]" {
		t.Errorf("flattened inner: %v, %v", flat, err)
	}
	wp, _ := planType(reflect.TypeFor[word](), 0, "")
	if flat, err := wp.flatten(reflect.ValueOf(word("HI"))); err != nil || fmt.Sprint(flat) != "[hi]" {
		t.Errorf("flattened word: %v, %v", flat, err)
	}
	bp, _ := planType(reflect.TypeFor[*blob](), 0, "")
	if _, err := bp.flatten(reflect.ValueOf(&blob{})); err == nil {
		t.Error("a *blob flattened without a MarshalBinary method")
	}
}

// TestAdaptRefuses: what cannot be flattened is an error naming the field;
// a function of supported types is returned as it is.
func TestAdaptRefuses(t *testing.T) {
	type withMap struct {
		OK bool
		M  map[string]int
	}
	type deep struct{ Next *deep }
	for _, c := range []struct {
		ff   any
		want string
	}{
		{func(*testing.T, withMap) {}, "M: a map[string]int is neither"},
		{func(*testing.T, deep) {}, "nest more than 8 deep"},
		{func(*testing.T, []chan int) {}, "is not a slice of a fuzzable type"},
	} {
		if _, _, err := Adapt(c.ff); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%T: error %v, want %q", c.ff, err, c.want)
		}
	}
	// Misshapen, testing's F.Fuzz says what is wrong, as for go test.
	for _, ff := range []any{func(*testing.T, inner) string { return "" }, func(*testing.B, inner) {}, func(*testing.T, ...inner) {}} {
		if g, layout, err := Adapt(ff); err != nil || layout != "" || reflect.ValueOf(g).Pointer() != reflect.ValueOf(ff).Pointer() {
			t.Errorf("%T was adapted: %v %q", ff, err, layout)
		}
	}
	plain := func(*testing.T, []byte, int) {}
	g, layout, err := Adapt(plain)
	if err != nil || layout != "" || reflect.ValueOf(g).Pointer() != reflect.ValueOf(plain).Pointer() {
		t.Errorf("a plain target was adapted: %v %q", err, layout)
	}
}

// TestAdaptSkipsRejected: an input the unmarshaler rejects skips the
// execution, as t.Skip does, without calling the fuzz function.
func TestAdaptSkipsRejected(t *testing.T) {
	called := false
	g, _, err := Adapt(func(t *testing.T, w word) { called = true })
	if err != nil {
		t.Fatal(err)
	}
	var skipped bool
	t.Run("empty", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		reflect.ValueOf(g).Call([]reflect.Value{reflect.ValueOf(t), reflect.ValueOf("")})
	})
	if !skipped || called {
		t.Errorf("rejected input: skipped %v, called %v; want skipped, not called", skipped, called)
	}
}

// TestLayoutLine: the layout line after the header is read past, and written
// once.
func TestLayoutLine(t *testing.T) {
	data := MarshalLayout([]any{"a", 3}, "x.T{A, B}")
	if string(data) != "go test fuzz v1\n// fuzzls: x.T{A, B}\nstring(\"a\")\nint(3)\n" {
		t.Errorf("MarshalLayout: %q", data)
	}
	if again := WithLayout(data, "x.T{A, B}"); string(again) != string(data) {
		t.Errorf("WithLayout twice: %q", again)
	}
	if LayoutOf(data) != "x.T{A, B}" || LayoutOf(Marshal([]any{1})) != "" {
		t.Errorf("LayoutOf: %q", LayoutOf(data))
	}
	vals, err := Unmarshal(data)
	if err != nil || fmt.Sprint(vals) != "[a 3]" {
		t.Errorf("Unmarshal: %v, %v", vals, err)
	}
	// Anywhere else, a comment line is malformed, as for go test.
	if _, err := Unmarshal([]byte("go test fuzz v1\nint(3)\n// fuzzls: x\n")); err == nil {
		t.Error("a layout line after the values was accepted")
	}
}
