package gcbudget

import (
	"runtime/debug"
	"testing"
)

func TestBatchRaisesAndRestores(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	limit := debug.SetMemoryLimit(-1)
	restore := Batch()
	if got := debug.SetGCPercent(Percent); got != Percent {
		t.Errorf("during a batch GOGC is %d, want %d", got, Percent)
	}
	if got := debug.SetMemoryLimit(-1); got != Limit {
		t.Errorf("during a batch the memory limit is %d, want %d", got, Limit)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after a batch GOGC is %d, want 100 again", got)
	}
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("after a batch the memory limit is %d, want %d again", got, limit)
	}
}

func TestBatchKeepsTheUsersChoice(t *testing.T) {
	t.Setenv("GOGC", "50")
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetGCPercent(50)
	defer debug.SetGCPercent(before)
	restore := Batch()
	defer restore()
	if got := debug.SetGCPercent(50); got != 50 {
		t.Errorf("with GOGC=50 set, a batch made it %d", got)
	}
}
