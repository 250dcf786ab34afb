package engine

import (
	"sort"
	"sync"
	"time"
)

// The scheduler shares Options.Parallel worker slots among the sessions that are
// fuzzing. With no more sessions than slots each gets an equal share and the
// remainder goes to those still finding coverage; with more, the slots rotate every
// slice, favouring sessions that found coverage in their last slice and otherwise
// those that waited longest.

const slice = 3 * time.Second

// goTestSlice is the slice with go test's engine (gotest.go) and libFuzzer's
// (libfuzzerrun.go): a turn stops the process and the next starts it again,
// which costs seconds (go test's build checked, the corpus run for its
// baseline coverage) before the first execution.
const goTestSlice = 30 * time.Second

type scheduler struct {
	tokens chan struct{} // one per running worker: never more than slots at once

	mu      sync.Mutex
	slots   int
	slice   time.Duration // a turn, when sessions outnumber the slots
	members map[*Session]*member
	timer   *time.Timer
}

type member struct {
	allot      chan int // latest allotment, buffered: a new value replaces an unread one
	current    int
	lastRun    time.Time
	coveredAt  int // coverage when the current slice started
	growth     int // coverage found in the last slice it ran
	joinedTime time.Time
}

func newScheduler(slots int, slice time.Duration) *scheduler {
	return &scheduler{slots: slots, slice: slice, members: map[*Session]*member{}, tokens: make(chan struct{}, slots)}
}

// acquire takes a worker slot if one is free. A session that was allotted more
// workers than it could start retries on its next tick, once others have shrunk.
func (sc *scheduler) acquire() bool {
	select {
	case sc.tokens <- struct{}{}:
		return true
	default:
		return false
	}
}

// release frees a slot taken by acquire.
func (sc *scheduler) release() { <-sc.tokens }

// join adds a fuzzing session; its allotments arrive on the returned channel.
func (sc *scheduler) join(s *Session) <-chan int {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	m := &member{allot: make(chan int, 1), joinedTime: time.Now()}
	sc.members[s] = m
	sc.rebalanceLocked()
	return m.allot
}

func (sc *scheduler) leave(s *Session) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	delete(sc.members, s)
	sc.rebalanceLocked()
}

func (sc *scheduler) tick() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.timer = nil
	sc.rebalanceLocked()
}

func (sc *scheduler) rebalanceLocked() {
	if len(sc.members) == 0 {
		return
	}
	type cand struct {
		s *Session
		m *member
	}
	var cs []cand
	now := time.Now()
	for s, m := range sc.members {
		cov := s.Stats().Covered
		if m.current > 0 {
			m.growth = cov - m.coveredAt
			m.lastRun = now
		}
		m.coveredAt = cov
		cs = append(cs, cand{s, m})
	}
	// Sessions still finding coverage first, then the one that waited longest.
	sort.Slice(cs, func(i, j int) bool {
		gi, gj := cs[i].m.growth > 0, cs[j].m.growth > 0
		if gi != gj {
			return gi
		}
		if !cs[i].m.lastRun.Equal(cs[j].m.lastRun) {
			return cs[i].m.lastRun.Before(cs[j].m.lastRun)
		}
		return cs[i].m.joinedTime.Before(cs[j].m.joinedTime)
	})
	alloc := make([]int, len(cs))
	if len(cs) <= sc.slots {
		for i := range cs {
			alloc[i] = sc.slots / len(cs)
		}
		for i := 0; i < sc.slots%len(cs); i++ {
			alloc[i]++
		}
	} else {
		// Rotate: the growing ones keep running, the rest take turns.
		for i := 0; i < sc.slots; i++ {
			alloc[i] = 1
		}
	}
	for i, c := range cs {
		c.m.current = alloc[i]
		select {
		case <-c.m.allot:
		default:
		}
		c.m.allot <- alloc[i]
	}
	if len(cs) > sc.slots && sc.timer == nil {
		sc.timer = time.AfterFunc(sc.slice, sc.tick)
	}
}
