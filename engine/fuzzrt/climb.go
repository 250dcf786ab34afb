package fuzzrt

import "math/bits"

// Climbing a changed comparison: input-to-state replacement needs an operand
// to show up in the input, and a value the code derives from it (a divisor
// mixed from input bytes and other state, compared to 0 by the division's
// hook) never does. For an integer comparison on a changed line (the focus's
// sites) whose operands differ, climb finds the input bytes that move its
// operand (each byte inverted once, the comparison still reached) and then
// flips their bits one at a time, keeping each flip that leaves fewer bits
// differing between the operands. An operand that is a bitwise mix of a few
// input bytes (a hash's low bits, a xor with state) so reaches the other in
// about as many executions as it has bits.

// maxClimbBytes bounds the bytes of one value scanned for influence.
const maxClimbBytes = 4096

// climbShare bounds climbing's share of the worker's executions (1/climbShare
// of them at most, over time), so the rest of the loop goes on.
const climbShare = 2

// climbState is the worker's account of climbing.
type climbState struct {
	execs uint64 // executions climbing made
	buf   []byte // the value being climbed
	run   []byte // its copy for one execution (the fuzz function may write into it)
}

// climb works on vals (an entry reaching the focus, not modified), when the
// focus has comparison sites and climbing is within its share.
func (w *worker) climb(vals []any) {
	c := &w.rt.cmp
	if c.focus == nil || w.climbing.execs*climbShare > w.execs {
		return
	}
	start := w.execs
	defer func() { w.climbing.execs += w.execs - start }()
	site, dist, ok := w.focusDistance(vals, -1)
	if !ok || dist == 0 {
		return
	}
	for k, v := range vals {
		var b []byte
		switch x := v.(type) {
		case []byte:
			b = x
		case string:
			b = []byte(x)
		default:
			continue
		}
		cl := &w.climbing
		cl.buf = append(cl.buf[:0], b...)
		cand := CloneValues(vals)
		try := func() (int, bool) {
			if _, isStr := vals[k].(string); isStr {
				cand[k] = string(cl.buf)
			} else {
				cl.run = append(cl.run[:0], cl.buf...)
				cand[k] = cl.run
			}
			_, d, ok := w.focusDistance(cand, site)
			return d, ok
		}
		// Which bytes move the operand; a change that brings it nearer is kept.
		var moving []int
		for i := 0; i < len(cl.buf) && i < maxClimbBytes; i++ {
			if !w.climbGoesOn() {
				return
			}
			cl.buf[i] ^= 0xff
			d, ok := try()
			switch {
			case ok && d < dist:
				dist = d
				moving = append(moving, i)
			case ok && d != dist:
				cl.buf[i] ^= 0xff
				moving = append(moving, i)
			default:
				cl.buf[i] ^= 0xff
			}
			if dist == 0 {
				return
			}
		}
		// Their bits, one at a time, while that brings it nearer.
		for better := true; better && len(moving) > 0; {
			better = false
			for _, i := range moving {
				for bit := range 8 {
					if !w.climbGoesOn() {
						return
					}
					cl.buf[i] ^= 1 << bit
					if d, ok := try(); ok && d < dist {
						dist, better = d, true
						if dist == 0 {
							return
						}
					} else {
						cl.buf[i] ^= 1 << bit
					}
				}
			}
		}
	}
}

// climbGoesOn reports whether the worker may go on climbing: no request
// waiting, still fuzzing.
func (w *worker) climbGoesOn() bool { return len(w.reqs) == 0 && w.mut != nil }

// focusDistance runs vals with comparison recording on and returns the first
// integer comparison recorded at a focus site (at site, when site ≥ 0) with
// the number of bits its operands differ in; ok is false when there was none.
// The execution reports failures and new coverage as any does.
func (w *worker) focusDistance(vals []any, site int32) (int32, int, bool) {
	c := &w.rt.cmp
	c.recs, c.frecs = c.recs[:0], c.frecs[:0]
	c.on = true
	w.execute(vals, false)
	c.on = false
	found, dist, ok := int32(-1), 0, false
	for _, r := range c.frecs {
		if site >= 0 && r.site != site {
			continue
		}
		a, ok1 := toOperand(r.a)
		b, ok2 := toOperand(r.b)
		if !ok1 || !ok2 || !a.isInt || !b.isInt {
			continue
		}
		mask := ^uint64(0) >> (64 - 8*min(a.size, b.size, 8))
		found, dist, ok = r.site, bits.OnesCount64((a.u^b.u)&mask), true
		if site < 0 && dist == 0 {
			continue // a comparison already equal: the next one
		}
		break
	}
	c.recs, c.frecs = c.recs[:0], c.frecs[:0]
	return found, dist, ok
}
