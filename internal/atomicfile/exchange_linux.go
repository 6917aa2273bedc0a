package atomicfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

var errNoExchange = errors.New("exchanging paths is not supported here")

// exchange swaps a and b in one step (renameat2 RENAME_EXCHANGE, Linux
// 3.15+). File systems without it answer EINVAL (or ENOSYS from old
// kernels): errNoExchange, and the caller falls back.
func exchange(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return errNoExchange
	}
	return err
}
