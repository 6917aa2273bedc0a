// Package gcbudget sets how often Go's collector runs while opm converts a
// whole catalog a package at a time: the live heap is then small (a few
// packages), so the default (GOGC=100) collects after every few megabytes
// allocated and the collector takes a sixth of the CPU; a larger target
// trades some of that for memory that stays far below what the catalog
// would take whole.
package gcbudget

import (
	"os"
	"runtime/debug"
)

// Percent is the collection target (as GOGC) during a batch.
const Percent = 400

// Limit is the soft memory limit (as GOMEMLIMIT) during a batch: should
// the live heap grow (a very large package), the collector runs more
// often rather than let the heap reach Percent more than it.
const Limit = 256 << 20

// Batch raises the collection target to Percent under a soft limit of
// Limit, unless the user chose them with GOGC or GOMEMLIMIT; the function
// returned restores what was there.
func Batch() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	oldLimit := debug.SetMemoryLimit(Limit)
	old := debug.SetGCPercent(Percent)
	return func() {
		debug.SetGCPercent(old)
		debug.SetMemoryLimit(oldLimit)
	}
}
