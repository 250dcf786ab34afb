package fuzzrt

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
)

// The coordinator starts a worker with EnvMode set, its commands on file descriptor 3
// and the worker's messages on file descriptor 4, one frame a message (AppendFrame,
// FrameReader). Each message has exactly one field set, as internal/fuzz's RPC does.
// No message size is bounded: an input is as large as the target's seeds make it.
// Inputs that come in numbers (seeds, a worker's initial corpus) go one a message, so
// that no single message grows with their count.

const (
	// EnvMode selects what the test binary does: ModeSeeds or ModeWorker. When unset
	// the binary is an ordinary test binary.
	EnvMode = "FUZZLS_RT"
	// EnvMem is the path of the worker's shared-memory file (see mem.go).
	EnvMem = "FUZZLS_MEM"

	// ModeSeeds reports the target's argument types and seed corpus, then exits.
	ModeSeeds = "seeds"
	// ModeWorker runs the worker loop, driven by the coordinator.
	ModeWorker = "worker"
)

// Request is a coordinator → worker message.
type Request struct {
	Load *Entry    // an initial entry for the next Fuzz request, which follows
	Fuzz *FuzzArgs // start (or resume) the fuzzing loop from the entries loaded
	Add  *Entry    // an entry another worker found
	Exec *ExecArgs // run one input (the loop pauses for it)
	Stop bool      // pause the loop; the worker stays ready for Exec
	// Focus directs the loop toward changed code (engine/focus.go); an empty one clears it.
	Focus *Focus
	// Stacks asks a worker whose execution ran too long or too big for its stack
	// samples and every goroutine's stack, on stderr; it then exits (stacks.go).
	Stacks bool
}

// Focus is where changed code is (engine/focus.go): the entries reaching its
// counters get more energy and comparison rounds first, those reaching Near
// the most, those reaching only Callers a little more than the rest, and the comparisons at Sites are tried first in those rounds.
type Focus struct {
	Counters []uint32 // the frontier: unreached changed blocks, reached blocks of their functions
	Near     []uint32 // the changed code reached next to them: blocks, comparison sites' counters
	Sites    []uint32 // comparison sites on changed lines (hook site numbers)
	Callers  []uint32 // farther: reached blocks of the functions calling the frontier's
}

// FuzzArgs starts the loop from the initial corpus (seeds, cached corpus) sent
// before it in Load requests.
type FuzzArgs struct {
	Types []string // argument types, as TypeName spells them
	Seed  uint64   // for the mutator's PRNG
	// MaxLen bounds the []byte and string lengths mutation produces; the worker
	// raises it to its largest initial value, so a seed's size is never cut.
	MaxLen int
	Dict   [][]byte // bytes, not strings: JSON would mangle invalid UTF-8
}

// Entry is one corpus entry with the coverage it reaches.
type Entry struct {
	Input string   // `go test fuzz v1` text
	Cov   []uint32 // counter index << 8 | bucket bits
}

// ExecArgs asks for one execution, or with Solve for an input derived from
// Input that takes a branch.
type ExecArgs struct {
	ID    int64
	Input string
	Solve *SolveArgs
}

// SolveArgs ask for an input that reaches block counter Counter: Input runs
// with comparison recording on, then the input-to-state replacements of the
// operands of site Site's comparisons, in every place an operand shows up (a
// comparison round tries a few), until one reaches it or Max have run.
type SolveArgs struct {
	Site    int32
	Counter uint32
	Max     int32
}

// Message is a worker → coordinator message.
type Message struct {
	Hello  *Hello
	Seeds  *Seeds
	Seed   *Seed
	New    *Entry
	Crash  *CrashReport
	Result *ExecResult
	// Cmps summarizes the comparisons recorded since the last Cmps message.
	Cmps []CmpSummary
	// Hooks says what the user's mutators and generators did since the last
	// Hooks message (hooks.go).
	Hooks []HookStats
	// Loaded: the initial corpus of a Fuzz request has run, and the New
	// messages before this one carry the coverage it reaches.
	Loaded bool
}

// Hello is the worker's first message.
type Hello struct {
	Counters int
	PID      int
	// Baseline is what ran before the first input (the target's f.Add calls, init
	// code), as index<<8 | bucket bits: covered, though no input reaches it.
	Baseline []uint32
}

// Seeds begins the answer of a ModeSeeds run: the argument types and how many
// Seed messages follow.
type Seeds struct {
	Types []string
	Count int
	// Layout names the arguments of a target fuzzed field by field and their
	// fields (structs.go); empty for any other.
	Layout string
}

// Seed is one seed corpus entry: from f.Add (Path empty) or testdata/fuzz.
type Seed struct {
	Input string
	Path  string
}

// CrashReport is a failure the worker survived (a panic or t.Fatal in the fuzz
// function): testing recovers those and hands back their output.
type CrashReport struct {
	Input  string
	Output string
	Repeat int // same output seen again this many times since last report
}

// ExecResult answers ExecArgs.
type ExecResult struct {
	ID     int64
	Output string // failure output; empty when the input passed
	Cov    []uint32
	// Solved answers a Solve: the input that reached the counter ("" none;
	// Output and Cov are then empty).
	Solved string
}

