// Package crashers fails in every way a fuzz target can fail, each behind the
// input "boom", so that tests can check how each kind is caught and located.
package crashers

import (
	"log"
	"os"
	"sync"
	"time"
)

func trigger(s string) bool { return len(s) >= 4 && s[:4] == "boom" }

// Panic panics in the calling goroutine.
func Panic(s string) {
	if trigger(s) {
		var m map[string]int
		m["x"]++ // MARK:panic
	}
}

// GoroutinePanic panics in a goroutine it starts.
func GoroutinePanic(s string) {
	if trigger(s) {
		done := make(chan bool)
		go func() {
			panic("boom in a goroutine") // MARK:goroutine-panic
		}()
		<-done
	}
}

// Recurse overflows the stack.
func Recurse(s string, n int) int {
	if trigger(s) {
		return Recurse(s, n+1) + 1 // MARK:fatal
	}
	return n
}

// MapWrites writes a map from two goroutines it starts while it waits for them:
// the runtime's "concurrent map writes" is raised where they write.
func MapWrites(s string) {
	if trigger(s) {
		m := map[int]int{}
		var wg sync.WaitGroup
		for g := 0; g < 2; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 1e7; i++ {
					m[i%64] = g // MARK:concurrent-map-writes
				}
			}()
		}
		wg.Wait()
	}
}

// Leak starts a goroutine that waits on a channel nobody sends on: each call
// leaves one more goroutine blocked for good.
func Leak(s string) {
	if trigger(s) {
		ch := make(chan int)
		go func() { // MARK:leak
			<-ch
		}()
	}
}

// Linger starts a goroutine that ends soon after the call returns: no leak.
func Linger(s string) {
	if trigger(s) {
		go time.Sleep(5 * time.Millisecond)
	}
}

var janitor sync.Once

// StartOnce starts a goroutine that runs for good, once per process (as a pool
// or a cache's janitor does): no leak.
func StartOnce(s string) {
	if trigger(s) {
		janitor.Do(func() {
			go func() { select {} }()
		})
	}
}

// Exit calls os.Exit.
func Exit(s string) {
	if trigger(s) {
		os.Exit(3) // MARK:exit
	}
}

// LogFatal calls log.Fatalf.
func LogFatal(s string) {
	if trigger(s) {
		log.Fatalf("cannot go on with %q", s) // MARK:logfatal
	}
}

// Hang never returns.
func Hang(s string) {
	if trigger(s) {
		for { // MARK:hang
			time.Sleep(time.Millisecond)
		}
	}
}

// Alloc allocates without bound.
func Alloc(s string) [][]byte {
	var keep [][]byte
	if trigger(s) {
		for {
			keep = append(keep, make([]byte, 1<<20)) // MARK:oom
			for i := range keep[len(keep)-1] {
				keep[len(keep)-1][i] = 1
			}
		}
	}
	return keep
}

// BigAlloc asks for a gigabyte it never touches: no page of it is resident on a
// fresh worker, so only the worker's count of what it allocated shows it.
func BigAlloc(s string) int {
	if trigger(s) {
		buf := make([]byte, 1<<30) // MARK:bigalloc
		return len(buf)
	}
	return 0
}

// Garbage churns through 400 MiB in 4 MiB buffers, each written to and dropped:
// more than a 300 MiB limit at one place, never more than 4 MiB of it live.
func Garbage(s string) (sum int) {
	for i := range 100 {
		buf := make([]byte, 4<<20)
		buf[i] = s[0]
		sum += int(buf[i])
	}
	return sum
}

// Slow takes 0.7 s for every input: longer than the adaptive hang limit's floor, but
// no hang, since every input takes as long.
func Slow(s string) {
	time.Sleep(700 * time.Millisecond)
}

// Churn never returns either: its loop spends nearly all its time in the two
// functions it calls, so a stack taken at any one moment is in one of them.
func Churn(s string) int {
	n := 0
	if trigger(s) {
		for { // MARK:churn
			n += mix(s, n)
			n ^= fold(s, n)
		}
	}
	return n
}

func mix(s string, n int) int {
	for i := range 300 {
		n = n*31 + int(s[i%len(s)])
	}
	return n
}

func fold(s string, n int) int {
	for i := range 300 {
		n ^= n>>7 + int(s[(i+n&7)%len(s)])
	}
	return n
}

// Spin never returns either, busy in a loop whose condition is an instrumented
// comparison.
func Spin(s string) int {
	n := 0
	if trigger(s) {
		for i := 0; s[i%len(s)] != 0; i++ { // MARK:spin
			n++
		}
	}
	return n
}
