package httpcatalog

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeRefusesSpecialFiles: serve --http reads the catalog as every
// other reader does: a link out of the catalog (or to /dev/zero) is not
// followed, and a named pipe is refused without blocking.
func TestServeRefusesSpecialFiles(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "secret.json")
	if err := os.WriteFile(outside, []byte(`{"schema":"olm.package","name":"secret"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, mk := range map[string]func(dir string) error{
		"fifo":      func(dir string) error { return syscall.Mkfifo(filepath.Join(dir, "b.json"), 0o644) },
		"/dev/zero": func(dir string) error { return os.Symlink("/dev/zero", filepath.Join(dir, "b.json")) },
		"link out":  func(dir string) error { return os.Symlink(outside, filepath.Join(dir, "b.json")) },
	} {
		dir := t.TempDir()
		if err := mk(dir); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			s, err := stored(dir, false)
			if err == nil {
				_ = s.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "b.json") {
				t.Errorf("%s: got %v, want b.json refused", name, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: still blocked after 20s", name)
		}
	}
}
