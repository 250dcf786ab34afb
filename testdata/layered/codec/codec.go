// Package codec decodes framed records; the framing itself lives in an internal
// package, which the fuzz target in ../tool may not import.
package codec

import "example.com/layered/codec/internal/frame"

// Decode returns the payload of a record.
func Decode(b []byte) ([]byte, error) { return frame.Payload(b) }
