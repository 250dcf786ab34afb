//go:build unix

package fuzzrt

import (
	"os"
	"syscall"
)

// mapFile maps size bytes of f, shared with every process that maps it.
func mapFile(f *os.File, size int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
}

func unmapFile(data []byte) error { return syscall.Munmap(data) }
