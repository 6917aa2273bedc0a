package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// DeprecateOptions are the settings of DeprecateTruncate.
type DeprecateOptions struct {
	// Permissive turns a bundle path the index does not hold, and a bundle
	// that cannot be deprecated, into a warning: that bundle is left as it
	// was and the others are deprecated (upstream --permissive).
	Permissive bool
	// AllowPackageRemoval lets the head of a package's default channel be
	// deprecated when the heads of all its channels are: the package is
	// then removed (upstream --allow-package-removal).
	AllowPackageRemoval bool
}

// Deprecation is what deprecating one bundle did.
type Deprecation struct {
	Bundle BundleRef `json:"bundle"`
	// Truncated are the bundles it replaced (through replaces and skips)
	// that were taken out of its channels and, being in no other channel,
	// out of the index.
	Truncated []BundleRef `json:"truncated,omitempty"`
	// Kept are bundles it replaced that were taken out of its channels but
	// stay in others (or are still replaced by a bundle outside the cut).
	Kept []BundleRef `json:"kept,omitempty"`
	// RemovedChannels are the channels it headed, which go away with it.
	RemovedChannels []string `json:"removedChannels,omitempty"`
}

// DeprecateResult says what DeprecateTruncate did.
type DeprecateResult struct {
	Deprecated []Deprecation `json:"deprecated"`
	// RemovedPackages are removed whole by AllowPackageRemoval.
	RemovedPackages *RemoveResult `json:"removedPackages,omitempty"`
	Warnings        []string      `json:"warnings,omitempty"`
}

// ErrDeprecateDefaultChannel says a deprecation would remove the head of
// its package's default channel (upstream's "Bundle deprecation causing
// default channel removal").
var ErrDeprecateDefaultChannel = errors.New("the deprecation would remove the head of the package's default channel")

// ErrBundlePathNotInIndex says no bundle of the index has the given path.
var ErrBundlePathNotInIndex = errors.New("no bundle of the index has this bundle path (image)")

// ceRow is one channel_entry row.
type ceRow struct {
	id       int64
	channel  string
	bundle   string
	replaces int64 // 0 for none
}

