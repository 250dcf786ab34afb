// Package racy has a data race that some inputs reach, and code that runs
// goroutines under a lock, which must not be reported.
package racy

import "sync"

// Count has a data race on n when the input starts with "RAC".
func Count(data []byte) int {
	n := 0
	if len(data) >= 3 && data[0] == 'R' && data[1] == 'A' && data[2] == 'C' {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			n++ // MARK:race-goroutine
		}()
		n++ // MARK:race-caller
		wg.Wait()
	}
	return n
}

// Sum adds the input's length in two goroutines that take a lock: no race,
// though both run the same instrumented blocks and comparison at once, before
// the lock.
func Sum(data []byte) int {
	var mu sync.Mutex
	var wg sync.WaitGroup
	total := 0
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if len(data) > 1 {
				mu.Lock()
				total += len(data)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return total
}
