package index

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// writer holds the prepared statements of one write transaction.
type writer struct {
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
	// helperIndexes is set once ensureHelperIndexes ran; created are the
	// indexes it made, dropped before the transaction commits.
	helperIndexes bool
	created       []string
}

var writerStatements = map[string]string{
	"bundle":   `INSERT INTO operatorbundle(name, csv, bundle, bundlepath, skiprange, version, replaces, skips, substitutesfor) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	"api":      `INSERT INTO api(group_name, version, kind, plural) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`,
	"provider": `INSERT INTO api_provider(group_name, version, kind, operatorbundle_name, operatorbundle_version, operatorbundle_path) VALUES (?, ?, ?, ?, ?, ?)`,
	"requirer": `INSERT INTO api_requirer(group_name, version, kind, operatorbundle_name, operatorbundle_version, operatorbundle_path) VALUES (?, ?, ?, ?, ?, ?)`,
	"image":    `INSERT INTO related_image(image, operatorbundle_name) VALUES (?, ?)`,
	"property": `INSERT INTO properties(type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path) VALUES (?, ?, ?, ?, ?)`,
	"dep":      `INSERT INTO dependencies(type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path) VALUES (?, ?, ?, ?, ?)`,
	"channel":  `INSERT INTO channel(name, package_name, head_operatorbundle_name) VALUES (?, ?, ?)`,
	"entry":    `INSERT INTO channel_entry(entry_id, channel_name, package_name, operatorbundle_name, replaces, depth) VALUES (?, ?, ?, ?, ?, ?)`,
	"reentry":  `UPDATE channel_entry SET channel_name = ?, package_name = ?, operatorbundle_name = ?, replaces = ?, depth = ? WHERE entry_id = ?`,
	"rechannel": `INSERT INTO channel(name, package_name, head_operatorbundle_name) VALUES (?, ?, ?)
		ON CONFLICT(name, package_name) DO UPDATE SET head_operatorbundle_name = excluded.head_operatorbundle_name`,
	"oldBundle": `SELECT version, replaces, skips, bundlepath,
		CASE WHEN csv IS NULL OR json_valid(CAST(csv AS TEXT)) = 0 THEN NULL ELSE json_extract(CAST(csv AS TEXT), '$.spec.release') END
		FROM operatorbundle WHERE name = ?`,
}

func newWriter(ctx context.Context, tx *sql.Tx) (*writer, error) {
	w := &writer{tx: tx, stmts: map[string]*sql.Stmt{}}
	for k, q := range writerStatements {
		s, err := tx.PrepareContext(ctx, q)
		if err != nil {
			w.close()
			return nil, fmt.Errorf("prepare %s: %w", k, err)
		}
		w.stmts[k] = s
	}
	return w, nil
}

func (w *writer) close() {
	for _, s := range w.stmts {
		_ = s.Close()
	}
}

// Helper indexes. Deleting rows that other rows may reference makes sqlite
// look for the referencing rows; schema 13 has no index on those columns,
// so each deleted row would scan a whole table (channel_entry.replaces points
// into channel_entry itself). These indexes exist only inside a write
// transaction and are dropped before it commits, so the schema on disk stays
// exactly upstream's. Building one costs a pass over its table, so a write
// builds only those its deletes need (see helperSet).
type helperIndex struct {
	name, table, columns string
}

var (
	// entryHelpers serve deleting channel entries and channels: a rewrite
	// that leaves a package many entries fewer, a cleared package.
	entryHelpers = []helperIndex{
		{"opm_tmp_entry_replaces", "channel_entry", "replaces"},
		{"opm_tmp_entry_package", "channel_entry", "package_name"},
	}
	// bundleHelpers serve deleting bundles (--overwrite-latest, rm), whose
	// rows cascade into every per-bundle table.
	bundleHelpers = []helperIndex{
		{"opm_tmp_provider_bundle", "api_provider", "operatorbundle_name"},
		{"opm_tmp_provider_api", "api_provider", "group_name, version, kind"},
		{"opm_tmp_requirer_bundle", "api_requirer", "operatorbundle_name"},
		{"opm_tmp_requirer_api", "api_requirer", "group_name, version, kind"},
		{"opm_tmp_image_bundle", "related_image", "operatorbundle_name"},
		{"opm_tmp_property_bundle", "properties", "operatorbundle_name"},
		{"opm_tmp_dep_bundle", "dependencies", "operatorbundle_name"},
		{"opm_tmp_channel_head", "channel", "head_operatorbundle_name"},
	}
)

// helperSet says which helper indexes a write needs.
type helperSet int

const (
	helpNone    helperSet = iota
	helpEntries           // channel entries are deleted
	helpAll               // bundles are deleted
)

// helperThreshold is the channel_entry size from which deletes use helper
// indexes; below it a scan is cheaper than building them.
const helperThreshold = 2000

// ensureHelperIndexes creates the helper indexes of set when the database is
// big enough to need them, skipping any whose columns an index of the
// database already leads with. Call it before any savepoint: a rollback to a
// savepoint would drop them again.
func (w *writer) ensureHelperIndexes(ctx context.Context, set helperSet) error {
	return w.ensureHelperIndexesFor(ctx, set, 0)
}

// ensureHelperIndexesFor is ensureHelperIndexes when adding more channel
// entries are about to be written.
func (w *writer) ensureHelperIndexesFor(ctx context.Context, set helperSet, adding int) error {
	if w.helperIndexes || set == helpNone {
		return nil
	}
	// The largest rowid, not COUNT(*): a lookup, where counting reads the
	// whole table.
	var n int64
	if err := w.tx.QueryRowContext(ctx, `SELECT IFNULL(MAX(rowid), 0) FROM channel_entry`).Scan(&n); err != nil {
		return fmt.Errorf("size channel entries: %w", err)
	}
	if n+int64(adding) < helperThreshold {
		return nil
	}
	want := entryHelpers
	if set == helpAll {
		want = append(append([]helperIndex{}, entryHelpers...), bundleHelpers...)
	}
	for _, h := range want {
		covered, err := w.indexed(ctx, h)
		if err != nil {
			return err
		}
		if covered {
			continue
		}
		if _, err := w.tx.ExecContext(ctx, `CREATE INDEX `+h.name+` ON `+h.table+`(`+h.columns+`)`); err != nil {
			return fmt.Errorf("create helper index: %w", err)
		}
		w.created = append(w.created, h.name)
	}
	w.helperIndexes = true
	return nil
}

// indexed reports whether an index of h's table starts with h's columns.
func (w *writer) indexed(ctx context.Context, h helperIndex) (bool, error) {
	cols := strings.Split(strings.ReplaceAll(h.columns, " ", ""), ",")
	var names []string
	if err := queryEach(ctx, w.tx, `SELECT name FROM pragma_index_list(?)`, []any{h.table}, func(s scanner) error {
		var n string
		if err := s.Scan(&n); err != nil {
			return err
		}
		names = append(names, n)
		return nil
	}); err != nil {
		return false, fmt.Errorf("list indexes of %s: %w", h.table, err)
	}
	for _, idx := range names {
		var got []string
		if err := queryEach(ctx, w.tx, `SELECT IFNULL(name, '') FROM pragma_index_info(?) ORDER BY seqno`, []any{idx}, func(s scanner) error {
			var c string
			if err := s.Scan(&c); err != nil {
				return err
			}
			got = append(got, c)
			return nil
		}); err != nil {
			return false, fmt.Errorf("read index %s: %w", idx, err)
		}
		if len(got) >= len(cols) && strings.Join(got[:len(cols)], ",") == strings.Join(cols, ",") {
			return true, nil
		}
	}
	return false, nil
}

// finish drops the helper indexes; call it before commit.
func (w *writer) finish(ctx context.Context) error {
	for _, name := range w.created {
		// IF EXISTS: an index made inside a savepoint that was rolled
		// back is gone already.
		if _, err := w.tx.ExecContext(ctx, `DROP INDEX IF EXISTS `+name); err != nil {
			return fmt.Errorf("drop helper index %s: %w", name, err)
		}
	}
	w.created = nil
	w.helperIndexes = false
	return nil
}

func (w *writer) insertBundle(ctx context.Context, r *rows) error {
	s := w.stmts
	csv, objects, err := r.text()
	if err != nil {
		return err
	}
	if _, err := s["bundle"].ExecContext(ctx, r.Name, csv, objects, r.Path, r.SkipRange, r.VersionStr, r.Replaces, strings.Join(r.Skips, ","), ""); err != nil {
		return fmt.Errorf("insert operatorbundle: %w", err)
	}
	for _, a := range r.Provided {
		if _, err := s["api"].ExecContext(ctx, a.Group, a.Version, a.Kind, a.Plural); err != nil {
			return fmt.Errorf("insert api %s/%s %s: %w", a.Group, a.Version, a.Kind, err)
		}
		if _, err := s["provider"].ExecContext(ctx, a.Group, a.Version, a.Kind, r.Name, r.VersionStr, r.Path); err != nil {
			return fmt.Errorf("insert api_provider %s/%s %s: %w", a.Group, a.Version, a.Kind, err)
		}
	}
	for _, a := range r.Required {
		if _, err := s["api"].ExecContext(ctx, a.Group, a.Version, a.Kind, a.Plural); err != nil {
			return fmt.Errorf("insert api %s/%s %s: %w", a.Group, a.Version, a.Kind, err)
		}
		if _, err := s["requirer"].ExecContext(ctx, a.Group, a.Version, a.Kind, r.Name, r.VersionStr, r.Path); err != nil {
			return fmt.Errorf("insert api_requirer %s/%s %s: %w", a.Group, a.Version, a.Kind, err)
		}
	}
	for _, img := range r.Images {
		if _, err := s["image"].ExecContext(ctx, img, r.Name); err != nil {
			return fmt.Errorf("insert related_image %s: %w", img, err)
		}
	}
	for _, p := range r.Properties {
		if _, err := s["property"].ExecContext(ctx, p.Type, string(p.Value), r.Name, r.VersionStr, r.Path); err != nil {
			return fmt.Errorf("insert property %s: %w", p.Type, err)
		}
	}
	for _, d := range r.Deps {
		if _, err := s["dep"].ExecContext(ctx, d.Type, d.Value, r.Name, r.VersionStr, r.Path); err != nil {
			return fmt.Errorf("insert dependency %s: %w", d.Type, err)
		}
	}
	return nil
}

// clearChannels removes a package's channels and entries, keeping its row
// (its default channel is set again by writeChannels).
func (w *writer) clearChannels(ctx context.Context, pkg string) error {
	for _, q := range []string{
		// First unhook the default channel: deleting a channel would
		// otherwise cascade to the package row.
		`UPDATE package SET default_channel = NULL WHERE name = ?`,
		`DELETE FROM channel_entry WHERE package_name = ?`,
		`DELETE FROM channel WHERE package_name = ?`,
	} {
		if _, err := w.tx.ExecContext(ctx, q, pkg); err != nil {
			return fmt.Errorf("clear channels of %s: %w", pkg, err)
		}
	}
	if err := deleteEntryNotes(ctx, w.tx, pkg); err != nil {
		return fmt.Errorf("clear channels of %s: %w", pkg, err)
	}
	return nil
}

// writeChannels inserts a new package's channels and entries and sets its
// default channel.
func (w *writer) writeChannels(ctx context.Context, pkg string, graph []chanGraph, def string) error {
	return w.rewriteChannels(ctx, pkg, &oldPackage{}, graph, def)
}

// surplusIndexAt is the number of channel entries to delete from which
// building an index on channel_entry(replaces) is cheaper than the pass
// over the table that deleting each one costs without it.
const surplusIndexAt = 5

// rewriteChannels writes a package's channels and entries and sets its
// default channel, reusing the rows old had: channels are updated, and
// channel_entry rows keep their ids and take new values. Only rows beyond
// the new count are deleted, since deleting one makes sqlite look for the
// rows replacing it, a pass over the whole table (schema 13 has no index on
// channel_entry.replaces); an add only grows a package, so it deletes none
// and its cost does not grow with the database.
func (w *writer) rewriteChannels(ctx context.Context, pkg string, old *oldPackage, graph []chanGraph, def string) error {
	if old.exists {
		// Unhook the default channel first: deleting a channel would
		// otherwise cascade to the package row.
		if _, err := w.tx.ExecContext(ctx, `UPDATE package SET default_channel = NULL WHERE name = ?`, pkg); err != nil {
			return fmt.Errorf("rewrite channels of %s: %w", pkg, err)
		}
		if err := deleteEntryNotes(ctx, w.tx, pkg); err != nil {
			return fmt.Errorf("rewrite channels of %s: %w", pkg, err)
		}
	}
	keep := map[string]bool{}
	total := 0
	for _, g := range graph {
		if _, err := w.stmts["rechannel"].ExecContext(ctx, g.Name, pkg, g.Head); err != nil {
			return fmt.Errorf("write channel %s: %w", g.Name, err)
		}
		keep[g.Name] = true
		total += len(g.Entries)
	}
	// Ids grow with position (the old ids ascending, then new ones above
	// every id), so the package's entries in id order are in layout order,
	// as readers ordering by entry_id expect.
	reused := min(total, len(old.entries))
	ids := append(make([]int64, 0, total), old.entries[:reused]...)
	if total > reused {
		var next int64
		if err := w.tx.QueryRowContext(ctx, `SELECT IFNULL(MAX(entry_id), 0) FROM channel_entry`).Scan(&next); err != nil {
			return fmt.Errorf("next entry id: %w", err)
		}
		for len(ids) < total {
			next++
			ids = append(ids, next)
		}
	}
	first := 0
	for _, g := range graph {
		// An entry replaces a later one of its channel: written last to
		// first, every row finds the row it replaces already there, so no
		// deferred constraint is left open (with one open, sqlite searches
		// the table for rows it might satisfy on every insert).
		for i := len(g.Entries) - 1; i >= 0; i-- {
			e := g.Entries[i]
			id := ids[first+i]
			var replaces any
			if e.Replaces >= 0 {
				replaces = ids[first+e.Replaces]
			}
			var err error
			if first+i < reused {
				_, err = w.stmts["reentry"].ExecContext(ctx, g.Name, pkg, e.Bundle, replaces, e.Depth, id)
			} else {
				_, err = w.stmts["entry"].ExecContext(ctx, id, g.Name, pkg, e.Bundle, replaces, e.Depth)
			}
			if err != nil {
				return fmt.Errorf("write channel entry of %s in %s: %w", e.Bundle, g.Name, err)
			}
		}
		first += len(g.Entries)
	}
	if surplus := old.entries[reused:]; len(surplus) > 0 {
		if len(surplus) >= surplusIndexAt {
			if err := w.ensureHelperIndexesFor(ctx, helpEntries, 0); err != nil {
				return err
			}
		}
		for _, id := range surplus {
			if _, err := w.tx.ExecContext(ctx, `DELETE FROM channel_entry WHERE entry_id = ?`, id); err != nil {
				return fmt.Errorf("delete channel entry %d of %s: %w", id, pkg, err)
			}
		}
	}
	for _, c := range old.channels {
		if keep[c] {
			continue
		}
		if _, err := w.tx.ExecContext(ctx, `DELETE FROM channel WHERE name = ? AND package_name = ?`, c, pkg); err != nil {
			return fmt.Errorf("delete channel %s of %s: %w", c, pkg, err)
		}
	}
	if _, err := w.tx.ExecContext(ctx, `INSERT INTO package(name, default_channel) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET default_channel = excluded.default_channel`, pkg, nullable(def)); err != nil {
		return fmt.Errorf("set default channel %s of %s: %w", def, pkg, err)
	}
	return nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
