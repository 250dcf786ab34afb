package structs

import "testing"

func FuzzServe(f *testing.F) {
	f.Add(Config{Name: "web", Port: 80, Tags: []string{"a"}}, Level(1))
	f.Fuzz(func(t *testing.T, c Config, l Level) {
		Serve(c, l)
	})
}
