// Package tool reads records of both codecs; its fuzz target reaches their
// internal packages only through the public ones.
package tool

import (
	"example.com/layered/codec"
	"example.com/unpack"
)

// Read decodes b with each codec.
func Read(b []byte) {
	codec.Decode(b)
	unpack.Unpack(b)
}
