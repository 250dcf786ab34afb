package fuzzrt

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

// filled sets every field that v (a struct) reaches to a value that is not its
// zero value, varied by seed, so that a field the frames lost or mixed up shows.
func filled(v reflect.Value, seed int) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		filled(v.Elem(), seed)
	case reflect.Struct:
		for i := range v.NumField() {
			filled(v.Field(i), seed*31+i+1)
		}
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(-int64(seed) % (1 << (v.Type().Bits() - 1)))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(seed) % (1 << (v.Type().Bits() - 1)))
	case reflect.String:
		v.SetString(string([]byte{0, 0xff, byte(seed)}) + "☃\n\"")
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 3, 3)
		for i := range 3 {
			filled(s.Index(i), seed+i)
		}
		v.Set(s)
	default:
		panic("filled: " + v.Type().String())
	}
}

// TestFrames: every field of every request and message, those added since this
// test was written too, survives a frame (each set alone, as they are sent, and
// all at once), in order in one stream; a stream cut inside a frame, a frame
// whose length is garbage or whose fields do not decode is an error, and none of
// them allocates what a garbage length says.
func TestFrames(t *testing.T) {
	var stream []byte
	var want []any
	for _, m := range []any{&Request{}, &Message{}} {
		all := reflect.New(reflect.TypeOf(m).Elem())
		filled(all.Elem(), 7)
		for i := range all.Elem().NumField() {
			one := reflect.New(all.Type().Elem())
			one.Elem().Field(i).Set(all.Elem().Field(i))
			want = append(want, one.Interface())
			stream = AppendFrame(stream, one.Interface())
		}
		want = append(want, all.Interface(), reflect.New(all.Type().Elem()).Interface())
		stream = AppendFrame(AppendFrame(stream, all.Interface()), reflect.New(all.Type().Elem()).Interface())
	}
	fr := NewFrameReader(bytes.NewReader(stream))
	for i, w := range want {
		got := reflect.New(reflect.TypeOf(w).Elem())
		if err := fr.Read(got.Interface()); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !reflect.DeepEqual(got.Interface(), w) {
			t.Fatalf("frame %d: got %+v, want %+v", i, got.Elem(), reflect.ValueOf(w).Elem())
		}
	}
	if err := fr.Read(new(Message)); err != io.EOF {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}

	one := AppendFrame(nil, &Message{New: &Entry{Input: "go test fuzz v1\nint(1)\n", Cov: []uint32{1, 2, 3}}})
	for cut := 1; cut < len(one); cut++ {
		if err := NewFrameReader(bytes.NewReader(one[:cut])).Read(new(Message)); err == nil {
			t.Errorf("a frame cut after %d of its %d bytes decoded", cut, len(one))
		}
	}
	huge := append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, 1, 2, 3)
	allocs := testing.AllocsPerRun(1, func() {
		if err := NewFrameReader(bytes.NewReader(huge)).Read(new(Message)); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("a frame claiming 2⁵⁶ bytes: %v, want io.ErrUnexpectedEOF", err)
		}
	})
	if allocs > 10 {
		t.Errorf("a frame claiming 2⁵⁶ bytes made %v allocations", allocs)
	}
	// a field that does not decode: a presence byte of 2
	if err := NewFrameReader(bytes.NewReader([]byte{1, 2})).Read(new(Message)); !errors.Is(err, ErrFrame) {
		t.Errorf("a bad presence byte: %v, want ErrFrame", err)
	}
	// bytes left over after the message's fields: a presence byte each, and one more
	n := reflect.TypeFor[Message]().NumField() + 1
	if err := NewFrameReader(bytes.NewReader(append([]byte{byte(n)}, make([]byte, n)...))).Read(new(Message)); !errors.Is(err, ErrFrame) {
		t.Errorf("trailing bytes: %v, want ErrFrame", err)
	}
}
