// Package seedable holds a branch that fuzzing reaches and does not take, but
// that an input-to-state replacement takes once it is tried in every place:
// a signature longer than the dictionary keeps (64 bytes) at an offset of a
// zero-filled image, past the places a comparison round tries. Tests of "Add
// as seed" at the blocker get that input; the panic behind the branch shows
// that go test reaches it.
package seedable

// signature starts a volume descriptor.
const signature = "FUZZLS VOLUME DESCRIPTOR 0001 FUZZLS VOLUME DESCRIPTOR 0001 FUZZLS VOLUME"

// descriptorAt is where the volume descriptor is.
const descriptorAt = 8192

// Volume reports whether img holds a volume descriptor.
func Volume(img []byte) bool {
	if len(img) < descriptorAt+len(signature) {
		return false
	}
	if string(img[descriptorAt:descriptorAt+len(signature)]) == signature { // MARK:gate
		panic("volume descriptor reached") // MARK:behind
	}
	return false
}
