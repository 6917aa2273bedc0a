package fbccache

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDigestRefusesSpecialFiles: the cache digest reads catalog files as
// the loader does: a named pipe is refused without blocking, and a link
// to a device or out of the catalog is not followed.
func TestDigestRefusesSpecialFiles(t *testing.T) {
	t.Parallel()
	for name, mk := range map[string]func(dir string) error{
		"fifo":      func(dir string) error { return syscall.Mkfifo(filepath.Join(dir, "b.json"), 0o644) },
		"/dev/zero": func(dir string) error { return os.Symlink("/dev/zero", filepath.Join(dir, "b.json")) },
		"link out":  func(dir string) error { return os.Symlink("/etc/hostname", filepath.Join(dir, "b.json")) },
	} {
		dir := t.TempDir()
		if err := mk(dir); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { _, err := Digest(dir); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "b.json") {
				t.Errorf("%s: got %v, want b.json refused", name, err)
			}
		case <-time.After(2 * time.Minute): // only a hang
			t.Fatalf("%s: Digest still blocked after 2 minutes", name)
		}
	}
}
