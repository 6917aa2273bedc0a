package index

import (
	"context"
	"testing"
)

// Only an add that may replace bundles of the database builds helper
// indexes; growing an existing package rewrites its channels in place.
func TestAddHelpersOnlyForOverwrites(t *testing.T) {
	db, _ := newDB(t)
	ctx := context.Background()
	if _, err := db.Add(ctx, []LoadedBundle{spec{pkg: "old", name: "old.v1.0.0", version: "1.0.0", channels: "stable"}.load(t)}, AddOptions{}); err != nil {
		t.Fatal(err)
	}
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, c := range []struct {
		names     []string
		overwrite bool
		want      helperSet
	}{
		{[]string{"new.v1.0.0", "other-new.v1.0.0"}, false, helpNone},
		{[]string{"new.v1.0.0", "old.v2.0.0"}, false, helpNone},
		{[]string{"old.v1.0.0"}, false, helpNone},
		{[]string{"old.v2.0.0", "old.v1.0.0"}, true, helpAll},
		{[]string{"old.v2.0.0"}, true, helpNone},
	} {
		var all []*rows
		for _, n := range c.names {
			all = append(all, &rows{Name: n})
		}
		got, err := addHelpers(ctx, tx, all, AddOptions{OverwriteLatest: c.overwrite})
		if err != nil || got != c.want {
			t.Errorf("addHelpers(%v, overwrite=%t) = %v, %v; want %v", c.names, c.overwrite, got, err, c.want)
		}
	}
}

func TestHelperIndexesBuiltOnlyWhenNeeded(t *testing.T) {
	db, path := newDB(t)
	db.Close()
	raw := openRW(t, path)
	// A large rowid stands for a big channel_entry table.
	if _, err := raw.Exec(`PRAGMA foreign_keys = OFF`); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO channel_entry(entry_id, channel_name, package_name, operatorbundle_name, depth) VALUES (5000, 'c', 'p', 'b', 0)`); err != nil {
		t.Fatal(err)
	}
	// An index the database already has (as a future opm, or a user, may
	// keep) makes the matching helper unnecessary.
	if _, err := raw.Exec(`CREATE INDEX kept_entry_replaces ON channel_entry(replaces)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	db, err := OpenWith(path, OpenOptions{SkipQuickCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for _, c := range []struct {
		set  helperSet
		want int
	}{{helpNone, 0}, {helpEntries, 1}, {helpAll, 1 + len(bundleHelpers)}} {
		tx, err := db.sql.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		w := &writer{tx: tx}
		if err := w.ensureHelperIndexes(ctx, c.set); err != nil {
			t.Fatal(err)
		}
		if len(w.created) != c.want {
			t.Errorf("set %d: created %v, want %d indexes", c.set, w.created, c.want)
		}
		for _, n := range w.created {
			if n == "opm_tmp_entry_replaces" {
				t.Error("built a helper index the database already has")
			}
		}
		if err := w.finish(ctx); err != nil {
			t.Fatal(err)
		}
		var left int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'opm_tmp_%'`).Scan(&left); err != nil || left != 0 {
			t.Errorf("after finish: %d helper indexes left (%v)", left, err)
		}
		tx.Rollback()
	}
}
