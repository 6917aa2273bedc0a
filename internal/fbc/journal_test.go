package fbc

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/index/crashtest"
)

// TestRenderRollsBackKilledWriter: render and migrate read a database a
// writer was killed in; they used to fail with "attempt to write a readonly
// database". They render what was committed and warn.
func TestRenderRollsBackKilledWriter(t *testing.T) {
	path := copyDB(t, filepath.Join(sharedDir(t), "reference", "index", "etcd.replaces.db"))
	want, _ := renderDB(t, path, RenderOptions{})
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`CREATE TABLE filler(x)`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	crashtest.KilledWriter(t, path, `PRAGMA foreign_keys = OFF;
DELETE FROM package; DELETE FROM channel; DELETE FROM operatorbundle;
INSERT INTO filler SELECT randomblob(1000) FROM (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 3000) SELECT i FROM c);`)
	got, warns, err := RenderIndexFile(context.Background(), path, RenderOptions{})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if len(got.Bundles) != len(want.Bundles) || len(got.Packages) != len(want.Packages) {
		t.Errorf("rendered %d packages, %d bundles; want the committed %d, %d", len(got.Packages), len(got.Bundles), len(want.Packages), len(want.Bundles))
	}
	if !strings.Contains(strings.Join(warns, "\n"), "never committed") {
		t.Errorf("no warning about the rolled-back write: %q", warns)
	}
}
