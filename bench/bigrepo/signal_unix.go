//go:build unix

package main

import (
	"os"
	"syscall"
)

// profileSignal makes the daemon write its heap profile (cmd/fuzzls/memprofile_unix.go).
var profileSignal os.Signal = syscall.SIGUSR1
