// Package unpack stands for a third-party decompressor whose decoder is internal,
// like github.com/pierrec/lz4/v4's: a module of its own, used through a replace.
package unpack

import "example.com/unpack/internal/lzx"

// Unpack decodes b.
func Unpack(b []byte) ([]byte, error) { return lzx.Decode(b) }
