package index

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

func mustAdd(t *testing.T, db *DB, opts AddOptions, specs ...spec) *AddResult {
	t.Helper()
	res, err := db.Add(context.Background(), loadAll(t, specs...), opts)
	if err != nil {
		t.Fatalf("add: %v", err)
	}
	return res
}

func fileBytes(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// expectRefused checks that an add fails with kind, names what it should,
// and leaves the database file byte-identical.
func expectRefused(t *testing.T, db *DB, path string, kind *Error, mentions []string, specs ...spec) error {
	t.Helper()
	before := fileBytes(t, path)
	_, err := db.Add(context.Background(), loadAll(t, specs...), AddOptions{})
	if !errors.Is(err, kind) {
		t.Fatalf("want %s error, got %v", kind.Kind, err)
	}
	for _, m := range mentions {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("error does not mention %q: %v", m, err)
		}
	}
	if fileBytes(t, path) != before {
		t.Error("a refused add changed the database file")
	}
	return err
}

func TestAddErrors(t *testing.T) {
	t.Run("replaces missing", func(t *testing.T) {
		db, path := newDB(t)
		expectRefused(t, db, path, ErrReplacesMissing, []string{"package op", "bundle op.v2.0.0", "op.v1.0.0", "fix:"},
			spec{version: "2.0.0", replaces: "op.v1.0.0"})
	})
	t.Run("cycle", func(t *testing.T) {
		db, path := newDB(t)
		expectRefused(t, db, path, ErrCycle, []string{"package op", "op.v1.0.0", "op.v2.0.0", "cycle"},
			spec{version: "1.0.0", replaces: "op.v2.0.0"}, spec{version: "2.0.0", replaces: "op.v1.0.0"})
	})
	t.Run("skip cycle", func(t *testing.T) {
		db, path := newDB(t)
		expectRefused(t, db, path, ErrCycle, []string{"cycle"},
			spec{version: "1.0.0", replaces: "op.v2.0.0"}, spec{version: "2.0.0", skips: []string{"op.v1.0.0"}})
	})
	t.Run("version exists", func(t *testing.T) {
		db, path := newDB(t)
		mustAdd(t, db, AddOptions{}, spec{version: "1.0.0"})
		expectRefused(t, db, path, ErrVersionExists, []string{"package op", "other.v1", "1.0.0"},
			spec{name: "other.v1", version: "1.0.0", replaces: "op.v1.0.0"})
	})
	t.Run("csv exists", func(t *testing.T) {
		db, path := newDB(t)
		mustAdd(t, db, AddOptions{}, spec{version: "1.0.0"})
		lb := spec{version: "1.0.0"}.load(t)
		lb.BundlePath = "elsewhere:1"
		before := fileBytes(t, path)
		_, err := db.Add(context.Background(), []LoadedBundle{lb}, AddOptions{})
		if !errors.Is(err, ErrCSVExists) || ExitCode(err) != 3 || !strings.Contains(err.Error(), "--overwrite-latest") {
			t.Fatalf("got %v (exit %d)", err, ExitCode(err))
		}
		if fileBytes(t, path) != before {
			t.Error("changed")
		}
	})
	t.Run("bundle path exists", func(t *testing.T) {
		db, path := newDB(t)
		mustAdd(t, db, AddOptions{}, spec{version: "1.0.0"})
		lb := spec{version: "1.1.0", replaces: "op.v1.0.0"}.load(t)
		lb.BundlePath = "quay.io/test/op-bundle:1.0.0"
		before := fileBytes(t, path)
		_, err := db.Add(context.Background(), []LoadedBundle{lb}, AddOptions{})
		if !errors.Is(err, ErrBundlePathExists) || ExitCode(err) != 2 {
			t.Fatalf("got %v", err)
		}
		if fileBytes(t, path) != before {
			t.Error("changed")
		}
	})
	t.Run("directory reused", func(t *testing.T) {
		// The same directory holding the next version is another bundle.
		db, _ := newDB(t)
		for _, v := range []string{"1.0.0", "1.1.0"} {
			lb := spec{version: v}.load(t)
			lb.BundlePath, lb.Local = "bundle", true
			if _, err := db.Add(context.Background(), []LoadedBundle{lb}, AddOptions{Mode: ModeSemver}); err != nil {
				t.Fatalf("add %s from directory bundle: %v", v, err)
			}
		}
	})
	t.Run("given twice", func(t *testing.T) {
		db, path := newDB(t)
		expectRefused(t, db, path, ErrCSVExists, []string{"given twice"}, spec{version: "1.0.0"}, spec{version: "1.0.0"})
	})
	t.Run("two heads", func(t *testing.T) {
		db, path := newDB(t)
		mustAdd(t, db, AddOptions{}, spec{version: "1.0.0"})
		expectRefused(t, db, path, ErrTwoHeads, []string{"package op", "channel stable", "op.v2.0.0", "op.v1.0.0", "fix:"},
			spec{version: "2.0.0"})
	})
	t.Run("prune", func(t *testing.T) {
		db, path := newDB(t)
		mustAdd(t, db, AddOptions{}, spec{version: "1.0.0"}, spec{version: "2.0.0", replaces: "op.v1.0.0"})
		expectRefused(t, db, path, ErrPrune, []string{"package op", "bundle op.v1.5.0", "channel stable", "below the channel head op.v2.0.0"},
			spec{version: "1.5.0"})
	})
	t.Run("bad semver", func(t *testing.T) {
		db, path := newDB(t)
		expectRefused(t, db, path, ErrBadVersion, []string{"bundle op.v1.0", "not a semantic version"}, spec{version: "1.0"})
	})
	t.Run("bad release", func(t *testing.T) {
		db, path := newDB(t)
		expectRefused(t, db, path, ErrBadVersion, []string{"leading zero"}, spec{version: "1.0.0", release: "01"})
	})
	t.Run("substitutesFor", func(t *testing.T) {
		db, path := newDB(t)
		expectRefused(t, db, path, ErrUnsupported, []string{"substitutesFor"}, spec{version: "1.0.0", substitutesFor: "op.v0.9.0"})
	})
	t.Run("owned CRD missing", func(t *testing.T) {
		db, path := newDB(t)
		s := spec{version: "1.0.0", owned: []string{"Widget"}}
		lb := s.load(t)
		// Drop the CRD object from the loaded bundle.
		lb.Bundle.CRDs = nil
		before := fileBytes(t, path)
		_, err := db.Add(context.Background(), []LoadedBundle{lb}, AddOptions{})
		if !errors.Is(err, ErrInvalidBundle) || !strings.Contains(err.Error(), "widgets.test.example.com") {
			t.Fatalf("got %v", err)
		}
		if fileBytes(t, path) != before {
			t.Error("changed")
		}
	})
	t.Run("every error reported", func(t *testing.T) {
		db, path := newDB(t)
		err := expectRefused(t, db, path, ErrBadVersion, nil, spec{version: "x"}, spec{pkg: "b", version: "1.0.0", replaces: "b.v0.1.0"})
		if !errors.Is(err, ErrReplacesMissing) {
			t.Errorf("second problem not reported: %v", err)
		}
	})
}

