package gcbudget

import (
	"runtime/debug"
	"testing"
)

func TestBatchRaisesAndRestores(t *testing.T) {
	t.Setenv("GOGC", "")
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	restore := Batch()
	if got := debug.SetGCPercent(Percent); got != Percent {
		t.Errorf("during a batch GOGC is %d, want %d", got, Percent)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after a batch GOGC is %d, want 100 again", got)
	}
}

func TestBatchKeepsTheUsersChoice(t *testing.T) {
	t.Setenv("GOGC", "50")
	before := debug.SetGCPercent(50)
	defer debug.SetGCPercent(before)
	restore := Batch()
	defer restore()
	if got := debug.SetGCPercent(50); got != 50 {
		t.Errorf("with GOGC=50 set, a batch made it %d", got)
	}
}
