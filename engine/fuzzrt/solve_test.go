package fuzzrt

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

// TestSolve: a 73-byte signature wanted at offset 8192 of an image of zeros.
// A comparison round's replacements never put it there (they take the first
// places the zeros show up in); solve, trying every place, finds the input
// that reaches the branch's counter, and none within too small a budget.
func TestSolve(t *testing.T) {
	const sig = "FUZZLS VOLUME DESCRIPTOR 0001 FUZZLS VOLUME DESCRIPTOR 0001 FUZZLS VOLUME"
	const at = 8192
	mem, err := CreateMem(t.TempDir() + "/mem")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	counters := [][]uint8{make([]uint8, 2)}
	var out bytes.Buffer
	rt := &runtimeState{counters: counters, total: 2, mem: mem}
	rt.out = bufio.NewWriter(&out)
	hook := rt.cmp.hook(0)
	fn := func(e corpusEntry) error {
		clear(counters[0])
		img := e.Values[0].([]byte)
		counters[0][0]++
		if len(img) >= at+len(sig) {
			got := string(img[at : at+len(sig)])
			hook(3, got, sig)
			if got == sig {
				counters[0][1]++ // the branch
			}
		}
		return nil
	}
	w := &worker{rt: rt, fn: fn, seen: make([]uint8, 2), crashes: map[string]int{}}
	zeros := make([]byte, 2*at)

	from, _ := toOperand(string(zeros[:len(sig)]))
	to, _ := toOperand(sig)
	round, _ := replaceIn(zeros, from, to, nil, maxCmpPlaces)
	for _, v := range round {
		if string(v.([]byte)[at:at+len(sig)]) == sig {
			t.Fatalf("a comparison round's replacement already puts the signature at %d", at)
		}
	}

	if in := w.solve([]any{zeros}, SolveArgs{Site: 3, Counter: 1, Max: 100}); in != "" {
		t.Errorf("found within 100 executions: %.80q", in)
	}
	in := w.solve([]any{zeros}, SolveArgs{Site: 3, Counter: 1, Max: 1 << 16})
	vals, err := Unmarshal([]byte(in))
	if err != nil || len(vals) != 1 {
		t.Fatalf("solve = %.80q, %v", in, err)
	}
	img := vals[0].([]byte)
	if len(img) != len(zeros) || string(img[at:at+len(sig)]) != sig || strings.Trim(string(img[:at]), "\x00") != "" {
		t.Errorf("solved input: %d bytes, %q at %d", len(img), img[at:at+len(sig)], at)
	}
	if in := w.solve([]any{zeros}, SolveArgs{Site: 4, Counter: 1, Max: 1 << 16}); in != "" {
		t.Errorf("solved through another site's comparison: %.80q", in)
	}
}
