package app_test

import (
	"os"
	"testing"

	"example.com/app"
)

var setUp bool

func TestMain(m *testing.M) {
	setUp = true
	os.Exit(m.Run())
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("\x02ab\xc3"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !setUp {
			t.Fatal("TestMain did not run")
		}
		app.Parse(b)
	})
}
