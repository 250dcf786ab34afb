package fuzzrt

import (
	"bytes"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// spinForSamples and recurseForSamples run until told to stop, for the samples
// to find them.
func spinForSamples(stop *atomic.Bool) {
	for !stop.Load() {
	}
}

func recurseForSamples(stop chan struct{}, depth int) int {
	if depth > 0 {
		return recurseForSamples(stop, depth-1) + 1
	}
	<-stop
	return 0
}

// wholeFrameLine is a traceback line as the runtime ends it: a call's
// arguments, or a file line's program counter offset, or (an inlined call's,
// as Go 1.27 inlines a few levels of the recursion below) its line number,
// or the runtime's own line for the frames it leaves out of a deep stack.
var wholeFrameLine = regexp.MustCompile(`(\)|\+0x[0-9a-f]+|\.go:\d+|^\.\.\.\d+ frames elided\.\.\.)$`)

// TestStackSamples: each sample holds the goroutines running the target's code
// and no other (not the sampler's own), and deep stacks past the bound are cut
// at a line's end.
func TestStackSamples(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	var spun atomic.Bool
	defer spun.Store(true)
	go spinForSamples(&spun)
	for range 3 { // the runtime prints 100 frames of each: 10 KB
		go recurseForSamples(stop, 2000)
	}
	time.Sleep(10 * time.Millisecond)

	var out bytes.Buffer
	writeStackSamples(&out, "spinForSamples", 3, time.Millisecond)
	text := out.String()
	if !strings.HasSuffix(text, StackSamplesEnd+"\n") {
		t.Fatalf("no end marker:\n%s", text)
	}
	samples := strings.Split(strings.TrimSuffix(text, StackSamplesEnd+"\n"), StackSampleMarker)[1:]
	if len(samples) != 3 {
		t.Fatalf("%d samples, want 3:\n%s", len(samples), text)
	}
	for i, s := range samples {
		if !strings.Contains(s, ".spinForSamples(") || strings.Contains(s, "writeStackSamples") || strings.Contains(s, "recurseForSamples") {
			t.Errorf("sample %d holds other goroutines than the target's:\n%s", i+1, s)
		}
	}

	out.Reset()
	writeStackSamples(&out, "recurseForSamples", 1, 0)
	sample := strings.TrimSuffix(strings.SplitN(out.String(), "\n", 2)[1], StackSamplesEnd+"\n")
	if len(sample) > maxSampleBytes+2 || !strings.Contains(sample, "recurseForSamples(") {
		t.Fatalf("deep stacks: %d bytes (bound %d), or without their frames", len(sample), maxSampleBytes)
	}
	lines := strings.Split(strings.TrimRight(sample, "\n"), "\n")
	if last := lines[len(lines)-1]; !wholeFrameLine.MatchString(last) {
		t.Errorf("deep stacks cut mid-line: its last line is %q", last)
	}
}
