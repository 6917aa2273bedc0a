package peakrss

import (
	"errors"
	"os/exec"
	"testing"
)

// TestRun: a child that holds 64 MiB is measured over it, and its exit
// status comes back.
func TestRun(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: it is the child that takes a known amount of memory")
	}
	peak, err := Run(exec.Command(py, "-c", "import time; b = bytearray(64 << 20); time.sleep(0.2); raise SystemExit(3)"))
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("got %v, want exit status 3", err)
	}
	if peak < 64<<20 {
		t.Errorf("peak RSS %d bytes, want at least the 64 MiB the child held", peak)
	}
}
