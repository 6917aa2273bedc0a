package indeximage

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/index"
)

// buildIndexImage runs the whole new-index path (create, add, compact,
// write) into an OCI layout and returns the result and the database bytes.
func buildIndexImage(t *testing.T, c *image.Client, base, dst string) (*Result, []byte) {
	t.Helper()
	ctx := context.Background()
	b, err := New(c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	if err := b.Base(ctx, base); err != nil {
		t.Fatal(err)
	}
	db, err := index.Create(b.DatabasePath())
	if err != nil {
		t.Fatal(err)
	}
	bdl, err := bundle.LoadDir("../../testdata/bundles/valid")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Add(ctx, []index.LoadedBundle{{Bundle: bdl, BundlePath: "example.com/op:v1"}}, index.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(b.DatabasePath())
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Write(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	return res, data
}

func TestSameBundlesSameImageDigest(t *testing.T) {
	os.Unsetenv("SOURCE_DATE_EPOCH")
	c := client(t)
	dir := t.TempDir()
	baseImg, err := mutate.AppendLayers(empty.Image, layer(t, map[string]string{"bin/opm": "binary"}))
	if err != nil {
		t.Fatal(err)
	}
	base := "oci:" + filepath.Join(dir, "base") + ":latest"
	push(t, c, baseImg, base)

	r1, db1 := buildIndexImage(t, c, base, "oci:"+filepath.Join(dir, "one")+":v1")
	// A clock-derived value (a timestamp, an mtime) would differ now.
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + 10*time.Millisecond).Sub(now))
	r2, db2 := buildIndexImage(t, c, base, "oci:"+filepath.Join(dir, "two")+":v1")

	if !bytes.Equal(db1, db2) {
		t.Errorf("database bytes differ between two builds (%d vs %d bytes)", len(db1), len(db2))
	}
	if r1.DatabaseLayer != r2.DatabaseLayer {
		t.Errorf("database layer %s, then %s", r1.DatabaseLayer, r2.DatabaseLayer)
	}
	if r1.Digest != r2.Digest {
		t.Errorf("image digest %s, then %s", r1.Digest, r2.Digest)
	}
}
