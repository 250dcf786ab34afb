//go:build integration

package tagged

// Decode has a bug only an integration build has.
func Decode(b []byte) int {
	if len(b) >= 3 && b[0] == 'T' && b[1] == 'A' && b[2] == 'G' {
		panic("tagged bug") // MARK:tags
	}
	return Len(b)
}
