package bundle

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/opmkit/opm/internal/image/layerfs"
	"github.com/opmkit/opm/internal/image/layerfs/tartest"
)

// copyBundle copies the valid test bundle into a new directory.
func copyBundle(t *testing.T) string {
	t.Helper()
	src := "../../testdata/bundles/valid"
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// Attack 5: a 400 MiB YAML in a bundle directory is refused by its size,
// without being read.
func TestLoadRefusesHugeFileUnread(t *testing.T) {
	dir := copyBundle(t)
	huge := filepath.Join(dir, "manifests", "huge.yaml")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: 400 MiB long, no disk used.
	if err := f.Truncate(400 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b, err := LoadDir(dir)
	var tl *FileTooLargeError
	if !errors.As(err, &tl) || tl.File != "manifests/huge.yaml" || tl.Size != 400<<20 {
		t.Fatalf("load: %v; want a FileTooLargeError for manifests/huge.yaml", err)
	}
	if !strings.Contains(err.Error(), "64 MiB") {
		t.Errorf("message does not give the limit: %v", err)
	}
	// The rest of the bundle still loads, so a validator reports everything.
	if b == nil || b.CSV == nil {
		t.Fatal("the bundle's CSV was not loaded next to the refused file")
	}
	var after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	if grew := (after.Maxrss - before.Maxrss) * 1024; grew > 64<<20 {
		t.Errorf("peak RSS grew by %d bytes while refusing the file", grew)
	}
}

// Attack 2: a hole-only GNU sparse manifests/*.yaml in an image layer.
func TestLoadRefusesSparseManifestFromLayer(t *testing.T) {
	var layer bytes.Buffer
	fsys := layerfs.New(layerfs.Limits{TempDir: t.TempDir()})
	defer fsys.Close()
	valid, err := os.ReadFile("../../testdata/bundles/valid/manifests/example-operator.clusterserviceversion.yaml")
	if err != nil {
		t.Fatal(err)
	}
	layer.Write(tartest.SparseLayer("manifests/holes.yaml", 1, 70<<20))
	if err := fsys.ApplyLayer(context.Background(), &layer, "sha256:sparse"); err != nil {
		t.Fatal(err)
	}
	csv := tartest.Make(t, tartest.Entry{Name: "manifests/csv.yaml", Body: string(valid)})
	if err := fsys.ApplyLayer(context.Background(), bytes.NewReader(csv), "sha256:csv"); err != nil {
		t.Fatal(err)
	}
	_, err = Load(fsys)
	var tl *FileTooLargeError
	if !errors.As(err, &tl) || tl.File != "manifests/holes.yaml" {
		t.Fatalf("load: %v; want a FileTooLargeError for manifests/holes.yaml", err)
	}
}

func TestLoadDirRefusesLinksOut(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.yaml")
	if err := os.WriteFile(secret, []byte("kind: Secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := copyBundle(t)
	if err := os.Symlink(secret, filepath.Join(dir, "manifests", "linked.yaml")); err != nil {
		t.Fatal(err)
	}
	// A link that stays inside is fine.
	if err := os.Symlink("widgets.example.com.crd.yaml", filepath.Join(dir, "manifests", "alias.yaml")); err != nil {
		t.Fatal(err)
	}
	b, err := LoadDir(dir)
	var sl *SymlinkError
	if !errors.As(err, &sl) || sl.File != "manifests/linked.yaml" || sl.Target != secret {
		t.Fatalf("load: %v; want a SymlinkError for manifests/linked.yaml → %s", err, secret)
	}
	if b == nil || b.CSV == nil {
		t.Fatal("the rest of the bundle was not loaded")
	}
	for _, f := range b.Files {
		if f.Name == "manifests/linked.yaml" {
			t.Error("the link out was read")
		}
	}
	found := false
	for _, f := range b.Files {
		found = found || f.Name == "manifests/alias.yaml"
	}
	if !found {
		t.Error("a link inside the bundle was not followed")
	}

	b, err = LoadDirWith(dir, LoadOptions{FollowSymlinks: true})
	if errors.As(err, &sl) {
		t.Fatalf("FollowSymlinks: %v", err)
	}
	found = false
	for _, f := range b.Files {
		found = found || f.Name == "manifests/linked.yaml"
	}
	if !found {
		t.Error("FollowSymlinks did not read the link out")
	}
}

func TestLoadDirRefusesManifestsDirLinkedOut(t *testing.T) {
	src := copyBundle(t)
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(src, "manifests"), filepath.Join(dir, "manifests")); err != nil {
		t.Fatal(err)
	}
	_, err := LoadDir(dir)
	var sl *SymlinkError
	if !errors.As(err, &sl) || sl.File != "manifests" {
		t.Fatalf("load: %v; want a SymlinkError for manifests", err)
	}
}
