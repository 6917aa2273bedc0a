package migrate_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/catalogtest"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/migrate"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/internal/shareddata"

	_ "github.com/mattn/go-sqlite3" // the sqlite driver
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
	r = o.Run("migrate", "../../../testdata/bundles/valid", filepath.Join(tmp, "y"))
	if r.Code == 0 || !strings.Contains(r.ErrOut, "is a bundle directory") {
		t.Errorf("to fbc from a bundle: exit %d: %s", r.Code, r.ErrOut)
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

// TestMigrateCatalogToCatalog: a file-based catalog (directory or image)
// migrates to a directory keeping its deprecations and blobs of other
// schemas; --migrate-level turns every bundle's manifests into one
// olm.csv.metadata.
func TestMigrateCatalogToCatalog(t *testing.T) {
	t.Parallel()
	ref := filepath.Join(sharedDir(t), "reference", "index")
	o := cmdtest.New(t)
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	if r := o.Run("migrate", filepath.Join(ref, "etcd.replaces.db"), src); r.Code != 0 {
		t.Fatalf("migrate: exit %d: %s", r.Code, r.ErrOut)
	}
	extra := `{"schema":"olm.deprecations","package":"etcd","entries":[{"reference":{"schema":"olm.bundle","name":"etcdoperator.v0.6.1"},"message":"old"}]}
{"schema":"example.com/notes","package":"etcd","name":"n1","note":"kept as is"}
`
	if err := os.WriteFile(filepath.Join(src, "etcd", "extra.json"), []byte(extra), 0o644); err != nil {
		t.Fatal(err)
	}
	want := o.Run("render", src)
	if want.Code != 0 {
		t.Fatalf("render: %s", want.ErrOut)
	}
	reg := registrytest.Start(t)
	catalogtest.PushCatalog(t, src, reg.Ref("etcd-fbc:1"))

	for i, from := range []string{src, reg.Ref("etcd-fbc:1")} {
		dst := filepath.Join(tmp, fmt.Sprint("dst", i))
		r := o.Run("migrate", from, dst, "--use-http")
		if r.Code != 0 {
			t.Fatalf("migrate %s: exit %d: %s", from, r.Code, r.ErrOut)
		}
		got := o.Run("render", dst)
		if got.Code != 0 || got.Out != want.Out {
			t.Fatalf("migrated %s renders differently (exit %d): %s", from, got.Code, got.ErrOut)
		}
		c, err := fbc.LoadDir(dst)
		if err != nil {
			t.Fatal(err)
		}
		var schemas []string
		for _, m := range c.Others {
			schemas = append(schemas, m.Schema)
			// Loaded blobs are compact, in canonical form.
			if m.Schema == "example.com/notes" && !strings.Contains(string(m.Blob), `"note":"kept as is"`) {
				t.Errorf("custom blob changed: %s", m.Blob)
			}
		}
		sort.Strings(schemas)
		if strings.Join(schemas, ",") != "example.com/notes,olm.deprecations" {
			t.Errorf("other blobs after migrate: %v", schemas)
		}
	}

	dst := filepath.Join(tmp, "csvmeta")
	if r := o.Run("migrate", src, dst, "--migrate-level", "bundle-object-to-csv-metadata"); r.Code != 0 {
		t.Fatalf("migrate --migrate-level: exit %d: %s", r.Code, r.ErrOut)
	}
	c, err := fbc.LoadDir(dst)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Bundles) == 0 || len(c.Others) != 2 {
		t.Fatalf("%d bundles, %d other blobs", len(c.Bundles), len(c.Others))
	}
	for _, b := range c.Bundles {
		n := 0
		for _, p := range b.Properties {
			switch p.Type {
			case fbc.PropertyBundleObject:
				t.Errorf("%s keeps olm.bundle.object", b.Name)
			case fbc.PropertyCSVMetadata:
				n++
				if !strings.Contains(string(p.Value), `"displayName":"etcd"`) {
					t.Errorf("%s: csv metadata %.200s", b.Name, p.Value)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s has %d olm.csv.metadata", b.Name, n)
		}
	}
}

// badIndex is a copy of a reference database in which two bundles carry a
// skipRange that is not a semver range, as real indexes do.
func badIndex(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(sharedDir(t), "reference", "index", "etcd.replaces.db"))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "index.db")
	if err := os.WriteFile(db, data, 0o644); err != nil {
		t.Fatal(err)
	}
	conn, err := sql.Open("sqlite3", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for name, sr := range map[string]string{"etcdoperator.v0.9.2": "<=v0.10.1", "etcdoperator.v0.9.4": ">=0.9.0 <<0.9.4"} {
		if _, err := conn.Exec(`UPDATE operatorbundle SET skiprange = ? WHERE name = ?`, sr, name); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// TestBadBundlesReportedAtOnce: render and migrate of an index with bad
// bundles refuse it, as upstream's render does, naming every bad bundle
// with its field and a fix in one report, and write nothing;
// --permissive writes the catalog and still reports every problem. The
// catalog written so is refused by migrate --to sqlite and opm serve with
// every problem listed, never only "does not validate".
func TestBadBundlesReportedAtOnce(t *testing.T) {
	t.Parallel()
	db := badIndex(t)
	o := cmdtest.New(t)
	names := func(out string) bool {
		return strings.Contains(out, "etcdoperator.v0.9.2") && strings.Contains(out, `"<=v0.10.1"`) &&
			strings.Contains(out, "etcdoperator.v0.9.4") && strings.Contains(out, `">=0.9.0 <<0.9.4"`) &&
			strings.Contains(out, "skipRange") && strings.Contains(out, "hint:")
	}
	r := o.Run("render", db)
	if r.Code != 1 || r.Out != "" || !names(r.ErrOut) || !strings.Contains(r.ErrOut, "--permissive") {
		t.Fatalf("render: exit %d, %d bytes out: %s", r.Code, len(r.Out), r.ErrOut)
	}
	r = o.Run("render", db, "--permissive")
	if r.Code != 0 || !strings.Contains(r.Out, `"skipRange": "<=v0.10.1"`) || !names(r.ErrOut) {
		t.Fatalf("render --permissive: exit %d: %s", r.Code, r.ErrOut)
	}

	dir := filepath.Join(t.TempDir(), "catalog")
	r = o.Run("migrate", db, dir)
	if r.Code != 1 || !names(r.ErrOut) {
		t.Fatalf("migrate: exit %d: %s", r.Code, r.ErrOut)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Fatal("a refused migrate wrote the catalog")
	}
	if r := o.Run("migrate", db, dir, "--permissive"); r.Code != 0 || !names(r.ErrOut) {
		t.Fatalf("migrate --permissive: exit %d: %s", r.Code, r.ErrOut)
	}

	out := filepath.Join(t.TempDir(), "index.db")
	r = o.Run("migrate", "--to", "sqlite", dir, out)
	if r.Code != 1 || !names(r.ErrOut) || !strings.Contains(r.ErrOut, "etcd/catalog.json:") {
		t.Fatalf("migrate --to sqlite: exit %d: %s", r.Code, r.ErrOut)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a refused migrate --to sqlite wrote the database")
	}
	r = o.Run("serve", dir, "--cache-dir", filepath.Join(t.TempDir(), "cache"), "--cache-only")
	if r.Code != 1 || !strings.Contains(r.ErrOut, "2 problems") || !strings.Contains(r.ErrOut, "etcdoperator.v0.9.2") || !strings.Contains(r.ErrOut, "etcdoperator.v0.9.4") || !strings.Contains(r.ErrOut, "fix:") {
		t.Fatalf("serve: exit %d: %s", r.Code, r.ErrOut)
	}
}

const tinyCatalog = `{"schema":"olm.package","name":"p","defaultChannel":"c"}
{"schema":"olm.channel","package":"p","name":"c","entries":[{"name":"p.v1"}]}
{"schema":"olm.bundle","package":"p","name":"p.v1","image":"example.com/p:v1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
`

// TestMigrateRefusesOverlap: a destination that holds the source (or is
// it) would be replaced with the source inside it under --force; one
// inside the source would become part of the catalog it was made from.
// Each is refused, through a symbolic link too, and nothing is touched.
func TestMigrateRefusesOverlap(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	tmp := t.TempDir()
	parent := filepath.Join(tmp, "p")
	src := filepath.Join(parent, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "catalog.json"), []byte(tinyCatalog), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(parent, "mine.txt"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(parent, filepath.Join(tmp, "link")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dest, want string }{
		{parent, "holds the source"},
		{filepath.Join(tmp, "link"), "holds the source"},
		{src, "holds the source"},
		{filepath.Join(src, "out"), "inside the source"},
		{filepath.Join(tmp, "link", "src", "out"), "inside the source"},
	} {
		for _, to := range []string{"fbc", "sqlite"} {
			r := o.Run("migrate", src, c.dest, "--force", "--to", to)
			if r.Code != 1 || !strings.Contains(r.ErrOut, c.want) {
				t.Errorf("migrate %s %s --to %s: exit %d, want %q: %s", src, c.dest, to, r.Code, c.want, r.ErrOut)
			}
		}
	}
	for _, f := range []string{filepath.Join(src, "catalog.json"), filepath.Join(parent, "mine.txt")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("a refused migrate removed %s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(src, "out")); err == nil {
		t.Error("a refused migrate wrote inside the source")
	}
	// Beside the source is fine.
	if r := o.Run("migrate", src, filepath.Join(parent, "out"), "--force"); r.Code != 0 {
		t.Fatalf("migrate beside the source: exit %d: %s", r.Code, r.ErrOut)
	}
}

// TestMigrateRefusesLinkedDest (issue 40, item 4): a DEST that is a
// symbolic link is refused, naming it, with or without --force: the
// catalog tree is moved into place over DEST, so the link would be
// replaced while the directory it leads to kept what it had. Neither the
// link nor where it leads changes.
func TestMigrateRefusesLinkedDest(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "catalog.json"), []byte(tinyCatalog), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, full := range []bool{false, true} {
		outside := t.TempDir()
		if full {
			if err := os.WriteFile(filepath.Join(outside, "mine.txt"), []byte("keep"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		link := filepath.Join(t.TempDir(), "dest")
		if err := os.Symlink(outside, link); err != nil {
			t.Fatal(err)
		}
		r := o.Run("migrate", src, link, "--force")
		if r.Code != 1 || !strings.Contains(r.ErrOut, link+": it is a symbolic link to "+outside) {
			t.Errorf("migrate to a link (to a directory with files: %v): exit %d: %s", full, r.Code, r.ErrOut)
		}
		if dest, err := os.Readlink(link); err != nil || dest != outside {
			t.Errorf("the link changed: %q, %v", dest, err)
		}
		entries, _ := os.ReadDir(outside)
		if want := map[bool]int{false: 0, true: 1}[full]; len(entries) != want {
			t.Errorf("the directory the link leads to holds %d entries, want %d", len(entries), want)
		}
	}
}
