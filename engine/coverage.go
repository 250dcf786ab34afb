package engine

import "sync"

// coverageMap is a session's coverage of its current build: the build's
// blocks, and for each counter (the blocks', then the comparison sites') the
// hit-count buckets reached, merged over the workers. Its lock is a leaf: no
// method calls out while holding it.
type coverageMap struct {
	mu      sync.Mutex
	blocks  []Block
	global  []uint8 // bucket bits reached per counter
	covered int     // blocks reached
}

// reset starts a new build's coverage: its blocks, and counters counters
// (blocks and comparison sites), none reached.
func (m *coverageMap) reset(blocks []Block, counters int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.blocks = blocks
	m.global = make([]uint8, counters)
	m.covered = 0
}

// mergeBaseline counts as reached the blocks of cov (a worker's hello: what
// ran before its first input), with their buckets.
func (m *coverageMap) mergeBaseline(cov []uint32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range cov {
		if i := int(c >> 8); i < len(m.blocks) && m.global[i] == 0 {
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
			if m.global[i] == 0 && i < len(m.blocks) { // past the blocks: comparison sites
				m.covered++
				changedReached = changedReached || m.blocks[i].Changed
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
	return append([]Block(nil), m.blocks...), m.hitLocked()
}

// hit returns whether each block was reached.
func (m *coverageMap) hit() []bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hitLocked()
}

func (m *coverageMap) hitLocked() []bool {
	hit := make([]bool, len(m.blocks))
	for i := range hit {
		hit[i] = i < len(m.global) && m.global[i] != 0
	}
	return hit
}

// counts returns how many blocks were reached, and how many there are.
func (m *coverageMap) counts() (covered, blocks int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.covered, len(m.blocks)
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
