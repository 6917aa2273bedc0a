//go:build unix

package index

import (
	"os"

	"golang.org/x/sys/unix"
)

// sqlite's unix locking: a writer takes a write lock on the byte after
// PENDING_BYTE (1 GiB) before it creates a journal and holds it until the
// journal is finished.
const reservedByte = 0x40000000 + 1

// writeLockHolder reports whether another process holds the write lock of
// the database at path (and its pid).
func writeLockHolder(path string) (int, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: reservedByte, Len: 1}
	if err := unix.FcntlFlock(f.Fd(), unix.F_GETLK, &lk); err != nil {
		return 0, false
	}
	if lk.Type == unix.F_UNLCK {
		return 0, false
	}
	return int(lk.Pid), true
}
