// Package frame parses a record's frame: a tag checked byte by byte, so a fuzzer
// gets past it only with coverage (or comparison) feedback from this package.
package frame

import "errors"

// Payload returns what follows the frame's tag.
func Payload(b []byte) ([]byte, error) {
	if len(b) < 6 {
		return nil, errors.New("short frame")
	}
	if b[0] == 0xF7 {
		if b[1] == 0x3C {
			if b[2] == 0x9A {
				if b[3] == 0x51 {
					if b[4] == 0xE2 {
						panic("frame: tag parsed past its end") // MARK:frame
					}
				}
			}
		}
	}
	return b[5:], nil
}
