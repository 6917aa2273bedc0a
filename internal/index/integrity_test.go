package index

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// corruptTable scribbles over the b-tree page header of a table's root page,
// leaving the schema (page 1) readable.
func corruptTable(t *testing.T, path, table string) {
	t.Helper()
	ref := openRef(t, path)
	var root, pageSize int64
	if err := ref.QueryRow(`SELECT rootpage FROM sqlite_master WHERE name = ?`, table).Scan(&root); err != nil {
		t.Fatal(err)
	}
	if err := ref.QueryRow(`PRAGMA page_size`).Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	ref.Close()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	junk := []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	if _, err := f.WriteAt(junk, (root-1)*pageSize); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRefusesCorruptDatabase(t *testing.T) {
	db, path, _ := seededDB(t)
	db.Close()
	corruptTable(t, path, "operatorbundle")
	before := fileBytes(t, path)

	_, err := Open(path)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open of a corrupt database: %v, want ErrCorrupt", err)
	}
	t.Logf("refused: %v", err)
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "rebuild") {
		t.Errorf("error should name the file and say how to recover: %v", err)
	}
	if fileBytes(t, path) != before {
		t.Error("the corrupt file was written to")
	}
	// Reading stays possible (inspect, export of what is left).
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatalf("read-only open: %v", err)
	}
	ro.Close()
}

func TestOpenAcceptsHealthyDatabase(t *testing.T) {
	db, path, _ := seededDB(t)
	db.Close()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.QuickCheck(context.Background()); err != nil {
		t.Error(err)
	}
	db.Close()
}

// A write that runs out of room (sqlite's max_page_count stands for a full
// disk) is rolled back whole and leaves no hot journal beside the file.
func TestFullDatabaseRollsBackWithoutJournal(t *testing.T) {
	db, path, before := seededDB(t)
	ctx := context.Background()
	var pages int64
	if err := db.sql.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.ExecContext(ctx, `PRAGMA max_page_count = `+itoa(pages+4)); err != nil {
		t.Fatal(err)
	}
	var lbs []LoadedBundle
	for _, pkg := range []string{"skupper-operator", "aqua"} {
		lbs = append(lbs, corpusBundles(t, pkg)...)
	}
	_, err := db.Add(ctx, lbs, AddOptions{})
	if err == nil {
		t.Fatal("add into a full database succeeded")
	}
	if !strings.Contains(err.Error(), "full") {
		t.Errorf("error should say the database or disk is full: %v", err)
	}
	if _, err := os.Stat(path + "-journal"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a journal is left beside the database after the failed add (%v)", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	assertUnchanged(t, path, before)
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("files left: %v", entries)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