func TestPermissive(t *testing.T) {
	db, _ := newDB(t)
	res, err := db.Add(context.Background(), loadAll(t,
		spec{version: "1.0.0"},
		spec{version: "1.1.0", replaces: "op.v1.0.0"},
		spec{version: "1.2.0", replaces: "op.v0.5.0"}, // missing: skipped
		spec{version: "1.3.0", replaces: "op.v1.2.0"}, // then this one too
		spec{version: "bad"},
		spec{pkg: "other", version: "1.0.0"},
	), AddOptions{Permissive: true})
	if err != nil {
		t.Fatal(err)
	}
	skipped := map[string]string{}
	for _, s := range res.Skipped {
		skipped[s.Bundle.Name] = s.Message
	}
	for _, name := range []string{"op.v1.2.0", "op.v1.3.0", "op.vbad"} {
		if skipped[name] == "" {
			t.Errorf("%s not skipped (skipped: %v)", name, skipped)
		}
	}
	if len(res.Added) != 3 {
		t.Errorf("added %v", res.Added)
	}
	p, err := db.Package(context.Background(), "op")
	if err != nil {
		t.Fatal(err)
	}
	if p.Channels[0].Head != "op.v1.1.0" {
		t.Errorf("head %s", p.Channels[0].Head)
	}
}

