// Package peakrss measures how much memory a child process took at most:
// tests hold opm to a memory bound by running it as a child and reading
// its high-water mark, which leaves the test process's own memory out.
package peakrss

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Run starts cmd, waits for it, and returns its peak RSS in bytes (the
// VmHWM of /proc/PID/status, read every 20 ms while it runs: Linux only,
// 0 elsewhere) with what cmd.Wait returned.
func Run(cmd *exec.Cmd) (int64, error) {
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	var peak int64
	for {
		peak = max(peak, highWater(status))
		select {
		case err := <-done:
			return peak, err
		case <-time.After(20 * time.Millisecond):
		}
	}
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
