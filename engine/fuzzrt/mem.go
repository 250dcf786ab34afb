package fuzzrt

import (
	"encoding/binary"
	"os"
	"sync/atomic"
	"time"
	"unsafe"
)

// Mem is a file shared by a worker and its coordinator, mapped into both. The worker
// writes the input it is about to run before each execution, so that when the worker
// dies (os.Exit, a fatal error, a hang, a panic in another goroutine) the coordinator
// still has the input that killed it. The worker owns all writes; the coordinator only
// reads, after the worker is gone or through the atomic execution counter.
//
// Layout: [0:8] executions started (atomic), [8:12] input length, [12:16] exit-site
// length, [16:20] flags, [24:32] executions finished (atomic), [32:40] the slowest
// execution so far in nanoseconds (atomic), [40:48] the worker's CPU time in
// nanoseconds and [48:56] its memory in bytes (atomic; usage.go), [64:64+exitSiteMax] exit-site stack,
// [inputOff:] input (AppendValues). An execution is running while started and
// finished differ: the hang watchdog times only that, not the worker's waits on its
// pipe.
//
// The file starts with room for inputs of about 4 MiB; the worker grows it (and maps
// it anew) for a larger one, up to MaxInput. The coordinator's mapping keeps its
// first size: an input past it is read from the file.
type Mem struct {
	f    *os.File
	data []byte
}

const (
	memHeader   = 64
	exitSiteMax = 16 << 10
	inputOff    = memHeader + exitSiteMax
	// memInitial is the size of a new shared file.
	memInitial = inputOff + 4<<20
	// MaxInput is the largest input fuzzls runs, in the binary encoding (about
	// the size of its values): ten times go test's bound on what its mutator
	// makes. A seed past it is refused with an error that names it.
	MaxInput = 1 << 30
)

// CreateMem creates (or truncates) the shared file at path and maps it. The file's
// blocks are written, not left sparse: on a full disk, touching a page of a sparse
// mapping raises SIGBUS in whichever process touches it (the daemon too), while
// writing them fails here, with ENOSPC, as an error the caller can report.
func CreateMem(path string) (*Mem, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := fill(f, 0, memInitial); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return mapMem(f)
}

// fill writes zeros into f from offset from to offset to: blocks written, not a
// sparse hole, so that a full disk is an error here (see CreateMem).
func fill(f *os.File, from, to int) error {
	zeros := make([]byte, min(64<<10, to-from))
	for n := from; n < to; n += len(zeros) {
		if _, err := f.WriteAt(zeros[:min(len(zeros), to-n)], int64(n)); err != nil {
			return err
		}
	}
	return nil
}

// OpenMem maps an existing shared file.
func OpenMem(path string) (*Mem, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return mapMem(f)
}

func mapMem(f *os.File) (*Mem, error) {
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	data, err := mapFile(f, int(st.Size()))
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Mem{f: f, data: data}, nil
}

// grow makes room for an input of n bytes: the file grows to at least twice its
// size and is mapped anew. The old mapping is left in place, not unmapped: it
// shares the file's pages, so a goroutine of the target still writing an exit
// site through it (exitHook) writes where the new one reads.
func (m *Mem) grow(n int) bool {
	size := max(inputOff+n, 2*len(m.data))
	if err := fill(m.f, len(m.data), size); err != nil {
		return false
	}
	data, err := mapFile(m.f, size)
	if err != nil {
		return false
	}
	m.data = data
	return true
}

// Close unmaps and closes the file.
func (m *Mem) Close() error {
	err := unmapFile(m.data)
	if cerr := m.f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (m *Mem) execsPtr() *uint64 { return (*uint64)(unsafe.Pointer(&m.data[0])) }

// Execs is the number of executions started so far.
func (m *Mem) Execs() uint64 { return atomic.LoadUint64(m.execsPtr()) }

// SetExecs stores the execution counter.
func (m *Mem) SetExecs(n uint64) { atomic.StoreUint64(m.execsPtr(), n) }

func (m *Mem) finishedPtr() *uint64 { return (*uint64)(unsafe.Pointer(&m.data[24])) }
func (m *Mem) slowestPtr() *uint64  { return (*uint64)(unsafe.Pointer(&m.data[32])) }

// Finished is the number of executions that have returned.
func (m *Mem) Finished() uint64 { return atomic.LoadUint64(m.finishedPtr()) }

// SetFinished stores the count of executions that have returned.
func (m *Mem) SetFinished(n uint64) { atomic.StoreUint64(m.finishedPtr(), n) }

// Slowest is the longest execution that has returned.
func (m *Mem) Slowest() time.Duration { return time.Duration(atomic.LoadUint64(m.slowestPtr())) }

// SetSlowest stores the longest execution that has returned.
func (m *Mem) SetSlowest(d time.Duration) { atomic.StoreUint64(m.slowestPtr(), uint64(d)) }

func (m *Mem) cpuPtr() *uint64    { return (*uint64)(unsafe.Pointer(&m.data[40])) }
func (m *Mem) memoryPtr() *uint64 { return (*uint64)(unsafe.Pointer(&m.data[48])) }

// Usage is the worker's own figures, as it last reported them (usage.go): the
// CPU time it has used and the memory it holds.
func (m *Mem) Usage() (cpu time.Duration, memory int64) {
	return time.Duration(atomic.LoadUint64(m.cpuPtr())), int64(atomic.LoadUint64(m.memoryPtr()))
}

// SetUsage stores the worker's figures.
func (m *Mem) SetUsage(cpu time.Duration, memory int64) {
	atomic.StoreUint64(m.cpuPtr(), uint64(cpu))
	atomic.StoreUint64(m.memoryPtr(), uint64(memory))
}

// SetInput stores the encoded input about to run, growing the file when it does
// not fit. An input that cannot be stored whole (the file could not grow) is
// stored truncated and reported as such by Input.
func (m *Mem) SetInput(enc []byte) {
	if inputOff+len(enc) > len(m.data) {
		m.grow(len(enc))
	}
	copy(m.data[inputOff:], enc)
	binary.LittleEndian.PutUint32(m.data[8:], uint32(len(enc)))
}

// Input returns the last input stored and whether it is complete. One past the
// caller's mapping (the worker grew the file since) is read from the file.
func (m *Mem) Input() (enc []byte, complete bool) {
	n := int(binary.LittleEndian.Uint32(m.data[8:]))
	if inputOff+n <= len(m.data) {
		return append([]byte(nil), m.data[inputOff:inputOff+n]...), true
	}
	enc = make([]byte, n)
	k, _ := m.f.ReadAt(enc, inputOff)
	return enc[:k], k == n
}

// SetExitSite records the stack of a call that is about to exit the process.
func (m *Mem) SetExitSite(stack []byte) {
	n := copy(m.data[memHeader:memHeader+exitSiteMax], stack)
	binary.LittleEndian.PutUint32(m.data[12:], uint32(n))
}

// ClearExitSite forgets a recorded exit site (the call did not exit after all).
func (m *Mem) ClearExitSite() {
	if binary.LittleEndian.Uint32(m.data[12:]) != 0 {
		binary.LittleEndian.PutUint32(m.data[12:], 0)
	}
}

// ExitSite returns the recorded exit-site stack, or nil.
func (m *Mem) ExitSite() []byte {
	n := int(binary.LittleEndian.Uint32(m.data[12:]))
	if n == 0 || n > exitSiteMax {
		return nil
	}
	return append([]byte(nil), m.data[memHeader:memHeader+n]...)
}
