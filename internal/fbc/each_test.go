package fbc

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// TestLoadEachIsLoad: the parts LoadEach hands out, merged, are the catalog
// Load reads (positions from the root included); a bad file is named from
// the root; a root .indexignore makes one part.
func TestLoadEachIsLoad(t *testing.T) {
	fsys := fstest.MapFS{
		"top.json":            {Data: []byte(`{"schema":"olm.package","name":"top","defaultChannel":"s"}`)},
		"README.md":           {Data: []byte("not a catalog")},
		"a/catalog.json":      {Data: []byte("{\"schema\":\"olm.package\",\"name\":\"a\",\"defaultChannel\":\"s\"}\n{\"schema\":\"olm.channel\",\"name\":\"s\",\"package\":\"a\",\"entries\":[{\"name\":\"a.v1\"}]}")},
		"a/more/bundles.yaml": {Data: []byte("schema: olm.bundle\nname: a.v1\npackage: a\nimage: r/a:1\n---\nschema: example.com/x\npackage: a\nname: n\n")},
		"b/catalog.json":      {Data: []byte(`{"schema":"olm.package","name":"b","defaultChannel":"s"}`)},
		"b/.indexignore":      {Data: []byte("skip.json\n")},
		"b/skip.json":         {Data: []byte(`{not json`)},
		"c/notes.txt":         {Data: []byte("ignored")},
	}
	whole, err := Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	merged := &Catalog{}
	parts := 0
	if err := LoadEach(fsys, func(c *Catalog) error {
		parts++
		merged.Merge(c)
		merged.Ignored = append(merged.Ignored, c.Ignored...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if parts != 4 {
		t.Errorf("%d parts, want the root's files and a, b, c", parts)
	}
	var w, m bytes.Buffer
	if err := Write(&w, whole, FormatJSON); err != nil {
		t.Fatal(err)
	}
	if err := Write(&m, merged, FormatJSON); err != nil {
		t.Fatal(err)
	}
	if w.String() != m.String() {
		t.Errorf("parts merged differ from the whole:\n%s\n---\n%s", m.String(), w.String())
	}
	if merged.Bundles[0].Pos != whole.Bundles[0].Pos || merged.Bundles[0].Pos.File != "a/more/bundles.yaml" {
		t.Errorf("position %+v, Load's %+v", merged.Bundles[0].Pos, whole.Bundles[0].Pos)
	}
	if strings.Join(merged.Ignored, ",") != "README.md,c/notes.txt" {
		t.Errorf("ignored %v", merged.Ignored)
	}

	fsys["a/broken.json"] = &fstest.MapFile{Data: []byte("{\"schema\":\"olm.bundle\",\n\"name\": 3}")}
	err = LoadEach(fsys, func(*Catalog) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "a/broken.json:1") {
		t.Errorf("broken file: %v", err)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, IgnoreFile), []byte("a/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "x.json"), []byte("{broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	parts = 0
	if err := LoadEach(os.DirFS(dir), func(*Catalog) error { parts++; return nil }); err != nil || parts != 1 {
		t.Errorf("root .indexignore: %d parts, %v", parts, err)
	}
}
