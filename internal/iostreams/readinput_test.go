package iostreams

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadInput: the one bounded reader of a command's template or
// catalog input: a file, or stdin for "" and "-"; past the bound the
// error names the flag.
func TestReadInput(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "t.yaml")
	if err := os.WriteFile(file, []byte("schema: olm.semver\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, source, err := ReadInput(ctx, nil, file, "template", 100)
	if err != nil || source != file || string(data) != "schema: olm.semver\n" {
		t.Errorf("file: %q %q %v", data, source, err)
	}
	for _, name := range []string{"", "-"} {
		data, source, err = ReadInput(ctx, strings.NewReader("x"), name, "template", 100)
		if err != nil || source != "stdin" || string(data) != "x" {
			t.Errorf("stdin %q: %q %q %v", name, data, source, err)
		}
	}
	_, _, err = ReadInput(ctx, nil, file, "template", 4)
	if !errors.Is(err, ErrInputTooLarge) || !strings.Contains(err.Error(), "--max-input-size") || !strings.Contains(err.Error(), "read template "+file) {
		t.Errorf("too large: %v", err)
	}
	_, _, err = ReadInput(ctx, strings.NewReader("xxxxxx"), "-", "catalog", 4)
	if !errors.Is(err, ErrInputTooLarge) || !strings.Contains(err.Error(), "read the catalog from stdin") {
		t.Errorf("stdin too large: %v", err)
	}
	_, _, err = ReadInput(ctx, nil, filepath.Join(t.TempDir(), "missing"), "template", 4)
	if !errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), "open ") {
		t.Errorf("missing: %v", err)
	}
}
