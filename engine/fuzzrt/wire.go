package fuzzrt

// The coordinator starts a worker with EnvMode set, its commands on file descriptor 3
// and the worker's messages on file descriptor 4, one JSON object a line. Each message
// has exactly one field set, as internal/fuzz's RPC does. No message size is bounded
// (both ends read with a json.Decoder): an input is as large as the target's seeds
// make it. Inputs that come in numbers (seeds, a worker's initial corpus) go one a
// message, so that no single message grows with their count.

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
	Load *Entry    `json:"load,omitempty"` // an initial entry for the next Fuzz request, which follows
	Fuzz *FuzzArgs `json:"fuzz,omitempty"` // start (or resume) the fuzzing loop from the entries loaded
	Add  *Entry    `json:"add,omitempty"`  // an entry another worker found
	Exec *ExecArgs `json:"exec,omitempty"` // run one input (the loop pauses for it)
	Stop bool      `json:"stop,omitempty"` // pause the loop; the worker stays ready for Exec
	// Focus directs the loop toward changed code (engine/focus.go); an empty one clears it.
	Focus *Focus `json:"focus,omitempty"`
	// Stacks asks a worker whose execution ran too long or too big for its stack
	// samples and every goroutine's stack, on stderr; it then exits (stacks.go).
	Stacks bool `json:"stacks,omitempty"`
}

// Focus is where changed code is (engine/focus.go): the entries reaching its
// counters get more energy and comparison rounds first, those reaching Near
// the most, those reaching only Callers a little more than the rest, and the comparisons at Sites are tried first in those rounds.
type Focus struct {
	Counters []uint32 `json:"counters,omitempty"` // the frontier: unreached changed blocks, reached blocks of their functions
	Near     []uint32 `json:"near,omitempty"`     // the changed code reached next to them: blocks, comparison sites' counters
	Sites    []uint32 `json:"sites,omitempty"`    // comparison sites on changed lines (hook site numbers)
	Callers  []uint32 `json:"callers,omitempty"`  // farther: reached blocks of the functions calling the frontier's
}

// FuzzArgs starts the loop from the initial corpus (seeds, cached corpus) sent
// before it in Load requests.
type FuzzArgs struct {
	Types []string `json:"types"` // argument types, as TypeName spells them
	Seed  uint64   `json:"seed"`  // for the mutator's PRNG
	// MaxLen bounds the []byte and string lengths mutation produces; the worker
	// raises it to its largest initial value, so a seed's size is never cut.
	MaxLen int      `json:"maxLen"`
	Dict   [][]byte `json:"dict,omitempty"` // bytes, not strings: JSON would mangle invalid UTF-8
}

// Entry is one corpus entry with the coverage it reaches.
type Entry struct {
	Input string   `json:"input"`         // `go test fuzz v1` text
	Cov   []uint32 `json:"cov,omitempty"` // counter index << 8 | bucket bits
}

// ExecArgs asks for one execution.
type ExecArgs struct {
	ID    int64  `json:"id"`
	Input string `json:"input"`
}

// Message is a worker → coordinator message.
type Message struct {
	Hello  *Hello       `json:"hello,omitempty"`
	Seeds  *Seeds       `json:"seeds,omitempty"`
	Seed   *Seed        `json:"seed,omitempty"`
	New    *Entry       `json:"new,omitempty"`
	Crash  *CrashReport `json:"crash,omitempty"`
	Result *ExecResult  `json:"result,omitempty"`
	// Cmps summarizes the comparisons recorded since the last Cmps message.
	Cmps []CmpSummary `json:"cmps,omitempty"`
	// Loaded: the initial corpus of a Fuzz request has run, and the New
	// messages before this one carry the coverage it reaches.
	Loaded bool `json:"loaded,omitempty"`
}

// Hello is the worker's first message.
type Hello struct {
	Counters int `json:"counters"`
	PID      int `json:"pid"`
	// Baseline is what ran before the first input (the target's f.Add calls, init
	// code), as index<<8 | bucket bits: covered, though no input reaches it.
	Baseline []uint32 `json:"baseline,omitempty"`
}

// Seeds begins the answer of a ModeSeeds run: the argument types and how many
// Seed messages follow.
type Seeds struct {
	Types []string `json:"types"`
	Count int      `json:"count"`
}

// Seed is one seed corpus entry: from f.Add (Path empty) or testdata/fuzz.
type Seed struct {
	Input string `json:"input"`
	Path  string `json:"path,omitempty"`
}

// CrashReport is a failure the worker survived (a panic or t.Fatal in the fuzz
// function): testing recovers those and hands back their output.
type CrashReport struct {
	Input  string `json:"input"`
	Output string `json:"output"`
	Repeat int    `json:"repeat,omitempty"` // same output seen again this many times since last report
}

// ExecResult answers ExecArgs.
type ExecResult struct {
	ID     int64    `json:"id"`
	Output string   `json:"output,omitempty"` // failure output; empty when the input passed
	Cov    []uint32 `json:"cov,omitempty"`
}
