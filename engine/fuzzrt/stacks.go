package fuzzrt

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"
)

// Stack samples. The coordinator locates a hang (and an oom its memory watchdog
// catches) from the stacks it asks for with SIGQUIT. One stack, the runtime's dump,
// is wherever the endless loop happened to be at that moment: in the loop's own
// function or in any function it calls, a different one on each replay, which
// makes one bug look like several and its replays look flaky. So the worker
// catches that SIGQUIT and first prints several samples of the fuzz goroutine's
// stack, a few milliseconds apart, between marker lines; the coordinator locates
// the failure in the frames common to all of them, the loop. Then it gives SIGQUIT
// back to the runtime, which prints its own dump and exits as before; a second
// SIGQUIT from the coordinator, if the sampler cannot run, gets that dump at once.

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
