// Package catalogtest holds catalog fixtures for tests: it pushes index
// images (a file-based catalog directory or a sqlite database, each in one
// layer with the label opm and OLM find it by, written through opm's own
// image client) and builds the hostile n² channel of issue 40.
package catalogtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/indeximage"
)

// PushCatalog writes dir as /configs of an FBC index image to ref (a plain
// HTTP registry such as registrytest's, or any transport opm writes).
func PushCatalog(t testing.TB, dir, ref string) {
	t.Helper()
	lb := image.NewLayerBuilder()
	if err := lb.AddFS("configs", os.DirFS(dir), "."); err != nil {
		t.Fatal(err)
	}
	push(t, lb, map[string]string{indeximage.ConfigsLabel: "/configs"}, ref)
}

// PushDatabase writes the database file db as /database/index.db of a
// sqlite index image to ref.
func PushDatabase(t testing.TB, db, ref string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Clean(db))
	if err != nil {
		t.Fatal(err)
	}
	lb := image.NewLayerBuilder()
	if err := lb.AddFile("database/index.db", data); err != nil {
		t.Fatal(err)
	}
	push(t, lb, map[string]string{indeximage.DatabaseLabel: "/database/index.db"}, ref)
}

func push(t testing.TB, lb *image.LayerBuilder, labels map[string]string, ref string) {
	t.Helper()
	l, err := lb.Layer()
	if err != nil {
		t.Fatal(err)
	}
	img, err := image.NewImage(image.ImageConfig{Labels: labels}, l)
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
}
