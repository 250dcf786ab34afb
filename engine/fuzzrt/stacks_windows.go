package fuzzrt

// sampleStacksOnQuit does nothing: Windows has no SIGQUIT.
func sampleStacksOnQuit() {}
