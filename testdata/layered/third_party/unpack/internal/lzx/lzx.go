// Package lzx is the internal decoder of package unpack.
package lzx

import "errors"

// Decode reads a block whose header is checked byte by byte.
func Decode(b []byte) ([]byte, error) {
	if len(b) < 6 {
		return nil, errors.New("short block")
	}
	if b[0] == 0x8D {
		if b[1] == 0x04 {
			if b[2] == 0x6B {
				if b[3] == 0xC9 {
					if b[4] == 0x1F {
						panic("lzx: block header overruns") // MARK:lzx
					}
				}
			}
		}
	}
	return b[5:], nil
}
