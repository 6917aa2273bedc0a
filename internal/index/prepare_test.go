package index

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// Prepared bundles (rows kept, parse trees dropped) give the same database,
// byte for byte, as the loaded bundles they came from, and a bundle that
// cannot go into an index is refused the same way.
func TestPreparedBundlesAddTheSame(t *testing.T) {
	needShared(t)
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	build := func(prepare bool) []byte {
		path := filepath.Join(t.TempDir(), "index.db")
		db, err := Create(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, pkg := range []string{"etcd", "skupper-operator"} {
			bs := corpusBundles(t, pkg)
			if prepare {
				for i := range bs {
					bs[i] = Prepare(bs[i])
					if bs[i].Bundle != nil {
						t.Fatal("Prepare kept the parsed bundle")
					}
				}
			}
			if _, err := db.Add(context.Background(), bs, AddOptions{Mode: ciMode(t, pkg)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	if !bytes.Equal(build(false), build(true)) {
		t.Fatal("adding prepared bundles gave another database")
	}

	db, _ := newDB(t)
	_, err := db.Add(context.Background(), []LoadedBundle{Prepare(LoadedBundle{BundlePath: "example.com/broken:1"})}, AddOptions{})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("no ClusterServiceVersion")) {
		t.Fatalf("a prepared bundle without a CSV: %v", err)
	}
}
