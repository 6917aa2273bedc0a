package indeximage

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbccache"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/servingimage"
)

// buildIndexImageAs runs the whole new-index path (create, add, compact,
// write format: fbc and both render the database as the catalog directory,
// and fbc builds its serve cache, as index add does) into an OCI layout and
// returns the result and the database bytes.
func buildIndexImageAs(t *testing.T, c *image.Client, base, dst string, format Format) (*Result, []byte) {
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
	if format.HasConfigs() {
		cat, _, err := fbc.RenderIndexFile(ctx, b.DatabasePath(), fbc.RenderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(b.Dir(), "configs-out")
		if err := fbc.WriteDir(dir, cat, fbc.WriteDirOptions{}); err != nil {
			t.Fatal(err)
		}
		b.SetOutput(format, dir)
		if format == FormatFBC && b.ServesOpmCache() {
			cache := filepath.Join(b.Dir(), "serve-cache")
			if _, _, err := fbccache.Prepare(ctx, dir, fbccache.Options{CacheDir: cache}); err != nil {
				t.Fatal(err)
			}
			b.SetServeCache(cache)
		}
	}
	res, err := b.Write(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	return res, data
}

func TestSameBundlesSameImageDigest(t *testing.T) {
	for _, format := range []Format{FormatSQLite, FormatFBC} {
		t.Run(string(format), func(t *testing.T) { sameBundlesSameImageDigest(t, format) })
	}
}

// sameBundlesSameImageDigest builds the same index twice; for fbc the
// layer also holds the serve cache, whose database must be as
// reproducible as the catalog.
func sameBundlesSameImageDigest(t *testing.T, format Format) {
	os.Unsetenv("SOURCE_DATE_EPOCH")
	c := client(t)
	dir := t.TempDir()
	baseImg, err := mutate.AppendLayers(empty.Image, layer(t, map[string]string{"bin/opm": "binary"}))
	if err != nil {
		t.Fatal(err)
	}
	// As opm's serving image, so that an fbc image carries the serve cache.
	baseImg, err = mutate.Config(baseImg, v1.Config{Labels: map[string]string{sourceLabel: ServingImageSource}})
	if err != nil {
		t.Fatal(err)
	}
	base := "oci:" + filepath.Join(dir, "base") + ":latest"
	push(t, c, baseImg, base)

	r1, db1 := buildIndexImageAs(t, c, base, "oci:"+filepath.Join(dir, "one")+":v1", format)
	// A clock-derived value (a timestamp, an mtime) would differ now.
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + 10*time.Millisecond).Sub(now))
	r2, db2 := buildIndexImageAs(t, c, base, "oci:"+filepath.Join(dir, "two")+":v1", format)
	if format == FormatFBC && (r1.CachePath != CachePath || r1.DatabasePath != "") {
		t.Errorf("fbc image: cache %q, database %q; want the cache at %s and no database", r1.CachePath, r1.DatabasePath, CachePath)
	}

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

// TestFBCOnOtherBaseHasNoCache: a base image that is not opm's serving
// image (no source label) may run an opm that cannot read opm's cache, so
// an fbc image on it carries none, converts at start-up, and says so.
func TestFBCOnOtherBaseHasNoCache(t *testing.T) {
	if ServingImageSource != servingimage.DefaultSource {
		t.Errorf("ServingImageSource %q differs from the serving image's source label %q", ServingImageSource, servingimage.DefaultSource)
	}
	c := client(t)
	dir := t.TempDir()
	baseImg, err := mutate.AppendLayers(empty.Image, layer(t, map[string]string{"bin/opm": "binary"}))
	if err != nil {
		t.Fatal(err)
	}
	base := "oci:" + filepath.Join(dir, "base") + ":latest"
	push(t, c, baseImg, base)
	res, _ := buildIndexImageAs(t, c, base, "oci:"+filepath.Join(dir, "out")+":v1", FormatFBC)
	if res.CachePath != "" {
		t.Errorf("cache %q on a base that is not opm's serving image", res.CachePath)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "carries no serve cache") {
		t.Errorf("warnings %q; want one saying the image carries no serve cache", res.Warnings)
	}
	if got, want := ServeCmd("/configs", ""), []string{"serve", "/configs"}; !slices.Equal(got, want) {
		t.Errorf("ServeCmd without a cache: %q, want %q", got, want)
	}
}
