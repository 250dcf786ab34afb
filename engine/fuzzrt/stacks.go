package fuzzrt

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// Stack samples. The coordinator locates a hang (and an oom its memory watchdog
// catches) from the stacks it asks for: a Stacks request on the command pipe, on
// every OS (exitWithStacks), and where that brings no answer and the OS has
// SIGQUIT, SIGQUIT. One stack, the runtime's dump, is wherever the endless loop
// happened to be at that moment: in the loop's own function or in any function it
// calls, a different one on each replay, which makes one bug look like several and
// its replays look flaky. So the worker first prints several samples of the fuzz
// goroutine's stack, a few milliseconds apart, between marker lines; the
// coordinator locates the failure in the frames common to all of them, the loop.
// Then it prints every goroutine's stack and exits. On SIGQUIT (stacks_unix.go) it
// gives the signal back to the runtime after the samples, which prints its own dump
// and exits as before; a second SIGQUIT, if the sampler cannot run, gets that dump
// at once.

const (
	// StackSampleMarker starts each sample in a worker's stderr.
	StackSampleMarker = "fuzzls: stack sample"
	// StackSamplesEnd follows the last sample.
	StackSamplesEnd = "fuzzls: end of stack samples"

	stackSamples   = 16
	stackSampleGap = 2 * time.Millisecond
	// maxSampleBytes bounds one sample's text: the coordinator keeps only the
	// tail of a worker's stderr, and the runtime's own dump comes after.
	maxSampleBytes = 16 << 10
)

// exitWithStacks answers the coordinator's Stacks request, on every OS: the
// samples, then every goroutine's stack (what the runtime prints on SIGQUIT), and
// exit status 2, as the runtime's.
func exitWithStacks() {
	writeStackSamples(os.Stderr, fuzzTargetName(), stackSamples, stackSampleGap)
	buf := make([]byte, 4<<20)
	n := runtime.Stack(buf, true)
	fmt.Fprintf(os.Stderr, "fuzzls: every goroutine's stack, as asked by the coordinator\n\n%s\n", buf[:n])
	os.Exit(2)
}

// fuzzTargetName is the target this worker fuzzes, from the -test.fuzz pattern
// the coordinator passes (^FuzzXxx$).
func fuzzTargetName() string {
	f := flag.Lookup("test.fuzz")
	if f == nil {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(f.Value.String(), "^"), "$")
}

// writeStackSamples writes n samples of the goroutines that run target's code,
// gap apart.
func writeStackSamples(w io.Writer, target string, n int, gap time.Duration) {
	buf := make([]byte, 1<<20)
	var out bytes.Buffer
	for i := range n {
		if i > 0 {
			time.Sleep(gap)
		}
		all := buf[:runtime.Stack(buf, true)]
		fmt.Fprintf(&out, "%s %d\n", StackSampleMarker, i+1)
		start := out.Len()
		for g := range bytes.SplitSeq(all, []byte("\n\n")) {
			if target != "" && !bytes.Contains(g, []byte("."+target)) {
				continue
			}
			if room := maxSampleBytes - (out.Len() - start); len(g) > room {
				// Its header and innermost frames, whole lines, if there is room.
				g = g[:max(bytes.LastIndexByte(g[:max(room, 0)], '\n'), 0)]
				if bytes.Count(g, []byte("\n")) < 2 {
					break
				}
			}
			out.Write(g)
			out.WriteString("\n\n")
		}
	}
	fmt.Fprintf(&out, "%s\n", StackSamplesEnd)
	w.Write(out.Bytes())
}
