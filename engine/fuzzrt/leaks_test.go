package fuzzrt

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// BenchmarkLeakCheck is the per-execution cost of the leak check, after an
// execution run as testing runs one: on a goroutine that signals its end before
// it exits.
func BenchmarkLeakCheck(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := map[bool]string{false: "off", true: "on"}[on]
		b.Run(name, func(b *testing.B) {
			var l *leakCheck
			if on {
				l = &leakCheck{base: runtime.NumGoroutine()}
			}
			done := make(chan struct{})
			for b.Loop() {
				go func() { done <- struct{}{} }()
				<-done
				if out := l.check(nil); out != "" {
					b.Fatal(out)
				}
			}
		})
	}
}

// TestLeakCheck: goroutines each run leaves blocked are reported, with the line
// that started them; one started once is not, nor one that ends soon.
func TestLeakCheck(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	l := &leakCheck{base: settledGoroutines()}
	leak := func() { go func() { <-block }() }
	leak()
	out := l.check(leak)
	if !strings.HasPrefix(out, LeakPrefix) || !strings.Contains(out, "created by fuzzls.dev/fuzzls/engine/fuzzrt.TestLeakCheck") || !strings.Contains(out, "[chan receive") {
		t.Errorf("leak not reported with its goroutines:\n%s", out)
	}
	once := func() {}
	go func() { <-block }() // started once, before: part of the process
	if out := l.check(once); out != "" {
		t.Errorf("a goroutine started once reported:\n%s", out)
	}
	go func() { runtime.Gosched() }()
	if out := l.check(once); out != "" {
		t.Errorf("a goroutine that ends reported:\n%s", out)
	}
}

// settledGoroutines is the number of goroutines once it has not changed for
// 50 ms (at most a second): goroutines of a test before this one (or of the
// run before, with -count) still ending would leave a base that falls below
// the count of a leak.
func settledGoroutines() int {
	n, same := runtime.NumGoroutine(), 0
	for deadline := time.Now().Add(time.Second); same < 5 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		if m := runtime.NumGoroutine(); m == n {
			same++
		} else {
			n, same = m, 0
		}
	}
	return n
}