// A frame is the length of its payload (uvarint), then the payload: the message's
// fields in their order of declaration, each as its kind says (encodeValue).
// Both ends are built from these sources, so the field order is the schema; the
// encoding is this file's own, not encoding/json, which the runtime does not
// import: it would be a package of the test binary's own (std.go: the standard
// library's targets, encoding/json's among them), and instrumented there.

// AppendFrame appends m, a *Request or a *Message, as one frame.
func AppendFrame(b []byte, m any) []byte {
	payload := encodeValue(nil, reflect.ValueOf(m).Elem())
	b = binary.AppendUvarint(b, uint64(len(payload)))
	return append(b, payload...)
}

// encodeValue appends v: a pointer as a presence byte and what it points to, a
// struct as its fields in order, a bool as a byte, integers as varints, a string or
// []byte as its length and bytes, another slice as its length and elements.
func encodeValue(b []byte, v reflect.Value) []byte {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return append(b, 0)
		}
		return encodeValue(append(b, 1), v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			b = encodeValue(b, v.Field(i))
		}
		return b
	case reflect.Bool:
		if v.Bool() {
			return append(b, 1)
		}
		return append(b, 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return binary.AppendVarint(b, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return binary.AppendUvarint(b, v.Uint())
	case reflect.String:
		b = binary.AppendUvarint(b, uint64(v.Len()))
		return append(b, v.String()...)
	case reflect.Slice:
		b = binary.AppendUvarint(b, uint64(v.Len()))
		switch s := v.Interface().(type) {
		case []byte:
			return append(b, s...)
		case []uint32: // coverage: thousands of them
			for _, u := range s {
				b = binary.AppendUvarint(b, uint64(u))
			}
			return b
		}
		for i := range v.Len() {
			b = encodeValue(b, v.Index(i))
		}
		return b
	}
	panic("fuzzrt: no wire encoding for " + v.Type().String())
}

// FrameReader reads frames from a stream.
type FrameReader struct {
	r   *bufio.Reader
	buf []byte
}

// NewFrameReader reads the frames of r.
func NewFrameReader(r io.Reader) *FrameReader { return &FrameReader{r: bufio.NewReader(r)} }

// ErrFrame is a frame that does not decode as the message asked for.
var ErrFrame = errors.New("malformed frame")

// Read decodes the next frame into m, a *Request or a *Message (zeroed first). At
// the end of the stream between frames it returns io.EOF; a stream that ends
// inside a frame is io.ErrUnexpectedEOF.
func (fr *FrameReader) Read(m any) error {
	n, err := binary.ReadUvarint(fr.r)
	if err != nil {
		if err == io.EOF {
			return io.EOF
		}
		return fmt.Errorf("frame length: %w", err)
	}
	// Grow with what arrives, so that a length that is garbage does not
	// allocate what it says.
	fr.buf = fr.buf[:0]
	for uint64(len(fr.buf)) < n {
		chunk := min(n-uint64(len(fr.buf)), 1<<20)
		start := len(fr.buf)
		fr.buf = append(fr.buf, make([]byte, chunk)...)
		if _, err := io.ReadFull(fr.r, fr.buf[start:]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	v := reflect.ValueOf(m).Elem()
	v.SetZero()
	d := decoder{b: fr.buf}
	d.value(v)
	if d.err != nil || len(d.b) != 0 {
		return fmt.Errorf("%w (%d bytes)", ErrFrame, n)
	}
	if cap(fr.buf) > 1<<20 {
		fr.buf = nil // a big input's frame is not kept for the small ones after it
	}
	return nil
}

// decoder reads what encodeValue wrote; after an error it reads nothing more.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	u, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return u
}

func (d *decoder) fail() { d.err, d.b = ErrFrame, nil }

// length reads a length of which each unit takes at least one byte of what follows.
func (d *decoder) length() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *decoder) value(v reflect.Value) {
	if d.err != nil {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if p := d.uvarint(); p == 1 {
			v.Set(reflect.New(v.Type().Elem()))
			d.value(v.Elem())
		} else if p != 0 {
			d.fail()
		}
	case reflect.Struct:
		for i := range v.NumField() {
			d.value(v.Field(i))
		}
	case reflect.Bool:
		switch d.uvarint() {
		case 0:
		case 1:
			v.SetBool(true)
		default:
			d.fail()
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, n := binary.Varint(d.b)
		if n <= 0 || v.OverflowInt(i) {
			d.fail()
			return
		}
		d.b = d.b[n:]
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if u := d.uvarint(); v.OverflowUint(u) {
			d.fail()
		} else {
			v.SetUint(u)
		}
	case reflect.String:
		n := d.length()
		v.SetString(string(d.b[:n]))
		d.b = d.b[n:]
	case reflect.Slice:
		n := d.length()
		if n == 0 {
			return // nil, as the zero message has it
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes(append([]byte(nil), d.b[:n]...))
			d.b = d.b[n:]
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			d.value(v.Index(i))
		}
	default:
		d.fail()
	}
}
