package index

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Prepared bundles (rows kept, parse trees dropped, text packed in memory or
// in a spool file) give the same database, byte for byte, as the loaded
// bundles they came from, and a bundle that cannot go into an index is
// refused the same way.
func TestPreparedBundlesAddTheSame(t *testing.T) {
	needShared(t)
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	build := func(prepare bool, spool *Spool) []byte {
		path := filepath.Join(t.TempDir(), "index.db")
		db, err := Create(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, pkg := range []string{"etcd", "skupper-operator"} {
			bs := corpusBundles(t, pkg)
			if prepare {
				for i := range bs {
					bs[i] = Prepare(bs[i], spool)
					if bs[i].Bundle != nil {
						t.Fatal("Prepare kept the parsed bundle")
					}
					if r := bs[i].prepared; r != nil && spool != nil && (r.spool == nil || r.CSV != nil || r.Channels != nil || r.Properties != nil) {
						t.Fatalf("%s: kept in memory, not in the spool", r.Name)
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
	spool, err := NewSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer spool.Close()
	want := build(false, nil)
	if !bytes.Equal(want, build(true, nil)) {
		t.Fatal("adding prepared bundles gave another database")
	}
	if !bytes.Equal(want, build(true, spool)) {
		t.Fatal("adding spooled bundles gave another database")
	}

	db, _ := newDB(t)
	_, err = db.Add(context.Background(), []LoadedBundle{Prepare(LoadedBundle{BundlePath: "example.com/broken:1"}, spool)}, AddOptions{})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("no ClusterServiceVersion")) {
		t.Fatalf("a prepared bundle without a CSV: %v", err)
	}
}

// A spool's file is gone from its directory as soon as it is made, so an
// interrupted run leaves nothing behind.
func TestSpoolLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	s, err := NewSpool(dir)
	if err != nil {
		t.Fatal(err)
	}
	at, err := s.put([]byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.get(at); err != nil || string(got) != "hello" {
		t.Fatalf("read back %q, %v", got, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("spool left %d file(s) in its directory", len(ents))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// A spool that cannot be made says where and how to fix it.
func TestSpoolInMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	_, err := NewSpool(dir)
	if err == nil || !strings.Contains(err.Error(), "create bundle spool") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("got %v", err)
	}
	t.Setenv("TMPDIR", dir)
	if _, err := NewSpool(""); err == nil || !strings.Contains(err.Error(), "set TMPDIR") {
		t.Fatalf("under a missing TMPDIR: %v", err)
	}
}
