package index

import (
	"context"
	"path/filepath"
	"testing"
)

// TestImportKeepsMetasAndRemoveDropsThem: blobs imported with a package are
// read back in order; removing the package removes its blobs and keeps
// those of no package; a database without blobs has no table of opm's.
func TestImportKeepsMetasAndRemoveDropsThem(t *testing.T) {
	ctx := context.Background()
	db, err := Create(filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if ok, err := hasMetaTable(ctx, db.sql); err != nil || ok {
		t.Fatalf("a new database has opm's table: %v %v", ok, err)
	}
	dep := Meta{Schema: "olm.deprecations", Package: "op", Blob: []byte(`{"schema":"olm.deprecations","package":"op","entries":[]}`)}
	note := Meta{Schema: "example.com.notes", Package: "op", Name: "n", Blob: []byte(`{"schema":"example.com.notes","package":"op","name":"n"}`)}
	free := Meta{Schema: "example.com.owners", Blob: []byte(`{"schema":"example.com.owners"}`)}
	b := &BundleContent{Name: "op.v1.0.0", Package: "op", Version: "1.0.0", BundlePath: "example.com/op:1",
		Properties: []TypedValue{{Type: "olm.package", Value: []byte(`{"packageName":"op","version":"1.0.0"}`)}}}
	err = db.Import(ctx, []ImportPackage{
		{Name: "", Metas: []Meta{free}},
		{Name: "op", DefaultChannel: "stable", Bundles: []*BundleContent{b},
			Channels: []ImportChannel{{Name: "stable", Entries: []ImportEntry{{Bundle: "op.v1.0.0"}}}}, Metas: []Meta{dep, note}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.Metas(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Schema != free.Schema || got[1].Schema != dep.Schema || got[2].Name != "n" || string(got[2].Blob) != string(note.Blob) {
		t.Fatalf("metas: %+v", got)
	}
	if _, err := db.RemovePackages(ctx, []string{"op"}); err != nil {
		t.Fatal(err)
	}
	got, err = db.Metas(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Schema != free.Schema {
		t.Errorf("after removing op: %+v", got)
	}
}
