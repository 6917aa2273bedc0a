package fbccache

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/fbc"
)

// renameIn replaces the catalog file by an edited copy of the same length
// renamed over it, as an editor or a checkout does.
func renameIn(t *testing.T, file, content string) {
	t.Helper()
	tmp := file + ".new"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
}

// edited is catalog with its bundle image changed, same length.
var edited = strings.Replace(catalog, "example.com/p-bundle:1.0.0", "example.com/p-evil00:1.0.0", 1)

func bundleImage(t *testing.T, db string) string {
	t.Helper()
	d, err := sql.Open("sqlite3", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var img string
	if err := d.QueryRow(`SELECT bundlepath FROM operatorbundle`).Scan(&img); err != nil {
		t.Fatal(err)
	}
	return img
}

// TestCacheOfACatalogEditedWhileBuilt (issue 27, item 11): a catalog file
// renamed over between the digest and the build must not leave a cache
// that records the original's digest with the edited content: Prepare
// reads the catalog again, the cache records the edited catalog's digest,
// and once the original is restored an enforced cache is refused.
func TestCacheOfACatalogEditedWhileBuilt(t *testing.T) {
	t.Parallel()
	if len(edited) != len(catalog) {
		t.Fatal("the edit must keep the length")
	}
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "p", "catalog.json")
	write(t, file, catalog)
	original, err := Digest(dir)
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "cache")
	swaps := 0
	opts := Options{CacheDir: cache, beforeBuild: func() {
		if swaps == 0 {
			renameIn(t, file, edited)
		}
		swaps++
	}}
	res, _, err := Prepare(ctx, dir, opts)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	if swaps != 2 {
		t.Errorf("catalog read %d times, want 2 (again after the change)", swaps)
	}
	now, _ := Digest(dir)
	if res.Digest != now || res.Digest == original {
		t.Errorf("cache records digest %s; the edited catalog's is %s, the original's %s", res.Digest, now, original)
	}
	if got := bundleImage(t, res.Database); got != "example.com/p-evil00:1.0.0" {
		t.Errorf("cache serves %s, want the edited catalog's image", got)
	}
	renameIn(t, file, catalog)
	_, _, err = Prepare(ctx, dir, Options{CacheDir: cache, EnforceIntegrity: true})
	if err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("restored original under an enforced cache of the edit: got %v, want a refusal", err)
	}
}

// TestCacheOfACatalogThatKeepsChanging: Prepare gives up after a few reads
// and says why, leaving no cache that could be trusted.
func TestCacheOfACatalogThatKeepsChanging(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "p", "catalog.json")
	write(t, file, catalog)
	cache := filepath.Join(t.TempDir(), "cache")
	n := 0
	_, _, err := Prepare(ctx, dir, Options{CacheDir: cache, beforeBuild: func() {
		n++
		if n%2 == 1 {
			renameIn(t, file, edited)
		} else {
			renameIn(t, file, catalog)
		}
	}})
	if !errors.Is(err, fbc.ErrChanged) || !strings.Contains(err.Error(), "changed each of the 3 times") || !strings.Contains(err.Error(), "catalog.json") {
		t.Fatalf("got %v, want the catalog refused as changing, naming the file", err)
	}
	if ok, _ := Check(cache, mustDigest(t, dir)); ok {
		t.Error("a catalog that kept changing left a trusted cache")
	}
}

func mustDigest(t *testing.T, dir string) string {
	t.Helper()
	d, err := Digest(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
