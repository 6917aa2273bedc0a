//go:build !linux

package atomicfile

import "errors"

var errNoExchange = errors.New("exchanging paths is not supported here")

// exchange is Linux's renameat2 RENAME_EXCHANGE; elsewhere ReplaceDir falls
// back to two renames.
func exchange(string, string) error { return errNoExchange }
