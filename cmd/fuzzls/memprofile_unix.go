//go:build unix

package main

import (
	"os"
	"syscall"
)

// profileSignal makes a running daemon write its heap profile.
var profileSignal os.Signal = syscall.SIGUSR1
