package index

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

// RemoveResult says what RemovePackages removed.
type RemoveResult struct {
	Packages []string    `json:"packages"`
	Removed  []BundleRef `json:"removed"`
	Warnings []string    `json:"warnings,omitempty"`
}

// RemovePackages deletes packages and every bundle only they reference, in
// one transaction. APIs stay while another bundle provides or requires them.
// Naming a package that is not in the index is an error, and nothing is
// removed then.
func (d *DB) RemovePackages(ctx context.Context, names []string) (*RemoveResult, error) {
	if d.readOnly {
		return nil, fmt.Errorf("remove from index %s: opened read-only", d.path)
	}
	names = dedupe(names)
	sort.Strings(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("remove from index %s: no package given", d.path)
	}
	tx, err := d.sql.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("remove from index %s: begin: %w", d.path, err)
	}
	defer d.rollBack(tx)

	var missing []string
	for _, p := range names {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM package WHERE name = ?`, p).Scan(&n); err != nil {
			return nil, fmt.Errorf("remove from index %s: read package %s: %w", d.path, p, err)
		}
		if n == 0 {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("remove from index %s: package(s) %s not in the index; nothing removed", d.path, strings.Join(missing, ", "))
	}
	res := &RemoveResult{Packages: names}
	if changed, err := fixTriggers(ctx, tx); err != nil {
		return nil, fmt.Errorf("remove from index %s: %w", d.path, err)
	} else if changed {
		res.Warnings = append(res.Warnings, "replaced the database's api cleanup triggers by opm's (upstream's dropped APIs still provided by other bundles; see docs/compatibility.md)")
	}
	w := &writer{tx: tx}
	if err := w.ensureHelperIndexes(ctx, helpAll); err != nil {
		return nil, fmt.Errorf("remove from index %s: %w", d.path, err)
	}
	for _, p := range names {
		bundles, err := removePackageTx(ctx, tx, p)
		if err != nil {
			return nil, fmt.Errorf("remove from index %s: %w", d.path, err)
		}
		res.Removed = append(res.Removed, bundles...)
	}
	if err := w.finish(ctx); err != nil {
		return nil, fmt.Errorf("remove from index %s: %w", d.path, err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("remove from index %s: commit: %w", d.path, err)
	}
	return res, nil
}

// removePackageTx removes one package, its channels and the bundles only it
// references, and returns those bundles.
func removePackageTx(ctx context.Context, tx *sql.Tx, p string) ([]BundleRef, error) {
	// The package's bundles: those in its channels, and those whose
	// olm.package property names it (upstream --permissive could leave
	// bundles without channel entries). Bundles another package's
	// channels reference stay.
	var bundles []BundleRef
	err := queryEach(ctx, tx, `SELECT ob.name, ob.version, ob.bundlepath FROM operatorbundle ob
		WHERE (ob.name IN (SELECT operatorbundle_name FROM channel_entry WHERE package_name = ?1)
		    OR ob.name IN (SELECT operatorbundle_name FROM properties WHERE type = 'olm.package' AND json_valid(value) AND json_extract(value, '$.packageName') = ?1))
		  AND ob.name NOT IN (SELECT operatorbundle_name FROM channel_entry WHERE package_name <> ?1)
		ORDER BY ob.name`, []any{p}, func(s scanner) error {
		var b BundleRef
		var version, path sql.NullString
		if err := s.Scan(&b.Name, &version, &path); err != nil {
			return err
		}
		b.Package, b.Version, b.Path = p, version.String, path.String
		bundles = append(bundles, b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read bundles of %s: %w", p, err)
	}
	for _, q := range []string{
		`UPDATE package SET default_channel = NULL WHERE name = ?`,
		`DELETE FROM channel_entry WHERE package_name = ?`,
		`DELETE FROM channel WHERE package_name = ?`,
		`DELETE FROM package WHERE name = ?`,
	} {
		if _, err := tx.ExecContext(ctx, q, p); err != nil {
			return nil, fmt.Errorf("package %s: %w", p, err)
		}
	}
	// The package's deprecations and custom blobs go with it.
	if err := deleteMetas(ctx, tx, p); err != nil {
		return nil, fmt.Errorf("package %s: %w", p, err)
	}
	if err := deleteEntryNotes(ctx, tx, p); err != nil {
		return nil, fmt.Errorf("package %s: %w", p, err)
	}
	for _, b := range bundles {
		if _, err := tx.ExecContext(ctx, `DELETE FROM operatorbundle WHERE name = ?`, b.Name); err != nil {
			return nil, fmt.Errorf("bundle %s: %w", b.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM deprecated WHERE operatorbundle_name = ?`, b.Name); err != nil {
			return nil, fmt.Errorf("bundle %s: %w", b.Name, err)
		}
	}
	return bundles, nil
}
