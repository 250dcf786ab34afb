//go:build unix

package fuzzrt

import (
	"os"
	"os/signal"
	"syscall"
)

// sampleStacksOnQuit arms the sampler. Workers only: elsewhere SIGQUIT keeps the
// runtime's meaning.
func sampleStacksOnQuit() {
	quit := make(chan os.Signal, 1)
	signal.Notify(quit, syscall.SIGQUIT)
	go func() {
		<-quit
		signal.Reset(syscall.SIGQUIT)
		writeStackSamples(os.Stderr, fuzzTargetName(), stackSamples, stackSampleGap)
		syscall.Kill(os.Getpid(), syscall.SIGQUIT)
	}()
}
