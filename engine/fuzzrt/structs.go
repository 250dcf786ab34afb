package fuzzrt

// Fuzz functions whose arguments go test refuses: structs (or pointers to
// them) of fuzzable types, and types with an UnmarshalText or UnmarshalBinary
// method, as the draft design of Go's fuzzing promised. testing's F.Fuzz and
// F.Add check the types at run time, so the instrumented target calls them
// through AdaptFuzz and AdaptAdd (instrument/adapt.go rewrites f.Fuzz and
// f.Add in fuzz targets): testing, and every layer after it, sees only the
// flattened values, one argument per field, so the mutators, the comparison
// feedback, the dictionary and the minimizer work on fields as on any
// argument. An unmarshaler is a string (UnmarshalText) or []byte
// (UnmarshalBinary) argument, and an input its method rejects is skipped.
//
// Corpus files of such a target are `go test fuzz v1` files of the flattened
// values, one line per field, whose second line (LayoutPrefix) names the
// arguments and their fields; go test cannot run the target, so neither the
// files.

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// LayoutPrefix starts the comment line after the header of a corpus file of a
// target fuzzed field by field: "// fuzzls: " and the layout.
const LayoutPrefix = "// fuzzls: "

// Bounds of a flattened argument: a struct nests at most maxDepth deep and a
// target has at most maxFields values, beyond which mutation spreads too thin.
const (
	maxDepth  = 8
	maxFields = 256
)

// AdaptFuzz calls f.Fuzz(ff), through an adapter over flattened values when
// ff takes arguments testing refuses; a type fuzzls cannot flatten either is
// the panic testing's F.Fuzz makes for it.
func AdaptFuzz(f, ff any) {
	tf := f.(*testing.F)
	g, layout, err := Adapt(ff)
	if err != nil {
		panic("testing: " + err.Error())
	}
	if layout != "" {
		adaptedLayout = layout
	}
	tf.Fuzz(g)
}

// AdaptAdd calls f.Add with args flattened as AdaptFuzz flattens the fuzz
// function's arguments of their types: a struct gives its fields' values, an
// unmarshaler the text or bytes of its MarshalText or MarshalBinary.
func AdaptAdd(f any, args []any) {
	tf := f.(*testing.F)
	var flat []any
	for _, a := range args {
		if KindOf(a) != NoKind || a == nil {
			flat = append(flat, a)
			continue
		}
		p, err := planType(reflect.TypeOf(a), 0, "")
		if err != nil {
			panic(fmt.Sprintf("testing: unsupported type to Add %T: %v", a, err))
		}
		vals, err := p.flatten(reflect.ValueOf(a))
		if err != nil {
			panic(fmt.Sprintf("testing: f.Add(%T): %v", a, err))
		}
		flat = append(flat, vals...)
	}
	tf.Add(flat...)
}

// adaptedLayout is the layout of the target this process adapted (at most one
// runs in a seeds run), which CoordinateFuzzing sends with the seeds.
var adaptedLayout string

// Adapt returns ff itself when testing can fuzz all its arguments, else a
// function of *testing.T and the flattened values that builds the arguments
// and calls ff, with the layout that names them (Layout).
func Adapt(ff any) (any, string, error) {
	fn := reflect.ValueOf(ff)
	ft := fn.Type()
	if ft.Kind() != reflect.Func || ft.NumIn() < 2 || ft.IsVariadic() || ft.NumOut() != 0 || ft.In(0) != reflect.TypeFor[*testing.T]() {
		return ff, "", nil // testing's F.Fuzz says what is wrong
	}
	adapt := false
	for i := 1; i < ft.NumIn(); i++ {
		adapt = adapt || !SupportedType(ft.In(i))
	}
	if !adapt {
		return ff, "", nil
	}
	in := []reflect.Type{ft.In(0)}
	plans := make([]*plan, ft.NumIn()-1)
	n := 0
	for i := range plans {
		p, err := planType(ft.In(i+1), 0, "")
		if err != nil {
			return nil, "", fmt.Errorf("unsupported type for fuzzing %v: %v", ft.In(i+1), err)
		}
		plans[i] = p
		for _, k := range p.kinds {
			in = append(in, k.Type())
		}
		if n += len(p.kinds); n > maxFields {
			return nil, "", fmt.Errorf("fuzz function takes more than %d values once its structs are flattened", maxFields)
		}
	}
	g := reflect.MakeFunc(reflect.FuncOf(in, nil, false), func(args []reflect.Value) []reflect.Value {
		t := args[0].Interface().(*testing.T)
		call := make([]reflect.Value, len(plans)+1)
		call[0] = args[0]
		rest := args[1:]
		for i, p := range plans {
			v := reflect.New(p.typ).Elem()
			if err := p.fill(v, rest[:len(p.kinds)]); err != nil {
				t.Skipf("fuzzls: %v", err) // as go test skips: not a failure
			}
			call[i+1] = v
			rest = rest[len(p.kinds):]
		}
		fn.Call(call)
		return nil
	})
	return g.Interface(), Layout(plans), nil
}

