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

// Batch raises the collection target to Percent, unless the user chose one
// with GOGC; the function returned restores the previous target.
func Batch() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(Percent)
	return func() { debug.SetGCPercent(old) }
}
