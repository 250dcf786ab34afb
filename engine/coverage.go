package engine

import (
	"slices"
	"sync"

	"fuzzls.dev/fuzzls/instrument"
)

// coverageMap is a session's coverage of its current build: the build's
// blocks, and for each counter (the blocks', then the comparison sites') the
// hit-count buckets reached, merged over the workers. It holds the build's own
// blocks, not a copy: Block values are made when asked (snapshot). Its lock is
// a leaf: no method calls out while holding it.
type coverageMap struct {
	mu      sync.Mutex
	bin     *instrument.Binary // the build: its Files and Blocks
	changed []int              // the changed blocks (Block.Changed), in order
	global  []uint8            // bucket bits reached per counter
	covered int                // blocks reached
}

// reset starts a new build's coverage: bin's blocks, of which changed (indices,
// in order) are changed, and its counters (blocks and comparison sites), none
// reached.
func (m *coverageMap) reset(bin *instrument.Binary, changed []int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bin, m.changed = bin, changed
	m.global = make([]uint8, len(bin.Blocks)+bin.CmpCounters)
	m.covered = 0
}

// nblocks is the number of the build's blocks (0 before a build).
func (m *coverageMap) nblocks() int {
	if m.bin == nil {
		return 0
	}
	return len(m.bin.Blocks)
}

// mergeBaseline counts as reached the blocks of cov (a worker's hello: what
// ran before its first input), with their buckets.
func (m *coverageMap) mergeBaseline(cov []uint32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range cov {
		if i := int(c >> 8); i < m.nblocks() && m.global[i] == 0 {
			m.global[i] = uint8(c)
			m.covered++
		}
	}
}

// merge adds an input's coverage (counter<<8 | bucket bits, as workers report
// it) and reports whether it reached a bucket not reached before, and whether
// it newly reached a changed block (Block.Changed). Counters past the build's
// are ignored (a worker of another build).
func (m *coverageMap) merge(cov []uint32) (grew, changedReached bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range cov {
		i := int(c >> 8)
		if i >= len(m.global) {
			continue
		}
		if b := uint8(c); b&^m.global[i] != 0 {
			if m.global[i] == 0 && i < m.nblocks() { // past the blocks: comparison sites
				m.covered++
				_, isChanged := slices.BinarySearch(m.changed, i)
				changedReached = changedReached || isChanged
			}
			m.global[i] |= b
			grew = true
		}
	}
	return grew, changedReached
}

// snapshot returns the blocks and whether each was reached.
func (m *coverageMap) snapshot() (blocks []Block, hit []bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bin == nil {
		return nil, nil
	}
	blocks = make([]Block, len(m.bin.Blocks))
	for i, b := range m.bin.Blocks {
		blocks[i] = Block{File: m.bin.Files[b.File], StartLine: b.StartLine, StartCol: b.StartCol, EndLine: b.EndLine, EndCol: b.EndCol}
	}
	for _, c := range m.changed {
		blocks[c].Changed = true
	}
	return blocks, m.hitLocked()
}

// hit returns whether each block was reached.
func (m *coverageMap) hit() []bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hitLocked()
}

func (m *coverageMap) hitLocked() []bool {
	hit := make([]bool, m.nblocks())
	for i := range hit {
		hit[i] = i < len(m.global) && m.global[i] != 0
	}
	return hit
}

// counts returns how many blocks were reached, and how many there are.
func (m *coverageMap) counts() (covered, blocks int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.covered, m.nblocks()
}

// reached returns which of the counters idx were reached.
func (m *coverageMap) reached(idx []int) []bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]bool, len(idx))
	for k, i := range idx {
		out[k] = i >= 0 && i < len(m.global) && m.global[i] != 0
	}
	return out
}

// countReached counts the counters of idx that were reached.
func (m *coverageMap) countReached(idx []int) int {
	n := 0
	for _, r := range m.reached(idx) {
		if r {
			n++
		}
	}
	return n
}
