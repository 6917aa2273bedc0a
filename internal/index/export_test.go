package index

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/bundle"
)

func TestExportAppregistry(t *testing.T) {
	needShared(t)
	db, _ := newDB(t)
	if _, err := db.Add(context.Background(), corpusBundles(t, "etcd"), AddOptions{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "downloaded")
	res, err := db.Export(context.Background(), out, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Bundles != 6 {
		t.Errorf("exported %d bundles", res.Bundles)
	}
	pkgYAML := fileBytes(t, filepath.Join(out, "etcd", "package.yaml"))
	for _, s := range []string{"packageName: etcd", "defaultChannel: singlenamespace-alpha", "currentCSV: etcdoperator.v0.9.4", "name: clusterwide-alpha"} {
		if !strings.Contains(pkgYAML, s) {
			t.Errorf("package.yaml lacks %q:\n%s", s, pkgYAML)
		}
	}
	// Every exported bundle directory loads back as a bundle with the same
	// objects.
	for _, v := range []string{"0.6.1", "0.9.0", "0.9.2", "0.9.2-clusterwide", "0.9.4", "0.9.4-clusterwide"} {
		dir := filepath.Join(out, "etcd", v)
		tmp := t.TempDir()
		if err := os.CopyFS(filepath.Join(tmp, "manifests"), os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
		b, err := bundle.LoadDir(tmp)
		if b == nil || b.CSV == nil || b.CSV.Spec.Version != v {
			t.Fatalf("%s: %v", v, err)
		}
		orig, _ := bundle.LoadDir(filepath.Join(corpusDir, "etcd", v))
		if len(b.Objects) != len(orig.Objects) || len(b.CRDs) != len(orig.CRDs) {
			t.Errorf("%s: %d objects / %d CRDs, want %d / %d", v, len(b.Objects), len(b.CRDs), len(orig.Objects), len(orig.CRDs))
		}
	}
	// Exporting again over the same folder is refused.
	if _, err := db.Export(context.Background(), out, ExportOptions{}); err == nil {
		t.Error("export over an existing package directory succeeded")
	}
}

func TestExportReferenceOnlyBundles(t *testing.T) {
	needShared(t)
	// Upstream semver databases keep manifests of channel heads only.
	path := filepath.Join(t.TempDir(), "index.db")
	copyFile(t, filepath.Join(referenceDir, "etcd.semver.db"), path)
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := filepath.Join(t.TempDir(), "out")
	_, err = db.Export(context.Background(), out, ExportOptions{})
	if !errors.Is(err, ErrNeedsPull) || !strings.Contains(err.Error(), "127.0.0.1:5077/etcd-bundle:0.9.0") {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Error("a failed export wrote output")
	}
	// With a Fetch hook the references are pulled.
	var pulled []string
	res, err := db.Export(context.Background(), out, ExportOptions{Fetch: func(ctx context.Context, ref string) (*bundle.Bundle, error) {
		pulled = append(pulled, ref)
		v := ref[strings.LastIndex(ref, ":")+1:]
		return bundle.LoadDir(filepath.Join(corpusDir, "etcd", v))
	}, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Fetched != 3 || len(pulled) != 3 {
		t.Errorf("fetched %d (%v)", res.Fetched, pulled)
	}
	if _, err := os.Stat(filepath.Join(out, "etcd", "0.9.0", "etcdoperator.v0.9.0.clusterserviceversion.yaml")); err != nil {
		t.Error(err)
	}
}
