// Package oss is a target for the round trip through go-118-fuzz-build and
// libFuzzer (OSS-Fuzz, ClusterFuzzLite): its failure is reached only by its
// f.Add seed (the name must hash to a constant), and each argument is of another
// type of the harness's byte layout.
package oss

import "crypto/sha256"

// Record fails on one record only.
func Record(name string, data []byte, n int, ok bool, v uint16, r rune, f float64) {
	h := sha256.Sum256([]byte(name))
	if [4]byte(h[:4]) != [4]byte{0xd4, 0x9d, 0x0d, 0xf9} {
		return
	}
	if string(data) == "only a seed reaches this" && n == -1234567890123 && ok && v == 54321 && r == 'λ' && f == 2.5 {
		panic("reached by the seed") // MARK:seed
	}
}
