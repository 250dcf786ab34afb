package fuzzrt

import (
	"runtime/metrics"
	"time"
)

// The worker's own figures, for the coordinator's watchdog on every OS (Linux's
// coordinator reads /proc as well): the CPU time the process has used (to tell a
// hang from a worker starved of the CPU) and the memory the Go runtime holds for
// it, mapped and not returned to the OS (for the memory limit). A goroutine
// writes them to shared memory every usageTick; it keeps running while an
// execution hangs, as the runtime preempts the loop.

const usageTick = 50 * time.Millisecond

var usageMetrics = []metrics.Sample{
	{Name: "/memory/classes/total:bytes"},
	{Name: "/memory/classes/heap/released:bytes"},
}

// reportUsage writes the figures to m every usageTick, for good.
func reportUsage(m *Mem) {
	samples := append([]metrics.Sample(nil), usageMetrics...)
	for {
		metrics.Read(samples)
		var memory int64
		if samples[0].Value.Kind() == metrics.KindUint64 && samples[1].Value.Kind() == metrics.KindUint64 {
			memory = int64(samples[0].Value.Uint64() - samples[1].Value.Uint64())
		}
		m.SetUsage(cpuTime(), memory)
		time.Sleep(usageTick)
	}
}
