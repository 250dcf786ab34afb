//go:build !unix

package main

import "os"

// profileSignal: none here; the daemon's heap is not read (the bench reads /proc anyway).
var profileSignal os.Signal
