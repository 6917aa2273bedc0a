package index

import (
	"context"
	"fmt"
	"sort"
	"testing"
)

// layout is every channel entry of the database, with entry ids replaced by
// what they point at: what readers see, whatever ids the rows have.
func layout(t *testing.T, db *DB) []string {
	t.Helper()
	var out []string
	err := queryEach(context.Background(), db.sql, `SELECT e.package_name, e.channel_name, e.operatorbundle_name, e.depth,
		IFNULL(r.operatorbundle_name, '-'), IFNULL(r.depth, -1), IFNULL(r.channel_name, '-')
		FROM channel_entry e LEFT JOIN channel_entry r ON r.entry_id = e.replaces`, nil, func(s scanner) error {
		var pkg, ch, b, rb, rch string
		var d, rd int
		if err := s.Scan(&pkg, &ch, &b, &d, &rb, &rd, &rch); err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s/%s %s@%d → %s@%d (%s)", pkg, ch, b, d, rb, rd, rch))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// entryOrder lists a package's entries in id order.
func entryOrder(t *testing.T, db *DB, pkg string) []string {
	t.Helper()
	var out []string
	err := queryEach(context.Background(), db.sql, `SELECT channel_name, operatorbundle_name, depth FROM channel_entry
		WHERE package_name = ? ORDER BY entry_id`, []any{pkg}, func(s scanner) error {
		var ch, b string
		var d int
		if err := s.Scan(&ch, &b, &d); err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s/%s@%d", ch, b, d))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sound fails t when the database has a row its foreign keys refuse or a
// damaged page, or when helper indexes were left behind.
func sound(t *testing.T, db *DB) {
	t.Helper()
	var n int
	if err := db.sql.QueryRow(`SELECT COUNT(*) FROM pragma_foreign_key_check`).Scan(&n); err != nil || n != 0 {
		t.Errorf("foreign_key_check: %d rows (%v)", n, err)
	}
	var ok string
	if err := db.sql.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Errorf("integrity_check: %s (%v)", ok, err)
	}
	if err := db.sql.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'opm_tmp_%'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d helper indexes left (%v)", n, err)
	}
}

// Growing a package one add at a time rewrites its channel rows in place,
// between other packages' rows; the result is laid out as one call adding
// every bundle lays it out.
func TestGrowingPackageMatchesOneCall(t *testing.T) {
	needShared(t)
	ctx := context.Background()
	for _, c := range []struct {
		pkg  string
		mode Mode
	}{{"etcd", ""}, {"node-healthcheck-operator", ""}, {"marin3r", ""}, {"cert-utils-operator", ""}, {"kubedb-installer", ""},
		{"skupper-operator", ModeSemverSkipPatch}, {"community-windows-machine-config-operator", ModeSemver}} {
		pkg, mode := c.pkg, c.mode
		t.Run(pkg, func(t *testing.T) {
			if mode == "" {
				mode = ciMode(t, pkg)
			}
			lbs := corpusBundles(t, pkg)
			// Version order, so that each add finds what it replaces.
			type ordered struct {
				lb LoadedBundle
				v  Version
			}
			var bs []ordered
			for _, lb := range lbs {
				r, e := bundleRows(lb)
				if e != nil {
					t.Fatal(e)
				}
				bs = append(bs, ordered{lb, r.Version})
			}
			sort.Slice(bs, func(i, j int) bool { return bs[i].v.Compare(bs[j].v) < 0 })

			one, _ := newDB(t)
			grown, _ := newDB(t)
			var all []LoadedBundle
			for i, b := range bs {
				// A package added between the adds puts other rows
				// after the package's own.
				filler := spec{pkg: fmt.Sprintf("filler%d", i), version: "1.0.0", channels: "stable"}.load(t)
				all = append(all, b.lb, filler)
				if _, err := grown.Add(ctx, []LoadedBundle{b.lb, filler}, AddOptions{Mode: mode}); err != nil {
					t.Fatalf("add %s: %v", b.lb.BundlePath, err)
				}
			}
			if _, err := one.Add(ctx, all, AddOptions{Mode: mode}); err != nil {
				t.Fatal(err)
			}
			want, got := layout(t, one), layout(t, grown)
			if x, y := diffRows(got, want); len(x)+len(y) > 0 || len(got) != len(want) {
				t.Errorf("grown one add at a time: %d entries, one call: %d\nonly grown: %v\nonly one call: %v", len(got), len(want), x, y)
			}
			// Readers that order a package's entries by id (the registry
			// server's skips lists, for one) see them in the same order.
			if g, o := entryOrder(t, grown, pkg), entryOrder(t, one, pkg); fmt.Sprint(g) != fmt.Sprint(o) {
				t.Errorf("entries by id, grown: %v\none call: %v", g, o)
			}
			a, b := takeSnapshot(t, grown.sql), takeSnapshot(t, one.sql)
			for table := range a {
				if x, y := diffRows(a[table], b[table]); len(x)+len(y) > 0 {
					t.Errorf("%s differs: only grown %v, only one call %v", table, x, y)
				}
			}
			sound(t, grown)
		})
	}
}

// A rewrite that leaves a package fewer entries and channels than it had
// deletes the rest, whether few (one pass over the table each) or many
// (through a helper index, dropped before commit).
func TestRewriteShrinksPackage(t *testing.T) {
	for _, big := range []bool{false, true} {
		t.Run(fmt.Sprintf("big=%t", big), func(t *testing.T) {
			db, _ := newDB(t)
			ctx := context.Background()
			var specs []spec
			prev := ""
			for i := 0; i < 8; i++ {
				v := fmt.Sprintf("1.0.%d", i)
				specs = append(specs, spec{version: v, replaces: prev, channels: "stable,fast", def: "stable"})
				prev = "op.v" + v
			}
			mustAdd(t, db, AddOptions{}, specs...)
			if big {
				// Enough other rows that deleting many entries builds the
				// helper index.
				var many []spec
				for i := 0; i < helperThreshold/2+1; i++ {
					many = append(many, spec{pkg: fmt.Sprintf("other%d", i), version: "1.0.0", channels: "a,b"})
				}
				mustAdd(t, db, AddOptions{}, many...)
			}
			tx, err := db.sql.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			w, err := newWriter(ctx, tx)
			if err != nil {
				t.Fatal(err)
			}
			defer w.close()
			old, err := w.loadPackage(ctx, "op")
			if err != nil {
				t.Fatal(err)
			}
			if len(old.entries) != 16 || len(old.channels) != 2 {
				t.Fatalf("loaded %d entries in %v", len(old.entries), old.channels)
			}
			// Only stable is left, holding the two highest bundles.
			graph := []chanGraph{{Name: "stable", Head: "op.v1.0.7", Entries: []entry{
				{Bundle: "op.v1.0.7", Replaces: 1, Depth: 0}, {Bundle: "op.v1.0.6", Replaces: -1, Depth: 1}}}}
			if err := w.rewriteChannels(ctx, "op", old, graph, "stable"); err != nil {
				t.Fatal(err)
			}
			if big && len(w.created) == 0 {
				t.Error("14 deletes from a big table built no helper index")
			}
			if err := w.finish(ctx); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			got := layout(t, db)
			var mine []string
			for _, l := range got {
				if len(l) > 3 && l[:3] == "op/" {
					mine = append(mine, l)
				}
			}
			want := []string{"op/stable op.v1.0.6@1 → -@-1 (-)", "op/stable op.v1.0.7@0 → op.v1.0.6@1 (stable)"}
			if fmt.Sprint(mine) != fmt.Sprint(want) {
				t.Errorf("entries of op: %q, want %q", mine, want)
			}
			var channels, def string
			if err := db.sql.QueryRow(`SELECT GROUP_CONCAT(name) FROM channel WHERE package_name = 'op'`).Scan(&channels); err != nil || channels != "stable" {
				t.Errorf("channels of op: %q (%v)", channels, err)
			}
			if err := db.sql.QueryRow(`SELECT default_channel FROM package WHERE name = 'op'`).Scan(&def); err != nil || def != "stable" {
				t.Errorf("default channel: %q (%v)", def, err)
			}
			sound(t, db)
		})
	}
}