// A bundle that fails while its rows are written is rolled back to the
// package's savepoint, and the others are added without it.
func TestPermissiveRollsBackHalfAddedBundle(t *testing.T) {
	db, _ := newDB(t)
	opts := AddOptions{Permissive: true, hook: func(stage string) error {
		if stage == "bundle:op.v1.1.0" {
			return &bundleFault{Err: errors.New("injected")}
		}
		return nil
	}}
	res, err := db.Add(context.Background(), loadAll(t,
		spec{version: "1.0.0", owned: []string{"Widget"}},
		spec{version: "1.1.0", replaces: "op.v1.0.0", owned: []string{"Gadget"}, images: []string{"quay.io/x/y:1"}},
	), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Bundle.Name != "op.v1.1.0" || !strings.Contains(res.Skipped[0].Message, "injected") {
		t.Fatalf("skipped %+v", res.Skipped)
	}
	for table, q := range map[string]string{
		"operatorbundle": `SELECT COUNT(*) FROM operatorbundle WHERE name = 'op.v1.1.0'`,
		"api_provider":   `SELECT COUNT(*) FROM api_provider WHERE operatorbundle_name = 'op.v1.1.0'`,
		"api":            `SELECT COUNT(*) FROM api WHERE kind = 'Gadget'`,
		"related_image":  `SELECT COUNT(*) FROM related_image WHERE operatorbundle_name = 'op.v1.1.0'`,
		"properties":     `SELECT COUNT(*) FROM properties WHERE operatorbundle_name = 'op.v1.1.0'`,
		"channel_entry":  `SELECT COUNT(*) FROM channel_entry WHERE operatorbundle_name = 'op.v1.1.0'`,
	} {
		var n int
		if err := db.sql.QueryRow(q).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d rows of the rolled-back bundle (%v)", table, n, err)
		}
	}
	var head string
	db.sql.QueryRow(`SELECT head_operatorbundle_name FROM channel`).Scan(&head)
	if head != "op.v1.0.0" {
		t.Errorf("head %s", head)
	}
}

