package parsers

import "testing"

func FuzzToml(f *testing.F) {
	f.Add("title = \"x\"\n[owner]\nname = \"a\"\ndob = 1979-05-27T07:32:00Z\n")
	f.Add("a = [1, 2.5, true]\n")
	f.Fuzz(func(t *testing.T, s string) { Toml(s) })
}

func FuzzYAML(f *testing.F) {
	f.Add([]byte("a: 1\nb: [x, y]\nc: {d: true}\n"))
	f.Add([]byte("- &x 1\n- *x\n"))
	f.Fuzz(func(t *testing.T, b []byte) { YAML(b) })
}

func FuzzHTML(f *testing.F) {
	f.Add("<html><body><p class=a>hi</p></body></html>")
	f.Add("<table><tr><td>1</td></tr></table>")
	f.Fuzz(func(t *testing.T, s string) { HTML(s) })
}
