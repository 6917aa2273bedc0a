package registry

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/index/crashtest"
	"github.com/opmkit/opm/internal/registry/api"
)

// killedWriterDB is a copy of a reference database that a writer killed
// before its commit left with uncommitted pages (every package deleted)
// and a hot journal.
func killedWriterDB(t *testing.T, ref string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "index.db")
	copyFile(t, refDB(t, ref), path)
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
DELETE FROM package;
INSERT INTO filler SELECT randomblob(1000) FROM (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 3000) SELECT i FROM c);`)
	return path
}

// TestServeRollsBackKilledWriter: serving reads the file immutable, which
// ignores journals, so the half-written state of a killed writer was served
// as data. The server serves what was committed (a rolled-back private
// copy) and says so in its log.
func TestServeRollsBackKilledWriter(t *testing.T) {
	path := killedWriterDB(t, "etcd.replaces.db")
	raw, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	err = raw.QueryRow(`SELECT COUNT(*) FROM package`).Scan(&n)
	raw.Close()
	if err == nil && n != 0 {
		t.Fatalf("the uncommitted deletion did not reach the file (%d packages): nothing to test", n)
	}
	log := &syncBuffer{}
	srv := startServer(t, Options{DB: path, Logger: slogTo(log)})
	pkgs, err := drain(api.NewRegistryClient(srv.conn).ListPackages(context.Background(), &api.ListPackageRequest{}))
	if err != nil || pkgs != 1 {
		t.Errorf("ListPackages: %d packages (%v), want the committed 1", pkgs, err)
	}
	if !strings.Contains(log.String(), "never committed") || !strings.Contains(log.String(), "rolled-back copy") {
		t.Errorf("the log does not say what was served:\n%s", log.String())
	}
}
