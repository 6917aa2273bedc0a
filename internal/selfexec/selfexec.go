// Package selfexec runs a copy of the running test binary as another user,
// which tests need when the original sits in a directory that user cannot
// reach (go test's build cache under /root).
package selfexec

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Copy writes the running executable to dir/name, mode 0755, and returns
// its path.
func Copy(dir, name string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the running executable: %w", err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", self, err)
	}
	bin := filepath.Join(dir, name)
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		return "", fmt.Errorf("write %s: %w", bin, err)
	}
	return bin, nil
}

// CombinedOutput runs the command that newCmd makes and returns its output.
// A freshly written executable can fail to start with ETXTBSY: a process
// that another goroutine forked while the file was open for writing still
// holds that descriptor until it calls exec. The window is short, so the
// start is retried with a fresh command for up to five seconds.
func CombinedOutput(newCmd func() *exec.Cmd) ([]byte, error) {
	deadline := time.Now().Add(5 * time.Second)
	wait := 5 * time.Millisecond
	for {
		out, err := newCmd().CombinedOutput()
		if !errors.Is(err, syscall.ETXTBSY) || time.Now().After(deadline) {
			return out, err
		}
		time.Sleep(wait)
		wait = min(2*wait, 200*time.Millisecond)
	}
}
