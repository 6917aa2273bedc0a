package fbc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScannedFileReplacedBeforeEach: Each reads blobs again from their
// files; a file renamed over after the scan (same length, other bytes)
// is reported as changed, never decoded as if it were what was scanned.
func TestScannedFileReplacedBeforeEach(t *testing.T) {
	t.Parallel()
	const cat = `{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"p","entries":[{"name":"p.v1"}]}
`
	dir := t.TempDir()
	file := filepath.Join(dir, "catalog.json")
	if err := os.WriteFile(file, []byte(cat), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ScanDir(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	swapped := strings.Replace(cat, `"stable"}`, `"stabl3"}`, 1)
	if err := os.WriteFile(file+".new", []byte(swapped), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(file+".new", file); err != nil {
		t.Fatal(err)
	}
	var got *Catalog
	if err := s.Each(context.Background(), func(_ string, c *Catalog) error { got = c; return nil }); err != nil {
		t.Fatal(err)
	}
	err = s.Err()
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "catalog.json:1") {
		t.Fatalf("Err() = %v, want the changed file named with its line", err)
	}
	if got != nil && len(got.Packages) > 0 && got.Packages[0].DefaultChannel == "stabl3" {
		t.Error("the replaced bytes were decoded")
	}
}
