package indeximage

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/opmkit/opm/internal/image/blockgzip"
)

// cachedUpdate is builderUpdate with a database cache: it returns the
// builder (closed), the result and the database FromIndex found.
func cachedUpdate(t *testing.T, cache, from, dst string, data []byte) (*Builder, *Result, []byte) {
	t.Helper()
	b, err := New(client(t), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	b.Cache = cache
	if err := b.FromIndex(context.Background(), from); err != nil {
		t.Fatal(err)
	}
	found, err := os.ReadFile(b.DatabasePath())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.DatabasePath(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := b.Write(context.Background(), dst)
	if err != nil {
		t.Fatal(err)
	}
	return b, res, found
}

// An index image this machine wrote last has its database in the cache:
// the next change downloads no database layer, still copies the unchanged
// blocks, and writes the layer a change of the downloaded database would.
//
// An entry an older opm left, without block sums, is used all the same:
// the change sums the cached database's blocks before changing it.
func TestDatabaseCache(t *testing.T) {
	t.Run("with-sums", func(t *testing.T) { testDatabaseCache(t, false) })
	t.Run("older-entry-without-sums", func(t *testing.T) { testDatabaseCache(t, true) })
}

func testDatabaseCache(t *testing.T, olderEntry bool) {
	addr, reg := startRegistry(t)
	c := client(t)
	cache := filepath.Join(t.TempDir(), "cache")
	const blocks = 5
	db1 := fakeDatabase(blocks*blockgzip.BlockSize-30000, "a")
	base, err := mutate.AppendLayers(empty.Image, layer(t, map[string]string{"bin/opm": "binary"}))
	if err != nil {
		t.Fatal(err)
	}
	base, err = mutate.Config(base, v1.Config{Labels: indexLabels()})
	if err != nil {
		t.Fatal(err)
	}
	push(t, c, mutate.MediaType(base, types.OCIManifestSchema1), addr+"/idx:0")
	// idx:0 has no database yet: write one without the cache's help.
	b0, err := New(c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b0.Cache = cache
	if err := b0.Base(context.Background(), addr+"/idx:0"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b0.DatabasePath(), db1, 0o600); err != nil {
		t.Fatal(err)
	}
	res1, err := b0.Write(context.Background(), addr+"/idx:1")
	if err != nil {
		t.Fatal(err)
	}
	_ = b0.Close()
	d1, _ := v1.NewHash(res1.DatabaseLayer)
	if _, err := os.Stat(filepath.Join(cache, d1.Hex, cacheDB)); err != nil {
		t.Fatalf("the database written is not in the cache: %v", err)
	}

	// The entry keeps the sums of its blocks, so that the next change
	// need not read the database before changing it.
	meta := readCacheMeta(t, filepath.Join(cache, d1.Hex))
	if meta.SumKey == "" || len(meta.Sums) != blocks {
		t.Fatalf("the cache entry keeps %d block sums (key %q), want %d", len(meta.Sums), meta.SumKey, blocks)
	}
	if olderEntry {
		meta.SumKey, meta.Sums = "", nil
		writeCacheMeta(t, filepath.Join(cache, d1.Hex), meta)
	}

	// The change of idx:1 takes its database from the cache.
	db2 := bytes.Clone(db1)
	copy(db2[3*blockgzip.BlockSize+10:], "changed")
	var layerGets atomic.Int32
	reg.hook = func(_ http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, d1.Hex) {
			layerGets.Add(1)
		}
		return false
	}
	b, res2, found := cachedUpdate(t, cache, addr+"/idx:1", addr+"/idx:2", db2)
	reg.hook = nil
	if !bytes.Equal(found, db1) {
		t.Fatal("the database taken from the cache differs from the one written")
	}
	if n := layerGets.Load(); n != 0 {
		t.Errorf("the cached database layer was downloaded %d time(s)", n)
	}
	if b.prev == nil || b.prev.key == nil {
		t.Fatal("the change did not sum its blocks with the cache entry's key")
	}
	if b.blocksReused != blocks-1 || b.blocksCompressed != 1 {
		t.Errorf("%d blocks copied, %d compressed; want %d and the changed one", b.blocksReused, b.blocksCompressed, blocks-1)
	}
	if _, err := os.Stat(filepath.Join(cache, d1.Hex)); !os.IsNotExist(err) {
		t.Errorf("the entry used is still in the cache: %v", err)
	}

	// Without the cache, the same change gives the same layer, and the
	// image reads back as the new database.
	_, res3 := builderUpdate(t, addr+"/idx:1", addr+"/idx:3", db2)
	if res2.DatabaseLayer != res3.DatabaseLayer {
		t.Errorf("layer from the cache %s, from the registry %s", res2.DatabaseLayer, res3.DatabaseLayer)
	}
	if _, got := updateRead(t, addr+"/idx:2"); !bytes.Equal(got, db2) {
		t.Error("the image written from the cache does not hold the new database")
	}

	// A cached database changed behind opm's back is not used.
	d2, _ := v1.NewHash(res2.DatabaseLayer)
	if err := os.WriteFile(filepath.Join(cache, d2.Hex, cacheDB), []byte("tampered"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, found = cachedUpdate(t, cache, addr+"/idx:2", addr+"/idx:4", db2)
	if !bytes.Equal(found, db2) {
		t.Error("a changed cache entry was used instead of the image's database")
	}
}

func readCacheMeta(t *testing.T, dir string) cacheMeta {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, cacheMetaF))
	if err != nil {
		t.Fatal(err)
	}
	var m cacheMeta
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func writeCacheMeta(t *testing.T, dir string, m cacheMeta) {
	t.Helper()
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, cacheMetaF), raw, 0o600); err != nil {
		t.Fatal(err)
	}
}
