package registry

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
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

// killedWALWriterDB is a copy of a reference database turned WAL-mode whose
// writer committed a new package and was killed before any checkpoint: the
// file still holds the content before the commit, its -wal the commit.
func killedWALWriterDB(t *testing.T, ref string) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "index.db")
	copyFile(t, refDB(t, ref), src)
	db, err := sql.Open("sqlite3", src)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		`PRAGMA journal_mode = WAL`,
		`PRAGMA wal_autocheckpoint = 0`,
		`INSERT INTO package(name, default_channel) VALUES ('wal-committed', 'stable')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// The writer is still open (closing it would checkpoint): its files as
	// they are now are what a kill leaves.
	path := filepath.Join(t.TempDir(), "index.db")
	copyFile(t, src, path)
	copyFile(t, src+"-wal", path+"-wal")
	return path
}

// TestServeReadsCommittedWAL: serving opens the file immutable, which
// ignores a write-ahead log, so commits not yet checkpointed were silently
// not served (sqlite3 and the other readers see them). The server serves
// them from a checkpointed private copy and leaves the files as they were.
func TestServeReadsCommittedWAL(t *testing.T) {
	path := killedWALWriterDB(t, "etcd.replaces.db")
	raw, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	err = raw.QueryRow(`SELECT COUNT(*) FROM package`).Scan(&n)
	raw.Close()
	if err != nil || n != 1 {
		t.Fatalf("the file itself has %d packages (%v), want the 1 from before the commit: nothing to test", n, err)
	}
	wal, err := os.ReadFile(path + "-wal")
	if err != nil || len(wal) == 0 {
		t.Fatalf("no write-ahead log (%v): nothing to test", err)
	}
	log := &syncBuffer{}
	srv := startServer(t, Options{DB: path, Logger: slogTo(log)})
	c := api.NewRegistryClient(srv.conn)
	stream, err := c.ListPackages(context.Background(), &api.ListPackageRequest{})
	var names []string
	for err == nil {
		var p *api.PackageName
		if p, err = stream.Recv(); err == nil {
			names = append(names, p.GetName())
		}
	}
	if !slices.Contains(names, "wal-committed") || len(names) != 2 {
		t.Errorf("ListPackages: %v, want the committed wal-committed and etcd", names)
	}
	if !strings.Contains(log.String(), "write-ahead log") {
		t.Errorf("the log does not say what was served:\n%s", log.String())
	}
	after, err := os.ReadFile(path + "-wal")
	if err != nil || !bytes.Equal(after, wal) {
		t.Errorf("serving changed the write-ahead log (%v)", err)
	}
}
