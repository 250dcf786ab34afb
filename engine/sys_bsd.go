//go:build unix && !linux

package engine

import "syscall"

// dieWithParent does nothing: the child notices our death as EOF on its command
// pipe (fuzzrt/worker.go).
func dieWithParent(*syscall.SysProcAttr) {}