// Layout names each argument and, in order, the values it is flattened to:
// "config.Config{Name, Limits.Max, Tags}, net.IP(text), int".
func Layout(plans []*plan) string {
	parts := make([]string, len(plans))
	for i, p := range plans {
		parts[i] = p.describe()
	}
	return strings.Join(parts, ", ")
}

type textUnmarshaler interface{ UnmarshalText([]byte) error }
type binaryUnmarshaler interface{ UnmarshalBinary([]byte) error }
type textMarshaler interface{ MarshalText() ([]byte, error) }
type binaryMarshaler interface{ MarshalBinary() ([]byte, error) }

// plan is how a type is built from flattened values: kinds and names (the
// field paths, "" for the value itself) of the values, and fill, which sets
// v (settable, zero) from them.
type plan struct {
	typ   reflect.Type
	kinds []Kind
	names []string
	how   string // "text" or "bytes" for an unmarshaler, else ""
	fill  func(v reflect.Value, vals []reflect.Value) error
	// get is the inverse of fill, for f.Add's values.
	get func(v reflect.Value) ([]any, error)
}

func (p *plan) describe() string {
	if p.how != "" {
		return p.typ.String() + "(" + p.how + ")"
	}
	if len(p.names) == 1 && p.names[0] == "" {
		return p.typ.String()
	}
	return p.typ.String() + "{" + strings.Join(p.names, ", ") + "}"
}

func (p *plan) flatten(v reflect.Value) ([]any, error) { return p.get(v) }

var (
	textUnmarshalerType   = reflect.TypeFor[textUnmarshaler]()
	binaryUnmarshalerType = reflect.TypeFor[binaryUnmarshaler]()
)

// planType plans t at nesting depth; path names t's place for messages.
// An unmarshaler (text first: its inputs are what mutation of text suits) is
// built by its method, whatever its kind.
func planType(t reflect.Type, depth int, path string) (*plan, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%s: structs nest more than %d deep", path, maxDepth)
	}
	if k := KindFor(t); k != NoKind {
		return leaf(t, k), nil
	}
	pt, isPtr := t, t.Kind() == reflect.Pointer
	if !isPtr {
		pt = reflect.PointerTo(t)
	}
	switch {
	case pt.Implements(textUnmarshalerType):
		return unmarshaler(t, isPtr, KindString), nil
	case pt.Implements(binaryUnmarshalerType):
		return unmarshaler(t, isPtr, KindBytes), nil
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.String:
		return leaf(t, KindNamed(t.Kind().String())), nil
	case reflect.Slice:
		return slicePlan(t, path)
	case reflect.Pointer:
		elem, err := planType(t.Elem(), depth+1, path)
		if err != nil {
			return nil, err
		}
		p := &plan{typ: t, kinds: elem.kinds, names: elem.names}
		p.fill = func(v reflect.Value, vals []reflect.Value) error {
			v.Set(reflect.New(t.Elem()))
			return elem.fill(v.Elem(), vals)
		}
		p.get = func(v reflect.Value) ([]any, error) {
			if v.IsNil() {
				v = reflect.New(t.Elem())
			}
			return elem.get(v.Elem())
		}
		return p, nil
	case reflect.Struct:
		return structPlan(t, depth, path)
	case reflect.Array:
		return arrayPlan(t, depth, path)
	}
	return nil, fmt.Errorf("%s: a %v is neither a fuzzable type, a struct of them nor an unmarshaler", strings.TrimPrefix(path, "."), t)
}

