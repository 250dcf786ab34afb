package crashers

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

func FuzzPanic(f *testing.F) {
	f.Add("boo")
	f.Fuzz(func(t *testing.T, s string) { Panic(s) })
}

func FuzzError(f *testing.F) {
	f.Add("boo")
	f.Fuzz(func(t *testing.T, s string) {
		if trigger(s) {
			t.Fatalf("bad input %q", s) // MARK:error
		}
	})
}

func FuzzGoroutinePanic(f *testing.F) {
	f.Add("boo")
	f.Fuzz(func(t *testing.T, s string) { GoroutinePanic(s) })
}

func FuzzFatal(f *testing.F) {
	f.Add("boo")
	f.Fuzz(func(t *testing.T, s string) { Recurse(s, 0) })
}

func FuzzMapWrites(f *testing.F) {
	f.Add("boo")
	f.Fuzz(func(t *testing.T, s string) { MapWrites(s) })
}

func FuzzLeak(f *testing.F) {
	f.Add("boo")
	f.Fuzz(func(t *testing.T, s string) { Leak(s) })
}

func FuzzLinger(f *testing.F) {
	f.Add("boom")
	f.Fuzz(func(t *testing.T, s string) { Linger(s) })
}

func FuzzStartOnce(f *testing.F) {
	f.Add("boom")
	f.Fuzz(func(t *testing.T, s string) { StartOnce(s) })
}

func FuzzExit(f *testing.F) {
	f.Add("boo")
	f.Fuzz(func(t *testing.T, s string) { Exit(s) })
}

func FuzzLogFatal(f *testing.F) {
	f.Add("boo")
	f.Fuzz(func(t *testing.T, s string) { LogFatal(s) })
}

func FuzzHang(f *testing.F) {
	f.Add("boo")
	f.Fuzz(func(t *testing.T, s string) { Hang(s) })
}

func FuzzAlloc(f *testing.F) {
	f.Add("boo")
	f.Fuzz(func(t *testing.T, s string) { Alloc(s) })
}

func FuzzBigAlloc(f *testing.F) {
	f.Add("boo")
	f.Fuzz(func(t *testing.T, s string) { BigAlloc(s) })
}

func FuzzNoBug(f *testing.F) {
	f.Add("boo")
	f.Fuzz(func(t *testing.T, s string) {
		if trigger(s) && len(s) > 6 && s[5] == '!' {
			_ = s[:6]
		}
	})
}

func FuzzTwoBugs(f *testing.F) {
	f.Add("boo")
	f.Add("bam")
	f.Fuzz(func(t *testing.T, s string) {
		Panic(s)
		if len(s) >= 4 && s[:4] == "bam!" {
			t.Errorf("bam: %q", s) // MARK:twobugs
		}
	})
}

func FuzzNoBugInt(f *testing.F) {
	f.Fuzz(func(t *testing.T, n int, ok bool) {
		if ok && n > 10 {
			_ = n * 2
		}
	})
}

func FuzzNoBugBytes(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 3 && b[0] == 'x' {
			_ = b[1:]
		}
	})
}

var calls int

// FuzzFlaky fails on its 3000th call in a process, whatever the input.
func FuzzFlaky(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		if calls++; calls == 3000 {
			panic("flaky") // MARK:flaky
		}
	})
}

// secretSum is the SHA-256 of the secret, which appears nowhere in the code.
const secretSum = "289c61bd6906867f863f815b2925facc8e79f1fb2e9cab5bc655149c9ddc27b5"

// FuzzSecret fails only on an input no fuzzer finds: it can come only from a
// corpus (the warm-start test puts it in the native engine's cache) or a dictionary.
func FuzzSecret(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		if sum := sha256.Sum256([]byte(s)); hex.EncodeToString(sum[:]) == secretSum {
			panic("secret found") // MARK:secret
		}
	})
}

func FuzzGarbage(f *testing.F) {
	f.Add("boo")
	f.Fuzz(func(t *testing.T, s string) {
		if s != "" {
			Garbage(s)
		}
	})
}

func FuzzSlow(f *testing.F) {
	f.Add("boo")
	f.Fuzz(func(t *testing.T, s string) { Slow(s) })
}

func FuzzSpin(f *testing.F) {
	f.Add("boo")
	f.Fuzz(func(t *testing.T, s string) { Spin(s) })
}

func FuzzChurn(f *testing.F) {
	f.Add("boo")
	f.Fuzz(func(t *testing.T, s string) { Churn(s) })
}