func TestOverwriteLatest(t *testing.T) {
	db, _ := newDB(t)
	mustAdd(t, db, AddOptions{}, spec{version: "1.0.0"}, spec{version: "1.1.0", replaces: "op.v1.0.0", owned: []string{"Widget"}})
	// Rebuilt head: same CSV name, another image and API.
	lb := spec{version: "1.1.0", replaces: "op.v1.0.0", owned: []string{"Gadget"}}.load(t)
	lb.BundlePath = "quay.io/test/op-bundle:1.1.0-rebuilt"
	res, err := db.Add(context.Background(), []LoadedBundle{lb}, AddOptions{OverwriteLatest: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Overwritten) != 1 || res.Overwritten[0].Path != "quay.io/test/op-bundle:1.1.0" {
		t.Errorf("overwritten %+v", res.Overwritten)
	}
	var path string
	var widgets, gadgets int
	db.sql.QueryRow(`SELECT bundlepath FROM operatorbundle WHERE name = 'op.v1.1.0'`).Scan(&path)
	db.sql.QueryRow(`SELECT COUNT(*) FROM api WHERE kind = 'Widget'`).Scan(&widgets)
	db.sql.QueryRow(`SELECT COUNT(*) FROM api WHERE kind = 'Gadget'`).Scan(&gadgets)
	if path != lb.BundlePath || widgets != 0 || gadgets != 1 {
		t.Errorf("after overwrite: path %s, Widget %d, Gadget %d", path, widgets, gadgets)
	}
	// Not a head: refused.
	lb = spec{version: "1.0.0"}.load(t)
	lb.BundlePath = "quay.io/test/op-bundle:1.0.0-rebuilt"
	_, err = db.Add(context.Background(), []LoadedBundle{lb}, AddOptions{OverwriteLatest: true})
	if !errors.Is(err, ErrOverwrite) || !strings.Contains(err.Error(), "head op.v1.1.0") {
		t.Errorf("overwrite of a non-head: %v", err)
	}
}

func TestDefaultChannel(t *testing.T) {
	db, _ := newDB(t)
	res := mustAdd(t, db, AddOptions{},
		spec{version: "1.0.0", channels: "alpha,beta", def: "stable"},
		spec{version: "2.0.0", replaces: "op.v1.0.0", channels: "beta,alpha", def: "gone"})
	if res.Packages[0].DefaultChannel != "beta" {
		t.Errorf("default %s, want beta (first channel of the highest bundle)", res.Packages[0].DefaultChannel)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], `"gone"`) || !strings.Contains(res.Warnings[0], "op.v2.0.0") {
		t.Errorf("warnings %v", res.Warnings)
	}
	// A later add whose highest bundle names a real channel switches to it.
	res = mustAdd(t, db, AddOptions{}, spec{version: "3.0.0", replaces: "op.v2.0.0", channels: "alpha,beta", def: "alpha"})
	if res.Packages[0].DefaultChannel != "alpha" || len(res.Warnings) != 0 {
		t.Errorf("default %s, warnings %v", res.Packages[0].DefaultChannel, res.Warnings)
	}
	// Adding below the top keeps the current default.
	res = mustAdd(t, db, AddOptions{}, spec{version: "2.5.0", replaces: "op.v2.0.0", channels: "gamma", def: "gamma"})
	if res.Packages[0].DefaultChannel != "alpha" {
		t.Errorf("default %s, want alpha kept", res.Packages[0].DefaultChannel)
	}
}

// Adding one bundle at a time gives the same graphs as adding them together.
func TestIncrementalEqualsBatch(t *testing.T) {
	needShared(t)
	// Not aqua: its 2022.4.15 reaches 2022.4.14 only through olm.skipRange,
	// so adding it on top of 2022.4.14 alone is refused (two heads); as a
	// batch, 2022.4.16-18 skip both.
	for _, pkg := range []string{"etcd", "pelorus-operator", "skupper-operator", "ibmcloud-operator", "marin3r"} {
		mode := ciMode(t, pkg)
		batch, _ := newDB(t)
		if _, err := batch.Add(context.Background(), corpusBundles(t, pkg), AddOptions{Mode: mode}); err != nil {
			t.Fatalf("%s batch: %v", pkg, err)
		}
		inc, _ := newDB(t)
		lbs := corpusBundles(t, pkg)
		rs := make([]*rows, len(lbs))
		for i, lb := range lbs {
			r, e := bundleRows(lb)
			if e != nil {
				t.Fatal(e)
			}
			rs[i] = r
		}
		// Version order; in replaces mode a bundle's replaced bundle first.
		order := make([]int, len(lbs))
		for i := range order {
			order[i] = i
		}
		sortIdx(order, func(a, b int) bool { return CompareBundles(rs[a], rs[b]) < 0 })
		for _, i := range order {
			if _, err := inc.Add(context.Background(), lbs[i:i+1], AddOptions{Mode: mode}); err != nil {
				t.Fatalf("%s incremental %s: %v", pkg, rs[i].Name, err)
			}
		}
		a, b := takeSnapshot(t, batch.sql), takeSnapshot(t, inc.sql)
		for _, table := range []string{"package", "channel", "members", "edges", "bundle", "property"} {
			x, y := diffRows(a[table], b[table])
			if len(x)+len(y) > 0 {
				t.Errorf("%s %s: batch only %v, incremental only %v", pkg, table, x, y)
			}
		}
	}
}

func sortIdx(s []int, less func(a, b int) bool) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && less(s[j], s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
