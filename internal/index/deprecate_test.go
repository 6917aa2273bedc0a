package index

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
)

func bundlePath(version string) string { return "quay.io/test/op-bundle:" + version }

// bundleNames lists the bundles left in the index.
func bundleNames(t *testing.T, db *DB) []string {
	t.Helper()
	var out []string
	if err := queryEach(context.Background(), db.sql, `SELECT name FROM operatorbundle ORDER BY name`, nil, func(s scanner) error {
		var n string
		if err := s.Scan(&n); err != nil {
			return err
		}
		out = append(out, n)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// edges lists "channel: bundle -> replaced" for every entry, and
// "channel: bundle" for the tails.
func edges(t *testing.T, db *DB) []string {
	t.Helper()
	var out []string
	if err := queryEach(context.Background(), db.sql, `SELECT e.channel_name, e.operatorbundle_name, IFNULL(r.operatorbundle_name, '')
		FROM channel_entry e LEFT JOIN channel_entry r ON r.entry_id = e.replaces`, nil, func(s scanner) error {
		var ch, b, r string
		if err := s.Scan(&ch, &b, &r); err != nil {
			return err
		}
		if r == "" {
			out = append(out, ch+": "+b)
		} else {
			out = append(out, ch+": "+b+" -> "+r)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func heads(t *testing.T, db *DB) string {
	t.Helper()
	var out []string
	if err := queryEach(context.Background(), db.sql, `SELECT name || '=' || IFNULL(head_operatorbundle_name, '') FROM channel ORDER BY name`, nil, func(s scanner) error {
		var x string
		if err := s.Scan(&x); err != nil {
			return err
		}
		out = append(out, x)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, ",")
}

func assertDeprecated(t *testing.T, db *DB, name string) {
	t.Helper()
	if n := count(t, db, `SELECT COUNT(*) FROM deprecated WHERE operatorbundle_name = ?`, name); n != 1 {
		t.Errorf("%s: %d deprecated rows, want 1", name, n)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM properties WHERE operatorbundle_name = ? AND type = 'olm.deprecated' AND value = '{}'`, name); n != 1 {
		t.Errorf("%s: %d olm.deprecated properties, want 1", name, n)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM pragma_foreign_key_check`); n != 0 {
		t.Errorf("%d foreign key violations", n)
	}
}

func eq(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("%s:\n got  %q\n want %q", what, got, want)
	}
}

func TestDeprecateTruncateChain(t *testing.T) {
	db, _ := newDB(t)
	mustAdd(t, db, AddOptions{},
		spec{version: "1.0.0"},
		spec{version: "1.1.0", replaces: "op.v1.0.0"},
		spec{version: "1.2.0", replaces: "op.v1.1.0"},
		spec{version: "1.3.0", replaces: "op.v1.2.0"},
	)
	res, err := db.DeprecateTruncate(context.Background(), []string{bundlePath("1.2.0")}, DeprecateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "bundles", bundleNames(t, db), []string{"op.v1.2.0", "op.v1.3.0"})
	eq(t, "entries", edges(t, db), []string{"stable: op.v1.2.0", "stable: op.v1.3.0 -> op.v1.2.0"})
	if h := heads(t, db); h != "stable=op.v1.3.0" {
		t.Errorf("heads %s", h)
	}
	assertDeprecated(t, db, "op.v1.2.0")
	if len(res.Deprecated) != 1 || len(res.Deprecated[0].Truncated) != 2 || res.Deprecated[0].Truncated[0].Name != "op.v1.1.0" {
		t.Errorf("result %+v", res.Deprecated)
	}
	for _, table := range []string{"properties", "related_image", "api_provider"} {
		if n := count(t, db, `SELECT COUNT(*) FROM `+table+` WHERE operatorbundle_name IN ('op.v1.0.0', 'op.v1.1.0')`); n != 0 {
			t.Errorf("%s: %d rows of truncated bundles left", table, n)
		}
	}
	if n := count(t, db, `SELECT COUNT(*) FROM pragma_foreign_key_check`); n != 0 {
		t.Errorf("%d foreign key violations", n)
	}
	// Deprecating it again changes nothing more.
	if _, err := db.DeprecateTruncate(context.Background(), []string{bundlePath("1.2.0")}, DeprecateOptions{}); err != nil {
		t.Fatal(err)
	}
	assertDeprecated(t, db, "op.v1.2.0")
	eq(t, "bundles", bundleNames(t, db), []string{"op.v1.2.0", "op.v1.3.0"})
}

func TestDeprecateTruncateFollowsSkips(t *testing.T) {
	db, _ := newDB(t)
	mustAdd(t, db, AddOptions{},
		spec{version: "1.0.0"},
		spec{version: "1.1.0", replaces: "op.v1.0.0"},
		spec{version: "1.2.0", replaces: "op.v1.0.0", skips: []string{"op.v1.1.0"}},
		spec{version: "1.3.0", replaces: "op.v1.2.0"},
	)
	if _, err := db.DeprecateTruncate(context.Background(), []string{bundlePath("1.2.0")}, DeprecateOptions{}); err != nil {
		t.Fatal(err)
	}
	eq(t, "bundles", bundleNames(t, db), []string{"op.v1.2.0", "op.v1.3.0"})
	eq(t, "entries", edges(t, db), []string{"stable: op.v1.2.0", "stable: op.v1.3.0 -> op.v1.2.0"})
	assertDeprecated(t, db, "op.v1.2.0")
}

// twoChannels: 1.0.0 is in stable and fast; stable goes 1.0.0 <- 1.1.0 <-
// 1.2.0 (default channel), fast 1.0.0 <- 1.0.1.
func twoChannels(t *testing.T) *DB {
	db, _ := newDB(t)
	mustAdd(t, db, AddOptions{},
		spec{version: "1.0.0", channels: "stable,fast", def: "stable"},
		spec{version: "1.1.0", replaces: "op.v1.0.0", def: "stable"},
		spec{version: "1.2.0", replaces: "op.v1.1.0", def: "stable"},
		spec{version: "1.0.1", replaces: "op.v1.0.0", channels: "fast", def: "stable"},
	)
	return db
}

func TestDeprecateTruncateKeepsBundleOfAnotherChannel(t *testing.T) {
	db := twoChannels(t)
	res, err := db.DeprecateTruncate(context.Background(), []string{bundlePath("1.1.0")}, DeprecateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "bundles", bundleNames(t, db), []string{"op.v1.0.0", "op.v1.0.1", "op.v1.1.0", "op.v1.2.0"})
	eq(t, "entries", edges(t, db), []string{"fast: op.v1.0.0", "fast: op.v1.0.1 -> op.v1.0.0", "stable: op.v1.1.0", "stable: op.v1.2.0 -> op.v1.1.0"})
	if len(res.Deprecated) != 1 || len(res.Deprecated[0].Kept) != 1 || res.Deprecated[0].Kept[0].Name != "op.v1.0.0" || len(res.Deprecated[0].Truncated) != 0 {
		t.Errorf("result %+v", res.Deprecated)
	}
	assertDeprecated(t, db, "op.v1.1.0")
}

func TestDeprecateTruncateHeadOfOtherChannel(t *testing.T) {
	db := twoChannels(t)
	res, err := db.DeprecateTruncate(context.Background(), []string{bundlePath("1.0.1")}, DeprecateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// fast went with its head; 1.0.0 stays in stable; 1.0.1 stays, deprecated,
	// in no channel (as upstream).
	if h := heads(t, db); h != "stable=op.v1.2.0" {
		t.Errorf("heads %s", h)
	}
	eq(t, "entries", edges(t, db), []string{"stable: op.v1.0.0", "stable: op.v1.1.0 -> op.v1.0.0", "stable: op.v1.2.0 -> op.v1.1.0"})
	eq(t, "bundles", bundleNames(t, db), []string{"op.v1.0.0", "op.v1.0.1", "op.v1.1.0", "op.v1.2.0"})
	assertDeprecated(t, db, "op.v1.0.1")
	if len(res.Deprecated) != 1 || strings.Join(res.Deprecated[0].RemovedChannels, ",") != "fast" {
		t.Errorf("result %+v", res.Deprecated)
	}
	// prune-stranded keeps it while its package is there.
	if _, err := db.PruneStranded(context.Background()); err != nil {
		t.Fatal(err)
	}
	eq(t, "bundles after prune-stranded", bundleNames(t, db), []string{"op.v1.0.0", "op.v1.0.1", "op.v1.1.0", "op.v1.2.0"})
}

// snapshotRows is every row of the tables a deprecation changes.
func snapshotRows(t *testing.T, db *DB) string {
	t.Helper()
	var b strings.Builder
	for _, table := range []string{"operatorbundle", "package", "channel", "channel_entry", "properties", "deprecated", "api", "api_provider", "related_image"} {
		rs, err := db.sql.Query(`SELECT * FROM ` + table)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rs.Columns()
		var lines []string
		for rs.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rs.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, fmt.Sprintf("%v", vals))
		}
		rs.Close()
		sort.Strings(lines)
		fmt.Fprintf(&b, "%s:\n%s\n", table, strings.Join(lines, "\n"))
	}
	return b.String()
}

func TestDeprecateTruncateUnknownBundleChangesNothing(t *testing.T) {
	db := twoChannels(t)
	before := snapshotRows(t, db)
	_, err := db.DeprecateTruncate(context.Background(), []string{bundlePath("1.1.0"), "quay.io/test/op-bundle:9.9.9"}, DeprecateOptions{})
	if err == nil || !strings.Contains(err.Error(), "quay.io/test/op-bundle:9.9.9") || !errors.Is(err, ErrBundlePathNotInIndex) {
		t.Fatalf("err = %v, want one naming the unknown bundle path", err)
	}
	if after := snapshotRows(t, db); after != before {
		t.Errorf("index changed by a failed deprecation:\n%s\n---\n%s", before, after)
	}
	// --permissive deprecates the known one and warns about the other.
	res, err := db.DeprecateTruncate(context.Background(), []string{bundlePath("1.1.0"), "quay.io/test/op-bundle:9.9.9"}, DeprecateOptions{Permissive: true})
	if err != nil {
		t.Fatal(err)
	}
	assertDeprecated(t, db, "op.v1.1.0")
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "9.9.9") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

func TestDeprecateTruncateDefaultChannelHead(t *testing.T) {
	db := twoChannels(t)
	before := snapshotRows(t, db)
	// 1.2.0 heads stable, the default channel: refused, and 1.0.1, which
	// could be deprecated, is not either.
	_, err := db.DeprecateTruncate(context.Background(), []string{bundlePath("1.2.0"), bundlePath("1.0.1")}, DeprecateOptions{})
	if !errors.Is(err, ErrDeprecateDefaultChannel) || !strings.Contains(err.Error(), "op.v1.2.0") {
		t.Fatalf("err = %v, want the default channel refusal naming op.v1.2.0", err)
	}
	if after := snapshotRows(t, db); after != before {
		t.Errorf("index changed by a failed deprecation:\n%s\n---\n%s", before, after)
	}
}

func TestDeprecateTruncateCutReachingDefaultHead(t *testing.T) {
	// 1.2.0 heads alpha and replaces 1.1.0, the head of stable (default):
	// upstream refused this.
	db, _ := newDB(t)
	mustAdd(t, db, AddOptions{},
		spec{version: "1.0.0", channels: "alpha,stable", def: "stable"},
		spec{version: "1.1.0", replaces: "op.v1.0.0", channels: "alpha,stable", def: "stable"},
		spec{version: "1.2.0", replaces: "op.v1.1.0", channels: "alpha", def: "stable"},
	)
	_, err := db.DeprecateTruncate(context.Background(), []string{bundlePath("1.2.0")}, DeprecateOptions{})
	if !errors.Is(err, ErrDeprecateDefaultChannel) || !strings.Contains(err.Error(), "op.v1.1.0") {
		t.Fatalf("err = %v, want the default channel refusal naming op.v1.1.0", err)
	}
	// Permissive: a warning, and nothing deprecated.
	res, err := db.DeprecateTruncate(context.Background(), []string{bundlePath("1.2.0")}, DeprecateOptions{Permissive: true})
	if err != nil || len(res.Deprecated) != 0 || len(res.Warnings) != 1 {
		t.Fatalf("permissive: %+v, %v", res, err)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM deprecated`); n != 0 {
		t.Errorf("%d deprecated rows after a refused deprecation", n)
	}
}

func TestDeprecateTruncateAllowPackageRemoval(t *testing.T) {
	db := twoChannels(t)
	mustAdd(t, db, AddOptions{}, spec{pkg: "other", version: "1.0.0"})
	// The default head alone is not enough: the error names fast's head.
	_, err := db.DeprecateTruncate(context.Background(), []string{bundlePath("1.2.0")}, DeprecateOptions{AllowPackageRemoval: true})
	if err == nil || !strings.Contains(err.Error(), "op.v1.0.1 (head of channel fast)") {
		t.Fatalf("err = %v, want one naming fast's head", err)
	}
	res, err := db.DeprecateTruncate(context.Background(), []string{bundlePath("1.2.0"), bundlePath("1.0.1")}, DeprecateOptions{AllowPackageRemoval: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.RemovedPackages == nil || strings.Join(res.RemovedPackages.Packages, ",") != "op" || len(res.RemovedPackages.Removed) != 4 {
		t.Errorf("removed %+v", res.RemovedPackages)
	}
	eq(t, "bundles", bundleNames(t, db), []string{"other.v1.0.0"})
	if n := count(t, db, `SELECT COUNT(*) FROM package`); n != 1 {
		t.Errorf("%d packages, want other alone", n)
	}
}

func TestDeprecateTruncateOnlyBundle(t *testing.T) {
	db, _ := newDB(t)
	mustAdd(t, db, AddOptions{}, spec{version: "1.0.0"})
	if _, err := db.DeprecateTruncate(context.Background(), []string{bundlePath("1.0.0")}, DeprecateOptions{}); !errors.Is(err, ErrDeprecateDefaultChannel) {
		t.Fatalf("err = %v, want the default channel refusal", err)
	}
	if _, err := db.DeprecateTruncate(context.Background(), []string{bundlePath("1.0.0")}, DeprecateOptions{AllowPackageRemoval: true}); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"operatorbundle", "package", "channel", "channel_entry", "properties", "deprecated"} {
		if n := count(t, db, `SELECT COUNT(*) FROM `+table); n != 0 {
			t.Errorf("%s: %d rows left", table, n)
		}
	}
}
