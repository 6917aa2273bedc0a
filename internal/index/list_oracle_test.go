package index

// An oracle for the tests, not the product: the `alpha list` rows read
// straight from the tables, which the rows internal/fbc/graph derives from
// a rendered catalog must equal (graph_oracle_test.go).

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
)

// ListPackages lists every package, sorted by name.
func (d *DB) ListPackages(ctx context.Context) ([]PackageRow, error) {
	var out []PackageRow
	err := queryEach(ctx, d.sql, `SELECT p.name, p.default_channel, c.head_operatorbundle_name,
		CASE WHEN ob.csv IS NULL OR json_valid(CAST(ob.csv AS TEXT)) = 0 THEN NULL ELSE json_extract(CAST(ob.csv AS TEXT), '$.spec.displayName') END
		FROM package p
		LEFT JOIN channel c ON c.package_name = p.name AND c.name = p.default_channel
		LEFT JOIN operatorbundle ob ON ob.name = c.head_operatorbundle_name
		ORDER BY p.name`, nil, func(s scanner) error {
		var r PackageRow
		var def, head, display sql.NullString
		if err := s.Scan(&r.Name, &def, &head, &display); err != nil {
			return err
		}
		r.DefaultChannel, r.DisplayName = def.String, display.String
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read index %s: list packages: %w", d.path, err)
	}
	return out, nil
}

// ListChannels lists the channels of pkg (every package when pkg is ""),
// sorted by package and channel. A package that is not in the index is an
// error, as upstream.
func (d *DB) ListChannels(ctx context.Context, pkg string) ([]ChannelRow, error) {
	if err := d.checkPackage(ctx, pkg); err != nil {
		return nil, err
	}
	var out []ChannelRow
	err := queryEach(ctx, d.sql, `SELECT package_name, name, head_operatorbundle_name FROM channel
		WHERE ?1 = '' OR package_name = ?1 ORDER BY package_name, name`, []any{pkg}, func(s scanner) error {
		var r ChannelRow
		var head sql.NullString
		if err := s.Scan(&r.Package, &r.Channel, &head); err != nil {
			return err
		}
		r.Head = head.String
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read index %s: list channels: %w", d.path, err)
	}
	return out, nil
}

// ListBundles lists every bundle of every channel of pkg (every package when
// pkg is ""), sorted by package, channel and bundle name. Replaces and Skips
// are the channel's graph edges (in semver modes the computed predecessor,
// not the CSV's spec.replaces), as upstream shows them.
func (d *DB) ListBundles(ctx context.Context, pkg string) ([]BundleRow, error) {
	if err := d.checkPackage(ctx, pkg); err != nil {
		return nil, err
	}
	// Bundle columns are read once per bundle, not per channel entry: they
	// sit after the csv and bundle blobs, so each read walks those pages.
	type bundleCols struct{ skipRange, path, version string }
	cols := map[string]bundleCols{}
	err := queryEach(ctx, d.sql, `SELECT name, skiprange, bundlepath, version FROM operatorbundle
		WHERE name IN (SELECT operatorbundle_name FROM channel_entry WHERE ?1 = '' OR package_name = ?1)`, []any{pkg}, func(s scanner) error {
		var name string
		var skipRange, path, version sql.NullString
		if err := s.Scan(&name, &skipRange, &path, &version); err != nil {
			return err
		}
		cols[name] = bundleCols{skipRange.String, path.String, version.String}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read index %s: list bundles: %w", d.path, err)
	}

	type key struct{ pkg, ch, b string }
	rows := map[key]*BundleRow{}
	replDepth := map[key]int64{}
	var order []key
	// A channel holds several entries per bundle. Upstream's render (and so
	// its list and render-graph) read the edges from them: an entry pointing
	// at an entry of the same depth is a skip, one pointing further down is
	// the replaces edge (the one nearest the head wins). Entries of names
	// that are not bundles in the index (skipped versions) have no row.
	err = queryEach(ctx, d.sql, `SELECT e.package_name, e.channel_name, e.operatorbundle_name, e.depth, r.operatorbundle_name, r.depth
		FROM channel_entry e
		LEFT JOIN channel_entry r ON r.entry_id = e.replaces
		WHERE ?1 = '' OR e.package_name = ?1
		ORDER BY e.entry_id`, []any{pkg}, func(s scanner) error {
		var k key
		var dep, toDepth sql.NullInt64
		var to sql.NullString
		if err := s.Scan(&k.pkg, &k.ch, &k.b, &dep, &to, &toDepth); err != nil {
			return err
		}
		c, ok := cols[k.b]
		if !ok {
			return nil
		}
		r := rows[k]
		if r == nil {
			r = &BundleRow{Package: k.pkg, Channel: k.ch, Bundle: k.b, SkipRange: c.skipRange, Image: c.path, Version: c.version}
			rows[k] = r
			order = append(order, k)
		}
		switch {
		case !to.Valid:
		case toDepth.Int64 == dep.Int64:
			for _, s := range r.Skips {
				if s == to.String {
					return nil
				}
			}
			r.Skips = append(r.Skips, to.String)
		default:
			if prev, ok := replDepth[k]; !ok || dep.Int64 < prev {
				replDepth[k] = dep.Int64
				r.Replaces = to.String
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read index %s: list bundles: %w", d.path, err)
	}
	out := make([]BundleRow, 0, len(rows))
	for _, k := range order {
		out = append(out, *rows[k])
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Package != b.Package {
			return a.Package < b.Package
		}
		if a.Channel != b.Channel {
			return a.Channel < b.Channel
		}
		return a.Bundle < b.Bundle
	})
	return out, nil
}

func (d *DB) checkPackage(ctx context.Context, pkg string) error {
	if pkg == "" {
		return nil
	}
	var n int
	if err := d.sql.QueryRowContext(ctx, `SELECT COUNT(*) FROM package WHERE name = ?`, pkg).Scan(&n); err != nil {
		return fmt.Errorf("read index %s: package %s: %w", d.path, pkg, err)
	}
	if n == 0 {
		return fmt.Errorf("read index %s: package %q not found", d.path, pkg)
	}
	return nil
}
