package calc

import "testing"

func FuzzEval(f *testing.F) {
	f.Add("1+2")
	f.Add("1+2*3")
	f.Add("(1+2)*3")
	f.Fuzz(func(t *testing.T, expr string) {
		Eval(expr)
	})
}
