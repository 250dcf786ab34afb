//go:build unix && (!linux || fuzzls_portable)

package engine

import "syscall"

// dieWithParent does nothing: the child notices our death as EOF on its command
// pipe (fuzzrt/worker.go).
func dieWithParent(*syscall.SysProcAttr) {}
