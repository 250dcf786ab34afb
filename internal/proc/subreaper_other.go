//go:build !linux

package proc

import "errors"

// BecomeSubreaper fails: only Linux has child subreapers (and /proc, which this
// package reads).
func BecomeSubreaper() error { return errors.New("no child subreaper on this OS") }
