package index

// One test per intended difference from upstream opm v1.73.0; each is listed
// in docs/compatibility.md under the same name.

import (
	"context"
	"errors"
	"math/rand"
	"path/filepath"
	"testing"
)

// C1: olm.package is written once per bundle (upstream wrote it up to six
// times in replaces mode).
func TestCompatPackagePropertyOnce(t *testing.T) {
	needShared(t)
	db, _ := newDB(t)
	if _, err := db.Add(context.Background(), corpusBundles(t, "skupper-operator"), AddOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM (SELECT type, value, operatorbundle_name, COUNT(*) c FROM properties GROUP BY 1, 2, 3 HAVING c > 1)`); n != 0 {
		t.Errorf("%d duplicated property rows", n)
	}
	ref := openRef(t, filepath.Join(referenceDir, "skupper-operator.replaces.db"))
	var upstream int
	ref.QueryRow(`SELECT COUNT(*) FROM properties WHERE type = 'olm.package'`).Scan(&upstream)
	if got := count(t, db, `SELECT COUNT(*) FROM properties WHERE type = 'olm.package'`); got != 15 || upstream != 90 {
		t.Errorf("olm.package rows: ours %d (want 15), upstream %d (want 90)", got, upstream)
	}
}

// C2: in semver modes every bundle keeps its csv and bundle columns
// (upstream nulled them for non-heads, of every package in the database).
func TestCompatSemverKeepsManifests(t *testing.T) {
	needShared(t)
	db, _ := newDB(t)
	if _, err := db.Add(context.Background(), corpusBundles(t, "etcd"), AddOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Add(context.Background(), corpusBundles(t, "marin3r"), AddOptions{Mode: ModeSemver}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM operatorbundle WHERE csv IS NULL OR bundle IS NULL`); n != 0 {
		t.Errorf("%d bundles without manifests", n)
	}
	ref := openRef(t, filepath.Join(referenceDir, "marin3r.semver.db"))
	var upstream int
	ref.QueryRow(`SELECT COUNT(*) FROM operatorbundle WHERE csv IS NULL`).Scan(&upstream)
	if upstream != 3 {
		t.Errorf("upstream nulled %d, want 3", upstream)
	}
}

// C3: the result does not depend on the order of the bundles (upstream's
// semver modes and default channel did).
func TestCompatOrderIndependent(t *testing.T) {
	needShared(t)
	for _, c := range []struct {
		pkg  string
		mode Mode
	}{{"community-windows-machine-config-operator", ModeSemver}, {"community-windows-machine-config-operator", ModeSemverSkipPatch},
		{"aqua", ModeReplaces}, {"node-healthcheck-operator", ModeSemver}, {"skupper-operator", ModeSemverSkipPatch}} {
		var first snapshot
		r := rand.New(rand.NewSource(7))
		for i := 0; i < 4; i++ {
			lbs := corpusBundles(t, c.pkg)
			r.Shuffle(len(lbs), func(i, j int) { lbs[i], lbs[j] = lbs[j], lbs[i] })
			db, _ := newDB(t)
			if _, err := db.Add(context.Background(), lbs, AddOptions{Mode: c.mode}); err != nil {
				t.Fatalf("%s %s: %v", c.pkg, c.mode, err)
			}
			s := takeSnapshot(t, db.sql)
			// channel_entry ids and layout too, not only the graph.
			s["entries"] = takeEntries(t, db)
			if first == nil {
				first = s
				continue
			}
			for table := range first {
				x, y := diffRows(s[table], first[table])
				if len(x)+len(y) > 0 {
					t.Errorf("%s %s: order %d changed %s", c.pkg, c.mode, i, table)
				}
			}
		}
	}
}

func takeEntries(t *testing.T, db *DB) []string {
	var out []string
	queryEach(context.Background(), db.sql, `SELECT entry_id || ' ' || channel_name || ' ' || operatorbundle_name || ' ' || IFNULL(replaces, '-') || ' ' || depth FROM channel_entry`, nil, func(s scanner) error {
		var x string
		s.Scan(&x)
		out = append(out, x)
		return nil
	})
	return out
}

