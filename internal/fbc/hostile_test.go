package fbc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readers are every way a catalog directory is read, each returning the
// errors it found: the whole catalog (render of several sources, the
// templates), part by part (render, migrate), scanned then a package at a
// time (validate, serve's conversion) and blob by blob (serve --http).
var readers = map[string]func(dir string, lim Limits) error{
	"LoadDirWith": func(dir string, lim Limits) error {
		_, err := LoadDirWith(dir, LoadOptions{Limits: lim})
		return err
	},
	"LoadEachWith": func(dir string, lim Limits) error {
		return LoadEachWith(os.DirFS(dir), LoadOptions{Limits: lim}, func(*Catalog) error { return nil })
	},
	"ScanDir": func(dir string, lim Limits) error {
		s, err := ScanDir(dir, LoadOptions{Limits: lim})
		if err != nil {
			return err
		}
		defer s.Close()
		if err := s.Each(context.Background(), func(string, *Catalog) error { return nil }); err != nil {
			return err
		}
		return s.Err()
	},
}

// walkBlobs is WalkBlobs as a reader: it takes the default limits only.
func walkBlobs(dir string) error {
	return WalkBlobs(os.DirFS(dir), func(string, int, json.RawMessage) error { return nil })
}

// tinyBlobCatalog writes files directories of one catalog.json each, with
// perFile tiny blobs, all of one package.
func tinyBlobCatalog(t testing.TB, files, perFile int) string {
	t.Helper()
	return blobCatalog(t, files, perFile, `{"schema":"x","package":"p"}`)
}

