package fbc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/shareddata"
)

// sharedDir is the shared corpus and reference data beside the checkout;
// tests that read it skip, saying why, when it is absent (and fail under
// CI=true).
func sharedDir(t testing.TB) string {
	t.Helper()
	shareddata.Require(t, "reference", "index")
	return shareddata.Root()
}

// referenceDBs lists the reference databases that have an upstream render.
func referenceDBs(t testing.TB) []string {
	t.Helper()
	dbs, err := filepath.Glob(filepath.Join(sharedDir(t), "reference", "index", "*.db"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, db := range dbs {
		if _, err := os.Stat(strings.TrimSuffix(db, ".db") + ".fbc.json"); err == nil {
			out = append(out, db)
		}
	}
	if len(out) == 0 {
		t.Fatal("no reference databases with renders")
	}
	return out
}

// copyDB copies a database to a temp dir (references are read-only files).
func copyDB(t testing.TB, src string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

func openRO(t testing.TB, path string) *index.DB {
	t.Helper()
	db, err := index.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func renderDB(t testing.TB, path string, opts RenderOptions) (*Catalog, []string) {
	t.Helper()
	c, warns, err := FromIndex(context.Background(), openRO(t, path), opts)
	if err != nil {
		t.Fatal(err)
	}
	return c, warns
}