// leaf is a value of a type whose kind is k's: k itself, or a type defined
// from it (type Port uint16).
func leaf(t reflect.Type, k Kind) *plan {
	return &plan{typ: t, kinds: []Kind{k}, names: []string{""},
		fill: func(v reflect.Value, vals []reflect.Value) error {
			v.Set(vals[0].Convert(t))
			return nil
		},
		get: func(v reflect.Value) ([]any, error) { return []any{v.Convert(k.Type()).Interface()}, nil },
	}
}

func unmarshaler(t reflect.Type, isPtr bool, k Kind) *plan {
	p := &plan{typ: t, kinds: []Kind{k}, names: []string{""}, how: map[Kind]string{KindString: "text", KindBytes: "bytes"}[k]}
	p.fill = func(v reflect.Value, vals []reflect.Value) error {
		var ptr reflect.Value
		if isPtr {
			ptr = reflect.New(t.Elem())
		} else {
			ptr = reflect.New(t)
		}
		var err error
		if k == KindString {
			err = ptr.Interface().(textUnmarshaler).UnmarshalText([]byte(vals[0].String()))
		} else {
			err = ptr.Interface().(binaryUnmarshaler).UnmarshalBinary(vals[0].Bytes())
		}
		if err != nil {
			return fmt.Errorf("%v rejects its input: %v", t, err)
		}
		if isPtr {
			v.Set(ptr)
		} else {
			v.Set(ptr.Elem())
		}
		return nil
	}
	p.get = func(v reflect.Value) ([]any, error) {
		x := v.Interface()
		if k == KindString {
			if m, ok := x.(textMarshaler); ok {
				b, err := m.MarshalText()
				return []any{string(b)}, err
			}
		} else if m, ok := x.(binaryMarshaler); ok {
			b, err := m.MarshalBinary()
			return []any{b}, err
		}
		return nil, fmt.Errorf("%v has no Marshal%s method to give its %s", t, map[Kind]string{KindString: "Text", KindBytes: "Binary"}[k], p.how)
	}
	return p
}

func structPlan(t reflect.Type, depth int, path string) (*plan, error) {
	p := &plan{typ: t}
	var fields []*plan
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if sf.Name == "_" {
			fields = append(fields, nil)
			continue
		}
		fp, err := planType(sf.Type, depth+1, path+"."+sf.Name)
		if err != nil {
			return nil, err
		}
		fields = append(fields, fp)
		p.kinds = append(p.kinds, fp.kinds...)
		for _, n := range fp.names {
			p.names = append(p.names, joinPath(sf.Name, n))
		}
		if len(p.kinds) > maxFields {
			return nil, fmt.Errorf("%v has more than %d fields once flattened", t, maxFields)
		}
	}
	// Unexported fields are set too: reflect.New's value is addressable, and
	// the field's own address makes it settable.
	settable := func(f reflect.Value) reflect.Value {
		if f.CanSet() {
			return f
		}
		return reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem()
	}
	p.fill = func(v reflect.Value, vals []reflect.Value) error {
		for i, fp := range fields {
			if fp == nil {
				continue
			}
			if err := fp.fill(settable(v.Field(i)), vals[:len(fp.kinds)]); err != nil {
				return err
			}
			vals = vals[len(fp.kinds):]
		}
		return nil
	}
	p.get = func(v reflect.Value) ([]any, error) {
		if !v.CanAddr() {
			c := reflect.New(t).Elem()
			c.Set(v)
			v = c
		}
		var out []any
		for i, fp := range fields {
			if fp == nil {
				continue
			}
			vals, err := fp.get(settable(v.Field(i)))
			if err != nil {
				return nil, err
			}
			out = append(out, vals...)
		}
		return out, nil
	}
	return p, nil
}

