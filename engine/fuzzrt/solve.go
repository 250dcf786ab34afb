package fuzzrt

// Solving a blocker on request (the editor's "Add as seed"): the input-to-state
// replacement of a comparison round, for one comparison site, tried in every
// place the operand shows up rather than a sample, and checked against the
// branch's counter. It runs only when the coordinator asks (SolveArgs).

// solve returns an input derived from vals that reaches a.Counter, as `go test
// fuzz v1` text, or "".
func (w *worker) solve(vals []any, a SolveArgs) string {
	c := &w.rt.cmp
	c.recs, c.frecs = nil, nil
	c.on = true
	w.run(vals)
	c.on = false
	vals = w.executed(vals)
	recs := append(c.frecs, c.recs...)
	c.recs, c.frecs = nil, nil
	budget := int(a.Max)
	try := func(cand []any) bool {
		budget--
		w.run(cand)
		return w.reached(a.Counter)
	}
	seen := map[[2]string]bool{}
	for _, r := range recs {
		x, ok1 := toOperand(r.a)
		y, ok2 := toOperand(r.b)
		if r.site != a.Site || !ok1 || !ok2 {
			continue
		}
		for _, pair := range [2][2]operand{{x, y}, {y, x}} {
			from, to := pair[0], pair[1]
			k := [2]string{operandKey(from), operandKey(to)}
			if equalOperand(from, to) || seen[k] {
				continue
			}
			seen[k] = true
			for i, v := range vals {
				// What a round would try, then every other place in bytes and text.
				cands, _ := replaceIn(v, from, to, nil, maxCmpPlaces)
				var edits []byteEdit
				switch x := v.(type) {
				case []byte:
					edits = byteEdits(x, from, to, int(a.Max))
				case string:
					edits = byteEdits([]byte(x), from, to, int(a.Max))
				}
				for j := 0; j < len(cands)+len(edits) && budget > 0; j++ {
					cand := CloneValues(vals)
					switch {
					case j < len(cands):
						cand[i] = cands[j]
					case isBytes(v):
						cand[i] = edits[j-len(cands)].apply(v.([]byte))
					default:
						cand[i] = string(edits[j-len(cands)].apply([]byte(v.(string))))
					}
					if try(cand) {
						return string(Marshal(w.executed(cand)))
					}
				}
			}
		}
	}
	return ""
}

func isBytes(v any) bool {
	_, ok := v.([]byte)
	return ok
}

// reached reports whether the last execution reached counter i.
func (w *worker) reached(i uint32) bool {
	base := uint32(0)
	for _, c := range w.rt.counters {
		if i < base+uint32(len(c)) {
			return c[i-base] != 0
		}
		base += uint32(len(c))
	}
	return false
}
