package indeximage

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// TestCatalogLayer: a layer with the database and a catalog directory is
// deterministic, holds the catalog under an opaque directory, and the
// whiteouts asked for.
func TestCatalogLayer(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "index.db")
	if err := os.WriteFile(db, []byte("sqlite bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "configs")
	for _, p := range []string{"b/catalog.json", "a/catalog.json"} {
		if err := os.MkdirAll(filepath.Join(cfg, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cfg, p), []byte(`{"schema":"olm.package","name":"`+filepath.Dir(p)+`"}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	spec := layerSpec{db: db, dbPath: "database/index.db", configs: cfg, cfgPath: "configs", whiteouts: []string{"old/thing"}}
	a, err := buildLayer(spec, filepath.Join(dir, "a.tar.gz"), Gzip, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := buildLayer(spec, filepath.Join(dir, "b.tar.gz"), Gzip, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.digest != b.digest || a.diffID != b.diffID {
		t.Fatal("the same content gave two digests")
	}
	rc, err := a.Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	zr, err := gzip.NewReader(rc)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
	}
	want := []string{"old/", "old/.wh.thing", "database/", "database/index.db", "configs/", "configs/.wh..wh..opq",
		"configs/a/", "configs/a/catalog.json", "configs/b/", "configs/b/catalog.json"}
	if len(names) != len(want) {
		t.Fatalf("entries %q, want %q", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("entries %q, want %q", names, want)
		}
	}
	// What the builder recognises as its own when replacing a top layer.
	bl := &Builder{dbPath: "database/index.db", cfgPath: "configs"}
	for _, n := range names[2:] {
		p := n
		if p[len(p)-1] == '/' {
			p = p[:len(p)-1]
		}
		typ := byte(tar.TypeReg)
		if n[len(n)-1] == '/' {
			typ = tar.TypeDir
		}
		if !bl.catalogEntry(p, typ) {
			t.Errorf("%s is not recognised as a catalog entry", n)
		}
	}
	if bl.catalogEntry("bin/opm", tar.TypeReg) || bl.catalogEntry("database/other.db", tar.TypeReg) {
		t.Error("other files are taken for catalog entries")
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"sqlite", "fbc", "both"} {
		if f, err := ParseFormat(s); err != nil || string(f) != s {
			t.Errorf("%s: %v %v", s, f, err)
		}
	}
	if _, err := ParseFormat("json"); err == nil {
		t.Error("json: want an error")
	}
	if !FormatBoth.HasDatabase() || !FormatBoth.HasConfigs() || FormatFBC.HasDatabase() || FormatSQLite.HasConfigs() || Format("").HasDatabase() {
		t.Error("Has* disagree with the formats")
	}
}