// DeprecateTruncate deprecates the bundles with the given bundle paths
// (image references), as upstream's `index deprecatetruncate` and
// `registry deprecatetruncate`: each bundle is marked deprecated (a row of
// the deprecated table and an olm.deprecated property) and becomes the tail
// of its channels; every bundle it replaces, transitively through replaces
// and skips, is taken out of the channels the deprecated bundle is in, and
// out of the index when it is in no other channel and nothing outside the
// cut replaces it. A channel the deprecated bundle heads is removed. A
// deprecation that would take away the head of the package's default
// channel is refused, unless AllowPackageRemoval is set and the heads of
// all the package's channels are deprecated together: the package is then
// removed.
//
// Unlike upstream, which committed bundle by bundle, everything happens in
// one transaction: on error nothing is changed.
func (d *DB) DeprecateTruncate(ctx context.Context, bundlePaths []string, opts DeprecateOptions) (*DeprecateResult, error) {
	if d.readOnly {
		return nil, fmt.Errorf("deprecate bundles in %s: opened read-only", d.path)
	}
	paths := dedupe(bundlePaths)
	if len(paths) == 0 {
		return nil, fmt.Errorf("deprecate bundles in %s: no bundle given", d.path)
	}
	tx, err := d.sql.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("deprecate bundles in %s: begin: %w", d.path, err)
	}
	defer d.rollBack(tx)
	res := &DeprecateResult{}
	fail := func(err error) (*DeprecateResult, error) {
		return nil, fmt.Errorf("deprecate bundles in %s: %w", d.path, err)
	}
	if changed, err := fixTriggers(ctx, tx); err != nil {
		return fail(err)
	} else if changed {
		res.Warnings = append(res.Warnings, "replaced the database's api cleanup triggers by opm's (upstream's dropped APIs still provided by other bundles; see docs/compatibility.md)")
	}
	w := &writer{tx: tx}
	if err := w.ensureHelperIndexes(ctx, helpAll); err != nil {
		return fail(err)
	}

	// Every path must name a bundle; upstream checked them all first too.
	var problems []error
	refs := map[string]BundleRef{}
	var todo []string
	for _, p := range paths {
		b, err := bundleByPath(ctx, tx, p)
		if errors.Is(err, ErrBundlePathNotInIndex) {
			problems = append(problems, fmt.Errorf("bundle %s: %w", p, err))
			continue
		}
		if err != nil {
			return fail(fmt.Errorf("bundle %s: %w", p, err))
		}
		refs[p] = b
		todo = append(todo, p)
	}

	if opts.AllowPackageRemoval {
		var removePkgs []string
		removed := map[string]bool{}
		for _, p := range todo {
			pkg, ok, err := defaultHeadPackage(ctx, tx, refs[p].Name)
			if err != nil {
				return fail(err)
			}
			if !ok || removed[pkg] {
				continue
			}
			heads, err := channelHeads(ctx, tx, pkg)
			if err != nil {
				return fail(err)
			}
			given := map[string]bool{}
			for _, q := range todo {
				given[refs[q].Name] = true
			}
			var missing []string
			for _, ch := range sortedChannels(heads) {
				if !given[heads[ch]] {
					missing = append(missing, fmt.Sprintf("%s (head of channel %s)", heads[ch], ch))
				}
			}
			if len(missing) > 0 {
				// Upstream stopped here, whatever --permissive said.
				return fail(fmt.Errorf("bundle %s heads the default channel of package %s: removing the package needs the heads of all its channels deprecated too; also deprecate %s", p, pkg, strings.Join(missing, ", ")))
			}
			removed[pkg] = true
			removePkgs = append(removePkgs, pkg)
		}
		if len(removePkgs) > 0 {
			sort.Strings(removePkgs)
			rm := &RemoveResult{Packages: removePkgs}
			for _, pkg := range removePkgs {
				bs, err := removePackageTx(ctx, tx, pkg)
				if err != nil {
					return fail(err)
				}
				rm.Removed = append(rm.Removed, bs...)
			}
			res.RemovedPackages = rm
			var rest []string
			for _, p := range todo {
				if !removed[refs[p].Package] {
					rest = append(rest, p)
				}
			}
			todo = rest
		}
	}

	for i, p := range todo {
		b := refs[p]
		// A bundle an earlier one in this call truncated is gone: nothing
		// left to deprecate (upstream checked again before each bundle).
		if still, err := bundleByPath(ctx, tx, p); errors.Is(err, ErrBundlePathNotInIndex) {
			res.Warnings = append(res.Warnings, fmt.Sprintf("bundle %s (%s) was truncated by an earlier deprecation in this call", b.Name, p))
			continue
		} else if err != nil {
			return fail(fmt.Errorf("bundle %s: %w", p, err))
		} else {
			b = still
		}
		sp := fmt.Sprintf("opm_deprecate_%d", i)
		if _, err := tx.ExecContext(ctx, `SAVEPOINT `+sp); err != nil {
			return fail(err)
		}
		dep, err := deprecateOne(ctx, tx, b)
		if err != nil {
			if rerr := rollbackSavepoint(ctx, tx, sp); rerr != nil {
				return fail(rerr)
			}
			if !errors.Is(err, ErrDeprecateDefaultChannel) {
				return fail(fmt.Errorf("bundle %s (%s): %w", b.Name, p, err))
			}
			problems = append(problems, fmt.Errorf("bundle %s (%s): %w", b.Name, p, err))
			continue
		}
		if _, err := tx.ExecContext(ctx, `RELEASE `+sp); err != nil {
			return fail(err)
		}
		res.Deprecated = append(res.Deprecated, *dep)
	}
	if len(problems) > 0 {
		if !opts.Permissive {
			return fail(fmt.Errorf("nothing changed: %w", errors.Join(problems...)))
		}
		for _, e := range problems {
			res.Warnings = append(res.Warnings, e.Error()+"; skipped (--permissive)")
		}
	}
	// Deprecated records of bundles no longer in the index go, as upstream.
	if _, err := tx.ExecContext(ctx, `DELETE FROM deprecated WHERE operatorbundle_name NOT IN (SELECT name FROM operatorbundle)`); err != nil {
		return fail(fmt.Errorf("deprecated records: %w", err))
	}
	if err := w.finish(ctx); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(fmt.Errorf("commit: %w", err))
	}
	return res, nil
}

