package fbc

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/index"
)

// roundTripDir converts the catalog directory dir to sqlite and renders it
// back, returning both as written by Write (JSON).
func roundTripDir(t *testing.T, dir string) (before, after []byte) {
	t.Helper()
	c, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "index.db")
	if err := ToIndex(context.Background(), c, db, ToIndexOptions{}); err != nil {
		t.Fatal(err)
	}
	back, _ := renderDB(t, db, RenderOptions{})
	return writeJSON(t, c), writeJSON(t, back)
}

// TestRoundTripFixturesKeepChannels: catalogs whose entries replace and
// skip bundles of other channels, and whose channels give one bundle
// different skipRanges, come back from sqlite blob for blob: no entry is
// invented for an edge's target, no skipRange moves between channels.
func TestRoundTripFixturesKeepChannels(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "..", "testdata", "serve-fbc", "*"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		n++
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			before, after := roundTripDir(t, dir)
			if !bytes.Equal(before, after) {
				t.Errorf("catalog → sqlite → catalog changed the catalog: %s", firstDiff(after, before))
			}
		})
	}
	if n == 0 {
		t.Fatal("no fixture catalogs under testdata/serve-fbc")
	}
}

// TestRoundTripReferenceRenders: upstream's render of every reference
// database, converted to sqlite and rendered back, is the same catalog.
func TestRoundTripReferenceRenders(t *testing.T) {
	renders, err := filepath.Glob(filepath.Join(sharedDir(t), "reference", "index", "*.fbc.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(renders) == 0 {
		t.Fatal("no reference renders")
	}
	for _, render := range renders {
		t.Run(strings.TrimSuffix(filepath.Base(render), ".fbc.json"), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(render)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "catalog.json"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			before, after := roundTripDir(t, dir)
			if !bytes.Equal(before, after) {
				t.Errorf("catalog → sqlite → catalog changed the catalog: %s", firstDiff(after, before))
			}
		})
	}
}

// TestEntryNotesOnlyWhenNeeded: a catalog whose channels need no note
// (each entry's edges within its channel, one skipRange per bundle) gets
// no table of notes; one that needs them gets a note per edge target
// outside the channel and per skipRange that is not the bundle's.
func TestEntryNotesOnlyWhenNeeded(t *testing.T) {
	c := smallCatalog()
	db := filepath.Join(t.TempDir(), "plain.db")
	if err := ToIndex(context.Background(), c, db, ToIndexOptions{}); err != nil {
		t.Fatal(err)
	}
	if has := tableExists(t, db, "opm_channel_entry_note"); has {
		t.Error("a catalog without cross-channel edges got a table of entry notes")
	}
	cross, err := LoadDir(filepath.Join("..", "..", "testdata", "serve-fbc", "crosschannel"))
	if err != nil {
		t.Fatal(err)
	}
	db = filepath.Join(t.TempDir(), "cross.db")
	if err := ToIndex(context.Background(), cross, db, ToIndexOptions{}); err != nil {
		t.Fatal(err)
	}
	got := queryStrings(t, db, `SELECT package_name || ' ' || channel_name || ' ' || operatorbundle_name || ' ' || edge_only || ' ' || IFNULL(skiprange, 'NULL') FROM opm_channel_entry_note ORDER BY 1`)
	want := []string{
		"alpha candidate alpha.v1.2.0 1 NULL",
		"alpha fast alpha.v1.1.0 1 NULL",
		"alpha fast alpha.v1.2.0 1 NULL",
		"alpha fast alpha.v2.0.0 0 >=1.0.0 <2.0.0",
		"beta beta-preview beta.v0.1.0 1 NULL",
		"beta beta-preview beta.v0.3.0 0 ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func tableExists(t *testing.T, path, table string) bool {
	t.Helper()
	return len(queryStrings(t, path, `SELECT name FROM sqlite_master WHERE type = 'table' AND name = '`+table+`'`)) > 0
}

func queryStrings(t *testing.T, path, q string) []string {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRemovePackageDropsEntryNotes: index rm of a package takes its entry
// notes with it; the other packages keep theirs.
func TestRemovePackageDropsEntryNotes(t *testing.T) {
	cross, err := LoadDir(filepath.Join("..", "..", "testdata", "serve-fbc", "crosschannel"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cross.db")
	if err := ToIndex(context.Background(), cross, path, ToIndexOptions{}); err != nil {
		t.Fatal(err)
	}
	db, err := index.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.RemovePackages(context.Background(), []string{"alpha"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	got := queryStrings(t, path, `SELECT DISTINCT package_name FROM opm_channel_entry_note`)
	if strings.Join(got, ",") != "beta" {
		t.Errorf("packages with notes after removing alpha: %v, want [beta]", got)
	}
}