func joinPath(a, b string) string {
	if b == "" {
		return a
	}
	if strings.HasPrefix(b, "[") {
		return a + b
	}
	return a + "." + b
}

// arrayPlan flattens an array element by element.
func arrayPlan(t reflect.Type, depth int, path string) (*plan, error) {
	if t.Len() > maxFields {
		return nil, fmt.Errorf("%s: %v has more than %d elements", path, t, maxFields)
	}
	ep, err := planType(t.Elem(), depth+1, path+"[]")
	if err != nil {
		return nil, err
	}
	p := &plan{typ: t}
	for i := 0; i < t.Len(); i++ {
		p.kinds = append(p.kinds, ep.kinds...)
		for _, n := range ep.names {
			p.names = append(p.names, joinPath(fmt.Sprintf("[%d]", i), n))
		}
	}
	if len(p.kinds) > maxFields {
		return nil, fmt.Errorf("%s: %v has more than %d values once flattened", path, t, maxFields)
	}
	n := len(ep.kinds)
	p.fill = func(v reflect.Value, vals []reflect.Value) error {
		for i := 0; i < t.Len(); i++ {
			if err := ep.fill(v.Index(i), vals[i*n:(i+1)*n]); err != nil {
				return err
			}
		}
		return nil
	}
	p.get = func(v reflect.Value) ([]any, error) {
		var out []any
		for i := 0; i < t.Len(); i++ {
			vals, err := ep.get(v.Index(i))
			if err != nil {
				return nil, err
			}
			out = append(out, vals...)
		}
		return out, nil
	}
	return p, nil
}

// slicePlan: a slice of bytes is []byte; of strings, one string whose NUL
// bytes separate the elements; of other numbers or bools, []byte cut into
// elements of their size, little-endian (a last partial element is dropped):
// the encoding of daemon/gentest's generated targets.
func slicePlan(t reflect.Type, path string) (*plan, error) {
	et := t.Elem()
	ek := KindNamed(et.Kind().String())
	if ek == NoKind || et.Kind() == reflect.Uintptr {
		return nil, fmt.Errorf("%s: %v is not a slice of a fuzzable type", strings.TrimPrefix(path, "."), t)
	}
	if ek == KindString {
		p := &plan{typ: t, kinds: []Kind{KindString}, names: []string{""}}
		p.fill = func(v reflect.Value, vals []reflect.Value) error {
			s := vals[0].String()
			if s == "" {
				v.Set(reflect.MakeSlice(t, 0, 0))
				return nil
			}
			parts := strings.Split(s, "\x00")
			out := reflect.MakeSlice(t, len(parts), len(parts))
			for i, e := range parts {
				out.Index(i).SetString(e)
			}
			v.Set(out)
			return nil
		}
		p.get = func(v reflect.Value) ([]any, error) {
			parts := make([]string, v.Len())
			for i := range parts {
				parts[i] = v.Index(i).String()
			}
			return []any{strings.Join(parts, "\x00")}, nil
		}
		return p, nil
	}
	size := ek.Size() // 8 for int and uint on every platform, as "Generate fuzz test"'s code decodes them
	p := &plan{typ: t, kinds: []Kind{KindBytes}, names: []string{""}}
	p.fill = func(v reflect.Value, vals []reflect.Value) error {
		b := vals[0].Bytes()
		n := len(b) / size
		out := reflect.MakeSlice(t, n, n)
		for i := range n {
			var u uint64
			for j := size - 1; j >= 0; j-- {
				u = u<<8 | uint64(b[i*size+j])
			}
			out.Index(i).Set(reflect.ValueOf(ek.FromBits(u)).Convert(et))
		}
		v.Set(out)
		return nil
	}
	p.get = func(v reflect.Value) ([]any, error) {
		b := make([]byte, 0, v.Len()*size)
		for i := 0; i < v.Len(); i++ {
			_, u := Bits(v.Index(i).Convert(ek.Type()).Interface())
			for j := 0; j < size; j++ {
				b = append(b, byte(u>>(8*j)))
			}
		}
		return []any{b}, nil
	}
	return p, nil
}