func sortedChannels(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// bundleByPath finds the bundle with this bundle path, and its package.
func bundleByPath(ctx context.Context, tx *sql.Tx, path string) (BundleRef, error) {
	var b BundleRef
	var version, pkg sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT ob.name, ob.version,
		COALESCE((SELECT package_name FROM channel_entry WHERE operatorbundle_name = ob.name LIMIT 1),
		         (SELECT json_extract(value, '$.packageName') FROM properties WHERE operatorbundle_name = ob.name AND type = 'olm.package' AND json_valid(value) LIMIT 1))
		FROM operatorbundle ob WHERE ob.bundlepath = ? ORDER BY ob.name LIMIT 1`, path).Scan(&b.Name, &version, &pkg)
	if errors.Is(err, sql.ErrNoRows) {
		return b, ErrBundlePathNotInIndex
	}
	if err != nil {
		return b, err
	}
	b.Version, b.Package, b.Path = version.String, pkg.String, path
	return b, nil
}

// defaultHeadPackage says whether bundle heads its package's default
// channel, and which package that is.
func defaultHeadPackage(ctx context.Context, tx *sql.Tx, bundle string) (string, bool, error) {
	var pkg string
	err := tx.QueryRowContext(ctx, `SELECT p.name FROM package p JOIN channel c ON c.package_name = p.name AND c.name = p.default_channel
		WHERE c.head_operatorbundle_name = ? LIMIT 1`, bundle).Scan(&pkg)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read default channel head: %w", err)
	}
	return pkg, true, nil
}

// channelHeads maps each channel of pkg to its head.
func channelHeads(ctx context.Context, tx *sql.Tx, pkg string) (map[string]string, error) {
	heads := map[string]string{}
	err := queryEach(ctx, tx, `SELECT name, IFNULL(head_operatorbundle_name, '') FROM channel WHERE package_name = ?`, []any{pkg}, func(s scanner) error {
		var ch, head string
		if err := s.Scan(&ch, &head); err != nil {
			return err
		}
		heads[ch] = head
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read channels of %s: %w", pkg, err)
	}
	return heads, nil
}

// deprecateOne deprecates and truncates one bundle.
func deprecateOne(ctx context.Context, tx *sql.Tx, b BundleRef) (*Deprecation, error) {
	dep := &Deprecation{Bundle: b}
	// The package's channel entries: the replaces graph lives there, one
	// edge per replaces or skips in each channel.
	var entries []ceRow
	byID := map[int64]*ceRow{}
	err := queryEach(ctx, tx, `SELECT entry_id, channel_name, operatorbundle_name, IFNULL(replaces, 0) FROM channel_entry
		WHERE package_name = ? ORDER BY entry_id`, []any{b.Package}, func(s scanner) error {
		var e ceRow
		var name sql.NullString
		if err := s.Scan(&e.id, &e.channel, &name, &e.replaces); err != nil {
			return err
		}
		e.bundle = name.String
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read channel entries of %s: %w", b.Package, err)
	}
	for i := range entries {
		byID[entries[i].id] = &entries[i]
	}
	replaces := map[string][]string{}   // bundle -> bundles it replaces or skips, any channel
	replacedBy := map[string][]string{} // bundle -> bundles replacing or skipping it, any channel
	channels := map[string]map[string]bool{}
	for _, e := range entries {
		if channels[e.bundle] == nil {
			channels[e.bundle] = map[string]bool{}
		}
		channels[e.bundle][e.channel] = true
		if r, ok := byID[e.replaces]; ok && e.replaces != 0 {
			replaces[e.bundle] = append(replaces[e.bundle], r.bundle)
			replacedBy[r.bundle] = append(replacedBy[r.bundle], e.bundle)
		}
	}

	// The cut: the bundle and all it replaces, breadth first.
	order := []string{b.Name}
	inCut := map[string]bool{b.Name: true}
	for i := 0; i < len(order); i++ {
		for _, r := range replaces[order[i]] {
			if !inCut[r] {
				inCut[r] = true
				order = append(order, r)
			}
		}
	}
	heads, err := channelHeads(ctx, tx, b.Package)
	if err != nil {
		return nil, err
	}
	var def sql.NullString
	if err := tx.QueryRowContext(ctx, `SELECT default_channel FROM package WHERE name = ?`, b.Package).Scan(&def); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("read default channel of %s: %w", b.Package, err)
	}
	if def.Valid {
		if h := heads[def.String]; h != "" && inCut[h] {
			what := "it heads"
			if h != b.Name {
				what = "it replaces " + h + ", the head of"
			}
			return nil, fmt.Errorf("%w: %s default channel %s of package %s (publish a newer bundle in %s, or make another channel the default, first; or deprecate the heads of all channels with --allow-package-removal to remove the package)",
				ErrDeprecateDefaultChannel, what, def.String, b.Package, def.String)
		}
	}

	own := channels[b.Name]
	for _, x := range order[1:] {
		for ch := range channels[x] {
			if own[ch] {
				if _, err := tx.ExecContext(ctx, `DELETE FROM channel_entry WHERE package_name = ? AND channel_name = ? AND operatorbundle_name = ?`, b.Package, ch, x); err != nil {
					return nil, fmt.Errorf("take %s out of channel %s: %w", x, ch, err)
				}
			}
		}
		ref, err := bundleRefByName(ctx, tx, x, b.Package)
		if err != nil {
			return nil, err
		}
		keep := false
		for ch := range channels[x] {
			if !own[ch] {
				keep = true
			}
		}
		for _, by := range replacedBy[x] {
			if !inCut[by] {
				keep = true
			}
		}
		if keep {
			dep.Kept = append(dep.Kept, ref)
			continue
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM channel_entry WHERE operatorbundle_name = ?`, x); err != nil {
			return nil, fmt.Errorf("remove %s: %w", x, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM operatorbundle WHERE name = ?`, x); err != nil {
			return nil, fmt.Errorf("remove %s: %w", x, err)
		}
		dep.Truncated = append(dep.Truncated, ref)
	}
	// The deprecated bundle is the tail of its channels from now on.
	if _, err := tx.ExecContext(ctx, `UPDATE channel_entry SET replaces = NULL WHERE operatorbundle_name = ?`, b.Name); err != nil {
		return nil, fmt.Errorf("make %s a channel tail: %w", b.Name, err)
	}
	// Its skips gave it one entry per skipped bundle: now that it replaces
	// nothing, one entry per channel is enough; the others' referrers move
	// to it.
	keepEntry := map[string]int64{}
	for _, e := range entries {
		if e.bundle != b.Name {
			continue
		}
		first, ok := keepEntry[e.channel]
		if !ok {
			keepEntry[e.channel] = e.id
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE channel_entry SET replaces = ? WHERE replaces = ?`, first, e.id); err != nil {
			return nil, fmt.Errorf("merge entries of %s: %w", b.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM channel_entry WHERE entry_id = ?`, e.id); err != nil {
			return nil, fmt.Errorf("merge entries of %s: %w", b.Name, err)
		}
	}
	// Channels it heads go (their entries with them), as upstream: a
	// channel whose head cannot be installed would still be listed.
	for _, ch := range sortedChannels(heads) {
		if heads[ch] == b.Name {
			dep.RemovedChannels = append(dep.RemovedChannels, ch)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM channel WHERE package_name = ? AND head_operatorbundle_name = ?`, b.Package, b.Name); err != nil {
		return nil, fmt.Errorf("remove channels headed by %s: %w", b.Name, err)
	}
	// Entries that pointed at removed ones would break the foreign key.
	if _, err := tx.ExecContext(ctx, `UPDATE channel_entry SET replaces = NULL WHERE package_name = ? AND replaces IS NOT NULL AND replaces NOT IN (SELECT entry_id FROM channel_entry)`, b.Package); err != nil {
		return nil, fmt.Errorf("unhook removed entries: %w", err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM properties WHERE operatorbundle_name = ? AND type = 'olm.deprecated'`, b.Name).Scan(&n); err != nil {
		return nil, fmt.Errorf("read properties of %s: %w", b.Name, err)
	}
	if n == 0 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO properties(type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path) VALUES ('olm.deprecated', '{}', ?, ?, ?)`,
			b.Name, nullable(b.Version), nullable(b.Path)); err != nil {
			return nil, fmt.Errorf("mark %s deprecated: %w", b.Name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO deprecated(operatorbundle_name) VALUES (?)`, b.Name); err != nil {
		return nil, fmt.Errorf("mark %s deprecated: %w", b.Name, err)
	}
	return dep, nil
}

func bundleRefByName(ctx context.Context, tx *sql.Tx, name, pkg string) (BundleRef, error) {
	r := BundleRef{Package: pkg, Name: name}
	var version, path sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT version, bundlepath FROM operatorbundle WHERE name = ?`, name).Scan(&version, &path)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("read bundle %s: %w", name, err)
	}
	r.Version, r.Path = version.String, path.String
	return r, nil
}
