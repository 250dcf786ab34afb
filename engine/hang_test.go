package engine

import (
	"testing"
	"time"
)

// watchRun feeds a judge one probe every 50 ms from a running execution (number 1,
// started at 0) for d, with the CPU time and memory cpu and mem give at each wall
// time, and returns the verdicts that were not verdictNone, with when.
func watchRun(j *judge, limit time.Duration, fixed bool, d time.Duration, cpu func(time.Duration) time.Duration, mem func(time.Duration) int64) (verdicts []verdict, at []time.Duration) {
	for wall := time.Duration(0); wall <= d; wall += 50 * time.Millisecond {
		o := j.next(probe{wall: wall, started: 1, finished: 0, busy: true, mem: mem(wall), cpu: cpu(wall), limit: limit, fixed: fixed})
		if o != verdictNone {
			verdicts, at = append(verdicts, o), append(at, wall)
			if o == verdictHang || o == verdictOOM {
				return
			}
		}
	}
	return
}

func spinning(wall time.Duration) time.Duration { return wall } // has the CPU all along
func blocked(time.Duration) time.Duration       { return 0 }    // asleep, or starved
func flat(time.Duration) int64                  { return 100 << 20 }

// TestJudgeHang: an execution that spins past the adaptive limit is suspected at
// the limit and a hang at go test's bound (hangCap); with a quick watch (replays of
// a confirmed hang), a hang at the limit; under -timeout, at the timeout.
func TestJudgeHang(t *testing.T) {
	limit := 500 * time.Millisecond
	os, at := watchRun(newJudge(0, false), limit, false, time.Minute, spinning, flat)
	if len(os) != 2 || os[0] != verdictSuspect || os[1] != verdictHang || at[0] <= limit || at[0] > limit+100*time.Millisecond || at[1] <= hangCap || at[1] > hangCap+100*time.Millisecond {
		t.Errorf("adaptive: verdicts %v at %v, want a suspicion just past %v and a hang just past %v", os, at, limit, hangCap)
	}
	j := newJudge(0, true)
	os, at = watchRun(j, limit, false, time.Minute, spinning, flat)
	if len(os) != 1 || os[0] != verdictHang || at[0] > limit+100*time.Millisecond || j.hangAt != limit {
		t.Errorf("quick: verdicts %v at %v (limit %v), want a hang just past %v", os, at, j.hangAt, limit)
	}
	j = newJudge(0, false)
	os, at = watchRun(j, 2*time.Second, true, time.Minute, blocked, flat)
	if len(os) != 1 || os[0] != verdictHang || at[0] > 2*time.Second+100*time.Millisecond || j.hangAt != 2*time.Second {
		t.Errorf("-timeout 2s, no CPU used: verdicts %v at %v, want a hang just past 2s (wall time)", os, at)
	}
}

// TestJudgeStarved: an execution past the adaptive limit that had too little of
// the CPU (a busy machine, a stopped worker) is no hang until three times the
// limit in wall time.
func TestJudgeStarved(t *testing.T) {
	limit := 500 * time.Millisecond
	os, at := watchRun(newJudge(0, true), limit, false, time.Minute, blocked, flat)
	if len(os) != 1 || os[0] != verdictHang || at[0] < 3*limit || at[0] > 3*limit+100*time.Millisecond {
		t.Errorf("verdicts %v at %v, want a hang at %v", os, at, 3*limit)
	}
	// A quarter of the CPU: still starved (under half the limit) until 3× too.
	os, at = watchRun(newJudge(0, true), limit, false, time.Minute, func(w time.Duration) time.Duration { return w / 8 }, flat)
	if len(os) != 1 || at[0] < 3*limit {
		t.Errorf("an eighth of the CPU: verdicts %v at %v, want a hang only at %v", os, at, 3*limit)
	}
}

