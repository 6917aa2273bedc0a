package catalogdiff

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/opmkit/opm/internal/fbc"
)

func loadJSON(t *testing.T, path string) *fbc.Catalog {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := &fbc.Catalog{}
	if err := c.LoadFile(filepath.Base(path), data); err != nil {
		t.Fatal(err)
	}
	return c
}
