package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
)

// PruneResult says what Prune kept and removed.
type PruneResult struct {
	Kept    []string      `json:"kept"`
	Removed *RemoveResult `json:"removed,omitempty"`
	// Warnings name packages asked to be kept that are not in the index
	// (upstream ignored them silently).
	Warnings []string `json:"warnings,omitempty"`
}

// Prune keeps only the named packages: every other package is removed with
// its bundles, in one transaction (upstream `index prune -p` and
// `registry prune -p`). Keeping a package the index does not hold is not an
// error, as upstream, but is reported. An empty keep list is refused: it
// would empty the index, which is more likely a scripting mistake.
func (d *DB) Prune(ctx context.Context, keep []string) (*PruneResult, error) {
	keep = dedupe(keep)
	if len(keep) == 0 {
		return nil, fmt.Errorf("prune index %s: no package to keep given (--packages); refusing to remove every package", d.path)
	}
	all, err := d.PackageNames(ctx)
	if err != nil {
		return nil, err
	}
	keepSet := map[string]bool{}
	for _, k := range keep {
		keepSet[k] = true
	}
	res := &PruneResult{}
	present := map[string]bool{}
	var drop []string
	for _, p := range all {
		present[p] = true
		if keepSet[p] {
			res.Kept = append(res.Kept, p)
		} else {
			drop = append(drop, p)
		}
	}
	sort.Strings(keep)
	for _, k := range keep {
		if !present[k] {
			res.Warnings = append(res.Warnings, fmt.Sprintf("package %s is not in the index; nothing to keep", k))
		}
	}
	if len(drop) == 0 {
		return res, nil
	}
	rm, err := d.RemovePackages(ctx, drop)
	if err != nil {
		return nil, fmt.Errorf("prune index %s: %w", d.path, err)
	}
	res.Removed = rm
	return res, nil
}

// PruneStrandedResult lists the bundles PruneStranded removed.
type PruneStrandedResult struct {
	Removed  []BundleRef `json:"removed"`
	Warnings []string    `json:"warnings,omitempty"`
}

// PruneStranded removes stranded bundles: bundles no channel entry refers
// to (left behind by upstream's non-atomic adds, overwrites and removals),
// in one transaction. As upstream v1.73.0, a deprecated bundle is kept while
// its package is still in the index (deprecatetruncate leaves deprecated
// heads without entries on purpose) and removed once its package is gone;
// deprecated records of bundles no longer present are dropped.
func (d *DB) PruneStranded(ctx context.Context) (*PruneStrandedResult, error) {
	if d.readOnly {
		return nil, fmt.Errorf("prune stranded bundles of %s: opened read-only", d.path)
	}
	tx, err := d.sql.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("prune stranded bundles of %s: begin: %w", d.path, err)
	}
	defer d.rollBack(tx)
	res := &PruneStrandedResult{}
	if changed, err := fixTriggers(ctx, tx); err != nil {
		return nil, fmt.Errorf("prune stranded bundles of %s: %w", d.path, err)
	} else if changed {
		res.Warnings = append(res.Warnings, "replaced the database's api cleanup triggers by opm's (upstream's dropped APIs still provided by other bundles; see docs/compatibility.md)")
	}
	w := &writer{tx: tx}
	if err := w.ensureHelperIndexes(ctx, helpAll); err != nil {
		return nil, fmt.Errorf("prune stranded bundles of %s: %w", d.path, err)
	}

	packages := map[string]bool{}
	if err := queryEach(ctx, tx, `SELECT name FROM package`, nil, func(s scanner) error {
		var n string
		if err := s.Scan(&n); err != nil {
			return err
		}
		packages[n] = true
		return nil
	}); err != nil {
		return nil, fmt.Errorf("prune stranded bundles of %s: %w", d.path, err)
	}

	var doomed []BundleRef
	err = queryEach(ctx, tx, `SELECT ob.name, ob.version, ob.bundlepath, ob.name IN (SELECT operatorbundle_name FROM deprecated),
		(SELECT value FROM properties p WHERE p.operatorbundle_name = ob.name AND p.type = 'olm.package' LIMIT 1)
		FROM operatorbundle ob
		WHERE ob.name NOT IN (SELECT operatorbundle_name FROM channel_entry WHERE operatorbundle_name IS NOT NULL)
		ORDER BY ob.name`, nil, func(s scanner) error {
		var b BundleRef
		var version, path, pkgProp sql.NullString
		var deprecated bool
		if err := s.Scan(&b.Name, &version, &path, &deprecated, &pkgProp); err != nil {
			return err
		}
		b.Version, b.Path = version.String, path.String
		var prop struct {
			PackageName string `json:"packageName"`
		}
		if pkgProp.Valid {
			_ = json.Unmarshal([]byte(pkgProp.String), &prop)
		}
		b.Package = prop.PackageName
		if deprecated && packages[prop.PackageName] {
			return nil
		}
		doomed = append(doomed, b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("prune stranded bundles of %s: %w", d.path, err)
	}
	for _, b := range doomed {
		if _, err := tx.ExecContext(ctx, `DELETE FROM operatorbundle WHERE name = ?`, b.Name); err != nil {
			return nil, fmt.Errorf("prune stranded bundles of %s: bundle %s: %w", d.path, b.Name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM deprecated WHERE operatorbundle_name NOT IN (SELECT name FROM operatorbundle)`); err != nil {
		return nil, fmt.Errorf("prune stranded bundles of %s: deprecated records: %w", d.path, err)
	}
	if err := w.finish(ctx); err != nil {
		return nil, fmt.Errorf("prune stranded bundles of %s: %w", d.path, err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("prune stranded bundles of %s: commit: %w", d.path, err)
	}
	res.Removed = doomed
	return res, nil
}
