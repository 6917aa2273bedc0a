package migrate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/migrate"
	"github.com/opmkit/opm/internal/shareddata"
)

func sharedDir(t *testing.T) string {
	t.Helper()
	shareddata.Require(t, "reference", "index")
	return shareddata.Root()
}

// TestMigrateBothWays: DB → DIR/<package>/catalog.json as upstream wrote it;
// a second run refuses the non-empty directory and leaves it alone unless
// --force; DIR → sqlite builds a database that renders back the same.
func TestMigrateBothWays(t *testing.T) {
	t.Parallel()
	ref := filepath.Join(sharedDir(t), "reference", "index")
	want, err := os.ReadFile(filepath.Join(ref, "kubedb-installer.replaces.fbc.json"))
	if err != nil {
		t.Fatal(err)
	}
	o := cmdtest.New(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "catalog")
	src := filepath.Join(ref, "kubedb-installer.replaces.db")
	if r := o.Run("migrate", src, dir); r.Code != 0 {
		t.Fatalf("migrate: exit %d: %s", r.Code, r.ErrOut)
	}
	got, err := os.ReadFile(filepath.Join(dir, "kubedb-installer", "catalog.json"))
	if err != nil || string(got) != string(want) {
		t.Fatalf("catalog.json differs from upstream's render (%v)", err)
	}

	if err := os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := o.Run("migrate", src, dir, "-o", "yaml")
	if r.Code != 1 || !strings.Contains(r.ErrOut, "not empty") || !strings.Contains(r.ErrOut, "--force") {
		t.Fatalf("non-empty destination: exit %d: %s", r.Code, r.ErrOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "mine.txt")); err != nil {
		t.Fatal("a refused migrate changed the destination")
	}
	if r := o.Run("migrate", src, dir, "-o", "yaml", "--force"); r.Code != 0 {
		t.Fatalf("--force: exit %d: %s", r.Code, r.ErrOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "kubedb-installer", "catalog.yaml")); err != nil {
		t.Fatalf("-o yaml: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "mine.txt")); err == nil {
		t.Fatal("--force kept the old content")
	}

	db := filepath.Join(tmp, "index.db")
	if r := o.Run("migrate", "--to", "sqlite", dir, db); r.Code != 0 {
		t.Fatalf("--to sqlite: exit %d: %s", r.Code, r.ErrOut)
	}
	if r := o.Run("render", db); r.Code != 0 || r.Out != string(want) {
		t.Fatalf("render of the built database: exit %d, equal %v: %s", r.Code, r.Out == string(want), r.ErrOut)
	}
	r = o.Run("migrate", "--to", "sqlite", dir, db)
	if r.Code != 1 || !strings.Contains(r.ErrOut, "--force") {
		t.Fatalf("existing database: exit %d: %s", r.Code, r.ErrOut)
	}
	if r := o.Run("migrate", "--to", "sqlite", dir, db, "--force"); r.Code != 0 {
		t.Fatalf("--force: exit %d: %s", r.Code, r.ErrOut)
	}
	entries, _ := os.ReadDir(tmp)
	for _, e := range entries {
		if strings.Contains(e.Name(), "opm-tmp") {
			t.Errorf("left behind %s", e.Name())
		}
	}

	// Each direction takes only its kind of source.
	r = o.Run("migrate", "--to", "sqlite", src, filepath.Join(tmp, "x.db"))
	if r.Code == 0 || !strings.Contains(r.ErrOut, "is a sqlite database") {
		t.Errorf("--to sqlite from a database: exit %d: %s", r.Code, r.ErrOut)
	}
	r = o.Run("migrate", dir, filepath.Join(tmp, "y"))
	if r.Code == 0 || !strings.Contains(r.ErrOut, "is a file-based catalog directory") {
		t.Errorf("to fbc from a catalog: exit %d: %s", r.Code, r.ErrOut)
	}
	if r := o.Run("migrate", src, filepath.Join(tmp, "z"), "--to", "parquet"); r.Code != 2 {
		t.Errorf("--to parquet: exit %d: %s", r.Code, r.ErrOut)
	}
}

func TestMigrateFlags(t *testing.T) {
	opts, err := cmdtest.Parse(t, migrate.NewCmd, "a.db", "out", "-o", "yaml", "--force", "--to", "fbc")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Source != "a.db" || opts.Dest != "out" || opts.Output != "yaml" || !opts.Force || opts.To != "fbc" {
		t.Errorf("parsed %+v", opts)
	}
	if _, err := cmdtest.Parse(t, migrate.NewCmd, "a.db"); err == nil {
		t.Error("one argument: want an error")
	}
}
