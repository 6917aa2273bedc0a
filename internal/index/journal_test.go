package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/index/crashtest"
)

// crashStmts delete packages p5..p8 and write enough besides for the
// deletion to spill into the file before the (never reached) commit.
const crashStmts = `DELETE FROM package WHERE name >= 'p5';
INSERT INTO filler SELECT randomblob(1000) FROM (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 3000) SELECT i FROM c);`

// eightPackages creates an index database with packages p1..p8.
func eightPackages(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "index.db")
	d, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 8; i++ {
		if _, err := d.sql.Exec(`INSERT INTO channel (name, package_name) VALUES ('stable', ?)`, fmt.Sprintf("p%d", i)); err != nil {
			t.Fatal(err)
		}
		if _, err := d.sql.Exec(`INSERT INTO package (name, default_channel) VALUES (?, 'stable')`, fmt.Sprintf("p%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.sql.Exec(`CREATE TABLE filler(x)`); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// rawPackages counts packages as a reader that ignores journals sees them
// (a half-written file may not even read).
func rawPackages(t *testing.T, path string) (int, error) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	err = db.QueryRow(`SELECT COUNT(*) FROM package`).Scan(&n)
	return n, err
}

// TestReadOnlyOpenRollsBackKilledWriter: a writer killed before its commit
// leaves uncommitted pages in the file and a hot journal. A read-only open
// used to fail ("attempt to write a readonly database"); it reads the
// committed content from a rolled-back private copy, leaving the file and
// its journal as they were, and removes the copy on Close.
func TestReadOnlyOpenRollsBackKilledWriter(t *testing.T) {
	path := eightPackages(t)
	crashtest.KilledWriter(t, path, crashStmts)
	if n, err := rawPackages(t, path); err == nil && n == 8 {
		t.Fatal("the uncommitted deletion did not reach the file: nothing to test")
	} else {
		t.Logf("the file as written, journal ignored: %d packages, %v", n, err)
	}
	if st, _, err := JournalOf(path); err != nil || st != HotJournal {
		t.Fatalf("JournalOf after the kill: %v, %v; want HotJournal", st, err)
	}
	// The directory read-only, as for a reader without write access.
	if err := os.Chmod(filepath.Dir(path), 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(filepath.Dir(path), 0o755) })
	before, _ := os.ReadFile(path)

	d, err := OpenReadOnly(path)
	if err != nil {
		t.Fatalf("OpenReadOnly: %v", err)
	}
	names, err := d.PackageNames(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 8 || !d.RolledBack() {
		t.Errorf("read %d packages (%v), rolled back %v; want the 8 committed ones from a rolled-back copy", len(names), names, d.RolledBack())
	}
	copyDir := ""
	if d.cleanup != nil {
		// The copy lives in the temporary directory.
		entries, _ := filepath.Glob(filepath.Join(os.TempDir(), "opm-rollback-*"))
		if len(entries) > 0 {
			copyDir = entries[len(entries)-1]
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if copyDir != "" {
		if _, err := os.Stat(copyDir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Close left the rolled-back copy %s", copyDir)
		}
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Error("the read-only open changed the database file")
	}
	if _, err := os.Stat(path + "-journal"); err != nil {
		t.Errorf("the journal is gone from beside the file: %v", err)
	}

	// A writer (write access) rolls the file itself back.
	if err := os.Chmod(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := Open(path)
	if err != nil {
		t.Fatalf("Open for writing: %v", err)
	}
	w.Close()
	if n, err := rawPackages(t, path); err != nil || n != 8 {
		t.Errorf("after a writer opened it: %d packages (%v), want 8", n, err)
	}
}

// TestReadOnlyOpenRefusesLiveWriter: a database in the middle of a write by
// a running process is refused at once, naming the process.
func TestReadOnlyOpenRefusesLiveWriter(t *testing.T) {
	path := eightPackages(t)
	w := crashtest.StartWriter(t, path, crashStmts)
	defer w.Kill()
	_, err := OpenReadOnly(path)
	if !errors.Is(err, ErrHotJournal) || !strings.Contains(err.Error(), "is writing it now") || !strings.Contains(err.Error(), "process ") {
		t.Errorf("OpenReadOnly during a write: %v", err)
	}
}

// TestHotJournalMessageSaysHowToRecover: when no private copy can be made,
// the refusal says what happened and how to recover.
func TestHotJournalMessageSaysHowToRecover(t *testing.T) {
	path := eightPackages(t)
	crashtest.KilledWriter(t, path, crashStmts)
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	_, err := OpenReadOnly(path)
	if !errors.Is(err, ErrHotJournal) {
		t.Fatalf("OpenReadOnly without a usable temporary directory: %v", err)
	}
	for _, want := range []string{path + "-journal", "stopped before committing", "with write access", "sqlite3 " + path, "backup"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %v", want, err)
		}
	}
}
