package index

import (
	"context"
	"os"
	"testing"
)

func TestCompactAfterRemove(t *testing.T) {
	needShared(t)
	db, path := newDB(t)
	ctx := context.Background()
	for _, pkg := range []string{"etcd", "skupper-operator", "ibmcloud-operator"} {
		if _, err := db.Add(ctx, corpusBundles(t, pkg), AddOptions{Mode: ciMode(t, pkg)}); err != nil {
			t.Fatal(err)
		}
	}
	if done, err := db.Compact(ctx); err != nil || done {
		t.Fatalf("compact of a fresh database: %v, %v (want nothing to do)", done, err)
	}
	if _, err := db.RemovePackages(ctx, []string{"ibmcloud-operator", "skupper-operator"}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	done, err := db.Compact(ctx)
	if err != nil || !done {
		t.Fatalf("compact after removing most bundles: %v, %v", done, err)
	}
	after, _ := os.Stat(path)
	if after.Size() >= before.Size() {
		t.Errorf("size %d after compacting, %d before", after.Size(), before.Size())
	}
	idx, err := db.Inspect(ctx)
	if err != nil || len(idx.Packages) != 1 || idx.Packages[0].Name != "etcd" {
		t.Fatalf("after compact: %+v, %v", idx, err)
	}
}