// blobCatalog is tinyBlobCatalog of blob.
func blobCatalog(t testing.TB, files, perFile int, blob string) string {
	t.Helper()
	dir := t.TempDir()
	blobs := strings.Repeat(blob+"\n", perFile)
	for i := range files {
		sub := filepath.Join(dir, fmt.Sprintf("f%03d", i))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, "catalog.json"), []byte(blobs), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// onlyLoadError is the one *LoadError of err: a catalog past --max-blobs
// is one finding, however many files come after the one that passed it.
func onlyLoadError(t *testing.T, err error) *LoadError {
	t.Helper()
	errs := LoadErrors(err)
	if len(errs) != 1 {
		t.Fatalf("want one finding, got %d: %v", len(errs), err)
	}
	var le *LoadError
	if !errors.As(errs[0], &le) {
		t.Fatalf("want a *LoadError, got %v", errs[0])
	}
	return le
}

// TestEveryReaderBoundsBlobsPerCatalog: many files each well under the
// file limit hold, together, more blobs than --max-blobs; every reader
// refuses the catalog with one finding at the file and line of the blob
// past the limit (which file depends on the order files were read in),
// and a catalog of exactly the limit passes.
func TestEveryReaderBoundsBlobsPerCatalog(t *testing.T) {
	t.Parallel()
	dir := tinyBlobCatalog(t, 40, 100) // 4,000 blobs in 40 files
	for name, read := range readers {
		le := onlyLoadError(t, read(dir, Limits{MaxBlobs: 3999}))
		if !strings.HasSuffix(le.File, "/catalog.json") || le.Line < 1 || le.Line > 100 {
			t.Errorf("%s: finding at %s:%d, want a catalog.json line 1-100", name, le.File, le.Line)
		}
		for _, w := range []string{"3,999 blobs", "all its files together", "--max-blobs", "raise the limit"} {
			if !strings.Contains(le.Msg, w) {
				t.Errorf("%s: message lacks %q: %v", name, w, le)
			}
		}
		if err := read(dir, Limits{MaxBlobs: 4000}); err != nil {
			t.Errorf("%s: a catalog of exactly --max-blobs blobs: %v", name, err)
		}
		if err := read(dir, Limits{MaxBlobs: -1}); err != nil {
			t.Errorf("%s: no limit: %v", name, err)
		}
	}
}

// TestDefaultBlobBound: under the default limits, one blob past
// DefaultMaxBlobs (each file far under --max-file-size) is refused, by
// serve --http's reader too (it takes the defaults only); opm read such
// catalogs whole, at 2-2.5 GB for 5 million blobs. (Every reader applies
// the limit given: TestEveryReaderBoundsBlobsPerCatalog.)
func TestDefaultBlobBound(t *testing.T) {
	t.Parallel()
	const files = 50
	dir := tinyBlobCatalog(t, files, int(DefaultMaxBlobs)/files)
	// One more, in a file of its own, read last.
	if err := os.WriteFile(filepath.Join(dir, "zz.yaml"), []byte("# one more\nschema: x\npackage: p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if le := onlyLoadError(t, readers["LoadDirWith"](dir, Limits{})); !strings.Contains(le.Msg, "250,000 blobs") {
		t.Errorf("LoadDirWith: %v", le)
	}
	var le *LoadError
	if err := walkBlobs(dir); !errors.As(err, &le) || le.File != "zz.yaml" || le.Line != 1 || !strings.Contains(le.Msg, "--max-blobs") {
		t.Errorf("WalkBlobs (files one at a time, in order): %v", err)
	}
}

// nested is a JSON value of depth lists one inside the other.
func nested(depth int) string {
	return strings.Repeat("[", depth) + strings.Repeat("]", depth)
}

// deepCatalog writes a catalog whose bundle blob, on line 3 of
// p/catalog.json, holds a property nested value deep (the blob itself
// adds 3: the blob, its properties and the property).
func deepCatalog(t testing.TB, value int) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	data := `{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"p","entries":[{"name":"p.v1"}]}
{"schema":"olm.bundle","name":"p.v1","package":"p","image":"example.com/p:1","properties":[{"type":"example.com/deep","value":` + nested(value) + `}]}
`
	if err := os.WriteFile(filepath.Join(dir, "p", "catalog.json"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestEveryReaderBoundsNesting: one 20 KB blob nested 9,990 deep (which
// render turned into 399 MB of indented output at 1.1 GB of memory) is a
// finding at its line before it is decoded, in every reader; a blob of
// exactly --max-depth passes; 0 (no limit) leaves encoding/json's own
// bound of 10,000.
func TestEveryReaderBoundsNesting(t *testing.T) {
	t.Parallel()
	deep := deepCatalog(t, 9987)
	for name, read := range readers {
		var err error
		alloc := allocated(func() { err = read(deep, Limits{}) })
		le := onlyLoadError(t, err)
		if le.File != "p/catalog.json" || le.Line != 3 || !strings.Contains(le.Msg, "nested more than 100 deep (--max-depth)") {
			t.Errorf("%s: %v", name, le)
		}
		if alloc > 8<<20 {
			t.Errorf("%s: refusing a 20 KB blob allocated %d MiB", name, alloc>>20)
		}
		if err := read(deepCatalog(t, 97), Limits{}); err != nil {
			t.Errorf("%s: a blob exactly 100 deep: %v", name, err)
		}
		if le := onlyLoadError(t, read(deepCatalog(t, 98), Limits{})); !strings.Contains(le.Msg, "more than 100 deep") {
			t.Errorf("%s: a blob 101 deep: %v", name, le)
		}
		if err := read(deepCatalog(t, 500), Limits{MaxDepth: -1}); err != nil {
			t.Errorf("%s: no limit: %v", name, err)
		}
	}
	var le *LoadError
	if err := walkBlobs(deep); !errors.As(err, &le) || le.Line != 3 || !strings.Contains(le.Msg, "--max-depth") {
		t.Errorf("WalkBlobs: %v", err)
	}
}

// TestNestingFoundAtItsLine: where the file is read by encoding/json (a
// value that is not an object sends it off the fast path), the finding
// names the line where the nesting passes the limit and the blob's.
func TestNestingFoundAtItsLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := "[1]\n{\"schema\":\"x\",\n\"value\":\n" + strings.Repeat("[\n", 120) + strings.Repeat("]", 120) + "}\n"
	if err := os.WriteFile(filepath.Join(dir, "c.json"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadDir(dir)
	var le *LoadError
	for _, e := range LoadErrors(err) {
		if errors.As(e, &le) && strings.Contains(le.Msg, "deep") {
			break
		}
		le = nil
	}
	// The blob is 1 deep and its value starts on line 4, one list a
	// line: the 101st level opens on line 103.
	if le == nil || le.Line != 103 || !strings.Contains(le.Msg, "in the blob starting at line 2") {
		t.Fatalf("got %v", err)
	}
}

// TestYAMLNestingBounded: YAML documents nest by indentation as well as
// by brackets; both are measured on the document as read, at its line.
func TestYAMLNestingBounded(t *testing.T) {
	t.Parallel()
	var block strings.Builder
	block.WriteString("schema: x\nvalue:\n")
	for i := range 120 {
		block.WriteString(strings.Repeat("  ", i+1) + "k:\n")
	}
	block.WriteString(strings.Repeat("  ", 121) + "v\n")
	for name, doc := range map[string]string{
		"flow":  "schema: x\nvalue: " + nested(150) + "\n",
		"block": block.String(),
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte("schema: olm.package\nname: p\n---\n"+doc), 0o644); err != nil {
			t.Fatal(err)
		}
		for rn, read := range readers {
			le := onlyLoadError(t, read(dir, Limits{}))
			if le.File != "c.yaml" || le.Line != 4 || !strings.Contains(le.Msg, "--max-depth") {
				t.Errorf("%s, %s: %v", name, rn, le)
			}
		}
	}
}

// TestCutCatalogStopsAtTheBound: past --max-blobs, validate reports the
// bound alone (not findings about the part read, such as blobs of a
// package whose olm.package blob was never reached), and the conversion
// serve runs stops before converting anything.
func TestCutCatalogStopsAtTheBound(t *testing.T) {
	t.Parallel()
	// Bundles of a package with no olm.package blob, in no channel: each
	// is a finding when checked.
	dir := blobCatalog(t, 40, 100, `{"schema":"olm.bundle","package":"p","name":"b","image":"i"}`)
	lim := LoadOptions{Limits: Limits{MaxBlobs: 1000}}
	found, err := ValidateDir(context.Background(), dir, false, lim)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || !strings.Contains(found[0].Message, "--max-blobs") || found[0].Line < 1 {
		t.Errorf("want the one --max-blobs finding, got %d findings", len(found))
	}
	if uncut, _ := ValidateDir(context.Background(), dir, false, LoadOptions{}); len(uncut) < 2 {
		t.Errorf("the whole catalog: %d findings", len(uncut))
	}
	db := filepath.Join(t.TempDir(), "index.db")
	_, err = DirToIndex(context.Background(), dir, db, ToIndexOptions{}, lim)
	var le *CatalogLoadError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "--max-blobs") {
		t.Errorf("DirToIndex: %v", err)
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("DirToIndex left %s: %v", db, err)
	}
}