// TestJudgeSlowInput: a suspected execution that returns before hangCap is a slow
// input, and the next execution is timed afresh.
func TestJudgeSlowInput(t *testing.T) {
	j := newJudge(0, false)
	limit := 500 * time.Millisecond
	var got []verdict
	for wall := time.Duration(0); wall <= 5*time.Second; wall += 50 * time.Millisecond {
		p := probe{wall: wall, started: 1, busy: true, mem: 100 << 20, cpu: wall, limit: limit}
		if wall >= 2*time.Second { // the first returned, the second runs
			p.started, p.finished = 2, 1
		}
		if o := j.next(p); o != verdictNone {
			got = append(got, o)
		}
	}
	// The second spins too: suspected in its turn.
	if len(got) != 3 || got[0] != verdictSuspect || got[1] != verdictSlow || got[2] != verdictSuspect {
		t.Errorf("verdicts %v, want suspect, slow, suspect", got)
	}
}

// TestJudgeMemory: memory past the limit is an oom at once; an execution growing
// memory, by 64 MiB or in the last second, is left to the memory or stack limit
// up to growthCap rather than called a hang.
func TestJudgeMemory(t *testing.T) {
	os, _ := watchRun(newJudge(300<<20, true), 500*time.Millisecond, false, time.Minute, spinning, func(w time.Duration) int64 { return 100<<20 + int64(w/time.Millisecond)<<20 })
	if len(os) != 1 || os[0] != verdictOOM {
		t.Errorf("growing 1 MiB/ms past 300 MiB: verdicts %v, want an oom", os)
	}
	grown := func(w time.Duration) int64 {
		if w < 200*time.Millisecond {
			return 100 << 20
		}
		return 200 << 20 // grew by 100 MiB once, then flat
	}
	j := newJudge(0, true)
	os, at := watchRun(j, 500*time.Millisecond, false, 2*growthCap, spinning, grown)
	if len(os) != 1 || os[0] != verdictHang || at[0] <= growthCap || j.hangAt != growthCap {
		t.Errorf("grew 100 MiB: verdicts %v at %v (limit %v), want a hang only past %v", os, at, j.hangAt, growthCap)
	}
	// Growing 2 MiB every 200 ms until 3 s, then flat: a hang a second after it
	// was last seen growing (the probe at 3.15 s, 200 ms after the last step).
	creeping := func(w time.Duration) int64 {
		return 100<<20 + int64(min(w, 3*time.Second)/(200*time.Millisecond))*(2<<20+1)
	}
	os, at = watchRun(newJudge(0, true), 500*time.Millisecond, false, time.Minute, spinning, creeping)
	if len(os) != 1 || os[0] != verdictHang || at[0] < 4*time.Second || at[0] > 4*time.Second+250*time.Millisecond {
		t.Errorf("crept until 3s: verdicts %v at %v, want a hang a second after", os, at)
	}
	// Under -timeout, growth changes nothing.
	os, at = watchRun(newJudge(0, true), time.Second, true, time.Minute, spinning, grown)
	if len(os) != 1 || os[0] != verdictHang || at[0] > time.Second+100*time.Millisecond {
		t.Errorf("-timeout 1s, grew: verdicts %v at %v, want a hang just past 1s", os, at)
	}
}

// TestJudgeIdle: a worker waiting on its pipe (no execution running, or not
// asked to execute) is never hung, however long.
func TestJudgeIdle(t *testing.T) {
	j := newJudge(0, true)
	for wall := time.Duration(0); wall <= time.Minute; wall += 50 * time.Millisecond {
		if o := j.next(probe{wall: wall, started: 5, finished: 5, busy: true, limit: time.Second}); o != verdictNone {
			t.Fatalf("idle worker at %v: %v", wall, o)
		}
		if o := j.next(probe{wall: wall, started: 6, finished: 5, busy: false, limit: time.Second}); o != verdictNone {
			t.Fatalf("worker not asked to execute at %v: %v", wall, o)
		}
	}
}
