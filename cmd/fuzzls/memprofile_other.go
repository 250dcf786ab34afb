//go:build !unix

package main

import "os"

// profileSignal: there is no user signal here; the profile is written at exit only.
var profileSignal os.Signal
