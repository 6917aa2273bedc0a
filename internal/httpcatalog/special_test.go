package httpcatalog

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opmkit/opm/internal/fbc"
)

// TestServeTakesTheLimits: serve --http reads the catalog within serve's
// --max-* flags, as its gRPC conversion does (it took only the defaults).
func TestServeTakesTheLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	blobs := `{"schema":"olm.package","name":"a"}` + "\n" + `{"schema":"olm.package","name":"b"}` + "\n" +
		`{"schema":"x","package":"a","v":[[[]]]}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(blobs), 0o644); err != nil {
		t.Fatal(err)
	}
	for lim, want := range map[fbc.Limits]string{
		{MaxBlobs: 2}: "catalog.json:3: the blob starting here is one more than the 2 blobs",
		{MaxDepth: 3}: "catalog.json:3: a value here is nested more than 3 deep (--max-depth)",
	} {
		s, err := Listen(dir, ServerOptions{Addr: "127.0.0.1:0", Limits: lim})
		if err == nil {
			_ = s.Close()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want %q", lim, err, want)
		}
	}
	s, err := Listen(dir, ServerOptions{Addr: "127.0.0.1:0", Limits: fbc.Limits{MaxBlobs: 3, MaxDepth: 4}})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
}

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
			s, err := stored(dir, fbc.Limits{}, false)
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
		case <-time.After(2 * time.Minute): // only a hang
			t.Fatalf("%s: still blocked after 2 minutes", name)
		}
	}
}
