package index

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// schemaShape describes tables, columns, foreign keys and indexes through
// sqlite's pragmas, so DDL formatting does not matter.
func schemaShape(t *testing.T, db *sql.DB) []string {
	t.Helper()
	var out []string
	q := func(query string, f func(cols []sql.NullString)) {
		rows, err := db.Query(query)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			f(vals)
		}
	}
	var tables []string
	q(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`, func(c []sql.NullString) { tables = append(tables, c[0].String) })
	for _, tb := range tables {
		q(fmt.Sprintf(`PRAGMA table_info(%q)`, tb), func(c []sql.NullString) {
			// cid, name, type, notnull, dflt_value, pk
			out = append(out, fmt.Sprintf("column %s.%s type=%s notnull=%s default=%s pk=%s", tb, c[1].String, c[2].String, c[3].String, c[4].String, c[5].String))
		})
		q(fmt.Sprintf(`PRAGMA foreign_key_list(%q)`, tb), func(c []sql.NullString) {
			// id, seq, table, from, to, on_update, on_delete, match
			out = append(out, fmt.Sprintf("fk %s id=%s seq=%s %s -> %s.%s update=%s delete=%s", tb, c[0].String, c[1].String, c[3].String, c[2].String, c[4].String, c[5].String, c[6].String))
		})
		q(fmt.Sprintf(`PRAGMA index_list(%q)`, tb), func(c []sql.NullString) {
			// seq, name, unique, origin, partial
			out = append(out, fmt.Sprintf("index %s %s unique=%s origin=%s", tb, c[1].String, c[2].String, c[3].String))
		})
	}
	q(`SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger'`, func(c []sql.NullString) {
		out = append(out, "trigger "+c[0].String+" on "+c[1].String)
	})
	// Deferrability is not in the pragmas: read it from the DDL.
	q(`SELECT name, sql FROM sqlite_master WHERE type = 'table'`, func(c []sql.NullString) {
		out = append(out, fmt.Sprintf("deferrable %s %d", c[0].String, strings.Count(strings.ToUpper(c[1].String), "DEFERRABLE INITIALLY DEFERRED")))
	})
	sort.Strings(out)
	return out
}

func TestSchemaMatchesUpstream(t *testing.T) {
	needShared(t)
	db, _ := newDB(t)
	got := schemaShape(t, db.sql)
	want := schemaShape(t, openRef(t, filepath.Join(referenceDir, "etcd.replaces.db")))
	onlyGot, onlyWant := diffRows(got, want)
	for _, r := range onlyGot {
		t.Errorf("only ours: %s", r)
	}
	for _, r := range onlyWant {
		t.Errorf("only upstream: %s", r)
	}
	var v int
	var n int
	if err := db.sql.QueryRow(`SELECT version, (SELECT COUNT(*) FROM schema_migrations) FROM schema_migrations`).Scan(&v, &n); err != nil || v != 13 || n != 1 {
		t.Errorf("schema_migrations: version %d, %d rows, %v", v, n, err)
	}
	var fk int
	if err := db.sql.QueryRow(`PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 1 {
		t.Errorf("foreign keys %d, %v; want on", fk, err)
	}
}

func TestCreateRefusesExistingAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "index.db")
	db, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Create(path); !errors.Is(err, os.ErrExist) {
		t.Errorf("Create over an existing file: %v", err)
	}
	assertOnlyFiles(t, dir, "index.db")
}

// assertOnlyFiles fails when dir holds anything but names.
func assertOnlyFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	for _, e := range entries {
		if !want[e.Name()] {
			t.Errorf("unexpected file left in %s: %s", dir, e.Name())
		}
	}
}

func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := map[string]struct {
		path string
		want error
		msg  string
	}{
		"missing":   {filepath.Join(dir, "nope.db"), os.ErrNotExist, "no such file"},
		"directory": {dir, ErrNotIndex, "directory"},
		"empty":     {write("empty.db", nil), ErrNotIndex, "empty"},
		"text":      {write("text.db", []byte("hello, this is not sqlite\n")), ErrNotIndex, "not an SQLite database"},
	}
	// An SQLite database that is not an index.
	other := filepath.Join(dir, "other.db")
	odb, err := sql.Open("sqlite3", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := odb.Exec(`CREATE TABLE t(x)`); err != nil {
		t.Fatal(err)
	}
	odb.Close()
	cases["other sqlite"] = struct {
		path string
		want error
		msg  string
	}{other, ErrNotIndex, "without the schema_migrations table"}

	for name, c := range cases {
		_, err := Open(c.path)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: Open = %v; want %v mentioning %q", name, err, c.want, c.msg)
		}
	}
	// Open never creates a file.
	if _, err := os.Stat(filepath.Join(dir, "nope.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open created a file")
	}
}

// Decision (docs/compatibility.md): databases below schema 13 are refused,
// not migrated, and left untouched.
func TestOpenRefusesOldAndNewerSchemas(t *testing.T) {
	for _, v := range []int{0, 5, 12, 14} {
		dir := t.TempDir()
		path := filepath.Join(dir, "index.db")
		db, err := Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.sql.Exec(`UPDATE schema_migrations SET version = ?`, v); err != nil {
			t.Fatal(err)
		}
		db.Close()
		before, _ := os.ReadFile(path)
		_, err = Open(path)
		if !errors.Is(err, ErrSchemaVersion) || !strings.Contains(err.Error(), fmt.Sprintf("schema version %d", v)) {
			t.Errorf("version %d: Open = %v", v, err)
		}
		if v < 13 && !strings.Contains(err.Error(), "does not migrate") {
			t.Errorf("version %d: message does not say what to do: %v", v, err)
		}
		after, _ := os.ReadFile(path)
		if string(before) != string(after) {
			t.Errorf("version %d: Open changed the file", v)
		}
		assertOnlyFiles(t, dir, "index.db")
	}
}

func TestOpenReadOnly(t *testing.T) {
	_, path := newDB(t)
	db, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Add(t.Context(), nil, AddOptions{}); err == nil {
		t.Error("Add on a read-only database succeeded")
	}
	if _, err := db.PackageNames(t.Context()); err != nil {
		t.Error(err)
	}
}

// A scratch database (a temporary build, a serve cache checked before
// use) is written without sqlite's fsyncs; any other keeps them.
func TestScratchSkipsSync(t *testing.T) {
	for _, tc := range []struct {
		scratch bool
		off     bool // PRAGMA synchronous is 0 (OFF)
	}{{false, false}, {true, true}} {
		path := filepath.Join(t.TempDir(), "index.db")
		db, err := CreateWith(path, OpenOptions{Scratch: tc.scratch})
		if err != nil {
			t.Fatal(err)
		}
		var got int
		if err := db.sql.QueryRow(`PRAGMA synchronous`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if (got == 0) != tc.off {
			t.Errorf("scratch=%t: synchronous=%d", tc.scratch, got)
		}
	}
}