// C4: the default channel comes from the highest bundle; one that names no
// channel of the package falls back and is reported (upstream failed with a
// FOREIGN KEY error, e.g. aqua in semver mode).
func TestCompatDefaultChannelFallback(t *testing.T) {
	needShared(t)
	db, _ := newDB(t)
	res, err := db.Add(context.Background(), corpusBundles(t, "aqua"), AddOptions{Mode: ModeSemver})
	if err != nil {
		t.Fatal(err)
	}
	if res.Packages[0].DefaultChannel != "2022.4.0" {
		t.Errorf("default %s", res.Packages[0].DefaultChannel)
	}
	db2, _ := newDB(t)
	res, err = db2.Add(context.Background(), loadAll(t, spec{version: "1.0.0", channels: "stable", def: "alpha"}), AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Packages[0].DefaultChannel != "stable" || len(res.Warnings) != 1 {
		t.Errorf("default %s, warnings %v", res.Packages[0].DefaultChannel, res.Warnings)
	}
}

// C5: a skipped bundle's own replaces chain stays in the channel, so aqua
// loads in replaces mode (upstream: "add prunes bundle").
func TestCompatSkippedBundlesKeepTheirChain(t *testing.T) {
	needShared(t)
	db, _ := newDB(t)
	if _, err := db.Add(context.Background(), corpusBundles(t, "aqua"), AddOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := db.Package(context.Background(), "aqua")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Channels {
		if c.Name != "2022.4.0" {
			continue
		}
		if c.Head != "aqua-operator.v2022.4.18" || len(c.Bundles) != 19 {
			t.Errorf("head %s, %d bundles: %v", c.Head, len(c.Bundles), c.Bundles)
		}
		has := map[Edge]bool{}
		for _, e := range c.Edges {
			has[e] = true
		}
		for _, e := range []Edge{{"aqua-operator.v2022.4.18", "aqua-operator.v2022.4.14"}, {"aqua-operator.v2022.4.14", "aqua-operator.v2022.4.13"}, {"aqua-operator.v2022.4.1", "aqua-operator.v2022.4.0"}} {
			if !has[e] {
				t.Errorf("missing edge %v", e)
			}
		}
	}
}

// C6: the api cleanup triggers keep an API while another bundle provides or
// requires it; upstream's deleted it, and by cascade every other provider.
func TestCompatAPITriggers(t *testing.T) {
	needShared(t)
	path := filepath.Join(t.TempDir(), "index.db")
	copyFile(t, filepath.Join(referenceDir, "etcd.replaces.db"), path)
	// Upstream's trigger, as shipped: removing one provider of EtcdCluster
	// drops all six.
	raw := openRW(t, path)
	tx, _ := raw.Begin()
	tx.Exec(`DELETE FROM api_provider WHERE operatorbundle_name = 'etcdoperator.v0.6.1'`)
	var left int
	tx.QueryRow(`SELECT COUNT(*) FROM api_provider WHERE kind = 'EtcdCluster'`).Scan(&left)
	tx.Rollback()
	raw.Close()
	if left != 0 {
		t.Fatalf("upstream trigger kept %d providers; the bug this test documents is gone?", left)
	}
	// opm replaces the triggers on its first write and keeps the others.
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.Add(context.Background(), loadAll(t, spec{pkg: "other", version: "1.0.0"}), AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 {
		t.Errorf("warnings %v", res.Warnings)
	}
	if _, err := db.sql.Exec(`DELETE FROM api_provider WHERE operatorbundle_name = 'etcdoperator.v0.6.1'`); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM api_provider WHERE kind = 'EtcdCluster'`); n != 5 {
		t.Errorf("%d EtcdCluster providers left, want 5", n)
	}
}

// C7: a CSV name given twice in one call is refused (upstream silently kept
// the first).
func TestCompatDuplicateInCall(t *testing.T) {
	db, _ := newDB(t)
	a := spec{version: "1.0.0"}.load(t)
	b := spec{version: "1.0.0"}.load(t)
	b.BundlePath = "elsewhere"
	_, err := db.Add(context.Background(), []LoadedBundle{a, b}, AddOptions{})
	if !errors.Is(err, ErrCSVExists) {
		t.Errorf("got %v", err)
	}
}

// C8: semver-skippatch makes every bundle replace all lower patches of its
// major.minor, whatever the load order; upstream's result depended on it and
// often failed ("Invalid graph").
func TestCompatSkipPatch(t *testing.T) {
	db, _ := newDB(t)
	mustAdd(t, db, AddOptions{Mode: ModeSemverSkipPatch},
		spec{version: "1.0.0"}, spec{version: "1.0.1"}, spec{version: "1.0.2"}, spec{version: "1.1.0"}, spec{version: "1.1.1"})
	p, _ := db.Package(context.Background(), "op")
	want := map[Edge]bool{
		{"op.v1.1.1", "op.v1.1.0"}: true, {"op.v1.1.0", "op.v1.0.2"}: true, {"op.v1.0.2", "op.v1.0.1"}: true,
		{"op.v1.0.2", "op.v1.0.0"}: true, {"op.v1.0.1", "op.v1.0.0"}: true,
	}
	got := map[Edge]bool{}
	for _, e := range p.Channels[0].Edges {
		got[e] = true
	}
	for e := range want {
		if !got[e] {
			t.Errorf("missing %v", e)
		}
	}
	for e := range got {
		if !want[e] {
			t.Errorf("extra %v", e)
		}
	}
}

// C9: a failed add leaves the database as it was (upstream left rows
// behind); see fault_test.go for kill and disk-full runs.
func TestCompatAtomic(t *testing.T) {
	db, path := newDB(t)
	mustAdd(t, db, AddOptions{}, spec{version: "1.0.0"})
	expectRefused(t, db, path, ErrReplacesMissing, nil, spec{pkg: "xx", version: "1.0.0"}, spec{pkg: "yy", version: "2.0.0", replaces: "yy.v1.0.0"})
}
