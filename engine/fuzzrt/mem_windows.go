package fuzzrt

import (
	"os"
	"syscall"
	"unsafe"
)

// mapFile maps size bytes of f, shared with every process that maps it: a file
// mapping object and a view of it, as internal/fuzz's sys_windows.go. The view
// holds the mapping object, so its handle is closed at once.
func mapFile(f *os.File, size int) ([]byte, error) {
	h, err := syscall.CreateFileMapping(syscall.Handle(f.Fd()), nil, syscall.PAGE_READWRITE, 0, 0, nil)
	if err != nil {
		return nil, os.NewSyscallError("CreateFileMapping", err)
	}
	defer syscall.CloseHandle(h)
	addr, err := syscall.MapViewOfFile(h, syscall.FILE_MAP_READ|syscall.FILE_MAP_WRITE, 0, 0, uintptr(size))
	if err != nil {
		return nil, os.NewSyscallError("MapViewOfFile", err)
	}
	// addr is memory Go does not manage: reading it through a pointer to it keeps
	// vet's unsafeptr check, which cannot know that, quiet.
	p := *(*unsafe.Pointer)(unsafe.Pointer(&addr))
	return unsafe.Slice((*byte)(p), size), nil
}

func unmapFile(data []byte) error {
	return syscall.UnmapViewOfFile(uintptr(unsafe.Pointer(&data[0])))
}
