// Package templatetest helps tests of catalog templates: it makes bundle
// directories from testdata/bundles/valid at other versions and pushes
// them, and corpus bundles, to a registry as bundle images built by opm.
package templatetest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/image"
)

// ValidBundle is testdata/bundles/valid, absolute.
func ValidBundle() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "testdata", "bundles", "valid")
}

// Version is testdata/bundles/valid as bundle name at version (and
// release, when not ""), in a new directory under t's temporary
// directory. replaces, when not "", is the CSV's spec.replaces.
func Version(t testing.TB, name, version, release, replaces string) string {
	t.Helper()
	src := ValidBundle()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	csvPath := filepath.Join(dir, "manifests", "example-operator.clusterserviceversion.yaml")
	data, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(data), "  name: example-operator.v0.1.0\n", "  name: "+name+"\n", 1)
	extra := "  version: " + version + "\n"
	if release != "" {
		extra += "  release: \"" + release + "\"\n"
	}
	if replaces != "" {
		extra += "  replaces: " + replaces + "\n"
	}
	s = strings.Replace(s, "  version: 0.1.0\n", extra, 1)
	if err := os.WriteFile(csvPath, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Push builds the bundle image of dir with opm's builder and pushes it to
// ref (a plain-HTTP registry), returning ref.
func Push(t testing.TB, dir, ref string) string {
	t.Helper()
	b, err := bundle.LoadDir(dir)
	if err != nil {
		t.Fatalf("load bundle %s: %v", dir, err)
	}
	if b.Annotations == nil {
		t.Fatalf("bundle %s has no metadata/annotations.yaml", dir)
	}
	img, err := image.BuildBundleImage(os.DirFS(dir), b.Annotations.Values)
	if err != nil {
		t.Fatal(err)
	}
	c, err := image.NewClient(image.Options{UseHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := image.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(context.Background(), img, r); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	return ref
}
