package cmdtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// RunPeak runs opm in a child process (as Run does with Dir set; a
// temporary directory when Dir is not) and returns its result and its
// peak RSS in bytes, the high-water mark (VmHWM) read from /proc while it
// runs: what a run took at most, not counting this test process. The
// package needs Main as its TestMain.
func (r *Runner) RunPeak(args ...string) (Result, int64) {
	r.t.Helper()
	if r.Dir == "" {
		r.Dir = r.t.TempDir()
		defer func() { r.Dir = "" }()
	}
	cmd := r.Command(args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		r.t.Fatalf("cmdtest: start opm %s: %v", strings.Join(args, " "), err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	var peak int64
	var err error
	for waiting := true; waiting; {
		peak = max(peak, highWater(status))
		select {
		case err = <-done:
			waiting = false
		case <-time.After(20 * time.Millisecond):
		}
	}
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			r.t.Fatalf("cmdtest: run opm %s: %v", strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	return Result{code, out.String(), errOut.String()}, peak
}

// highWater is the VmHWM of a /proc/PID/status file, 0 when unreadable
// (the process is gone).
func highWater(status string) int64 {
	data, err := os.ReadFile(status)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			_, _ = fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb)
			return kb << 10
		}
	}
	return 0
}
