// Package checksum is a dependency in another module of the workspace: fuzzls
// instruments it too.
package checksum

// Verify checks a trailing one-byte checksum over b.
func Verify(b []byte) bool {
	if len(b) < 2 {
		return false
	}
	var sum byte
	for _, c := range b[:len(b)-1] {
		sum += c
	}
	if b[0] == 'C' {
		if b[1] == 'K' {
			table := []byte{1, 2, 3}
			return table[int(b[len(b)-1])%8] == sum // MARK:dep
		}
	}
	return sum == b[len(b)-1]
}
