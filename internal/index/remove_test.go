package index

import (
	"context"
	"strings"
	"testing"
)

func count(t *testing.T, db *DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.sql.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func TestRemovePackagesKeepsSharedAPIs(t *testing.T) {
	db, _ := newDB(t)
	mustAdd(t, db, AddOptions{},
		spec{pkg: "a", version: "1.0.0", owned: []string{"Widget", "OnlyA"}},
		spec{pkg: "b", version: "1.0.0", owned: []string{"Widget"}, required: []string{"Gadget"}},
		spec{pkg: "c", version: "1.0.0", owned: []string{"Gadget"}},
	)
	res, err := db.RemovePackages(context.Background(), []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Removed) != 1 || res.Removed[0].Name != "a.v1.0.0" {
		t.Errorf("removed %+v", res.Removed)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM api WHERE kind = 'Widget'`); n != 1 {
		t.Errorf("Widget (still provided by b) gone")
	}
	if n := count(t, db, `SELECT COUNT(*) FROM api_provider WHERE kind = 'Widget'`); n != 1 {
		t.Errorf("%d Widget providers, want b's one", n)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM api WHERE kind = 'OnlyA'`); n != 0 {
		t.Errorf("OnlyA kept after its only provider went")
	}
	// Gadget is provided by c and required by b: removing c keeps it while b requires it.
	if _, err := db.RemovePackages(context.Background(), []string{"c"}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM api WHERE kind = 'Gadget'`); n != 1 {
		t.Errorf("Gadget (required by b) gone")
	}
	if _, err := db.RemovePackages(context.Background(), []string{"b"}); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"api", "api_provider", "api_requirer", "operatorbundle", "package", "channel", "channel_entry", "related_image", "properties", "dependencies"} {
		if n := count(t, db, `SELECT COUNT(*) FROM `+table); n != 0 {
			t.Errorf("%s: %d rows left in an emptied index", table, n)
		}
	}
}

func TestRemovePackagesUnknownIsAnErrorAndNoOp(t *testing.T) {
	db, path := newDB(t)
	mustAdd(t, db, AddOptions{}, spec{pkg: "a", version: "1.0.0"})
	before := fileBytes(t, path)
	_, err := db.RemovePackages(context.Background(), []string{"a", "nope"})
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("got %v", err)
	}
	if fileBytes(t, path) != before {
		t.Error("changed")
	}
}

func TestRemoveCorpusPackage(t *testing.T) {
	needShared(t)
	db, _ := newDB(t)
	for _, pkg := range []string{"etcd", "skupper-operator"} {
		if _, err := db.Add(context.Background(), corpusBundles(t, pkg), AddOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want := takeSnapshot(t, db.sql)
	if _, err := db.Add(context.Background(), corpusBundles(t, "pelorus-operator"), AddOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RemovePackages(context.Background(), []string{"pelorus-operator"}); err != nil {
		t.Fatal(err)
	}
	got := takeSnapshot(t, db.sql)
	for table := range want {
		x, y := diffRows(got[table], want[table])
		if len(x)+len(y) > 0 {
			t.Errorf("%s differs after add+remove: %v / %v", table, x, y)
		}
	}
}
