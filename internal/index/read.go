package index

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

// Index is the read-back content of an index database, for `index inspect`
// and `index export`.
type Index struct {
	SchemaVersion int       `json:"schemaVersion"`
	Packages      []Package `json:"packages"`
}

// Package is one package with its channels and bundles.
type Package struct {
	Name           string    `json:"name"`
	DefaultChannel string    `json:"defaultChannel"`
	Channels       []Channel `json:"channels"`
	Bundles        []Bundle  `json:"bundles"`
}

// Channel is one channel: its head, its bundles (head first, then by
// distance from the head) and its upgrade edges.
type Channel struct {
	Name    string   `json:"name"`
	Head    string   `json:"head"`
	Bundles []string `json:"bundles"`
	// Edges are the distinct "From replaces or skips To" pairs of the
	// channel entries; To may name a bundle that is not in the index (a
	// skipped version).
	Edges []Edge `json:"edges"`
}

// Edge is one upgrade edge: From replaces (or skips) To.
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Bundle is one bundle of a package.
type Bundle struct {
	Name       string   `json:"name"`
	Version    string   `json:"version"`
	Release    string   `json:"release,omitempty"`
	BundlePath string   `json:"bundlePath"`
	Replaces   string   `json:"replaces,omitempty"`
	Skips      []string `json:"skips,omitempty"`
	SkipRange  string   `json:"skipRange,omitempty"`
	Channels   []string `json:"channels"`
	// HasContent says the database holds the bundle's manifests (the
	// bundle column); without it only BundlePath refers to them.
	HasContent bool `json:"hasContent"`
}

// PackageNames lists the packages of the index, sorted.
func (d *DB) PackageNames(ctx context.Context) ([]string, error) {
	var out []string
	err := queryEach(ctx, d.sql, `SELECT name FROM package ORDER BY name`, nil, func(s scanner) error {
		var n string
		if err := s.Scan(&n); err != nil {
			return err
		}
		out = append(out, n)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read index %s: list packages: %w", d.path, err)
	}
	return out, nil
}

// Inspect reads every package of the index.
func (d *DB) Inspect(ctx context.Context) (*Index, error) {
	names, err := d.PackageNames(ctx)
	if err != nil {
		return nil, err
	}
	idx := &Index{SchemaVersion: SchemaVersion}
	for _, n := range names {
		p, err := d.Package(ctx, n)
		if err != nil {
			return nil, err
		}
		idx.Packages = append(idx.Packages, *p)
	}
	return idx, nil
}

// Package reads one package.
func (d *DB) Package(ctx context.Context, name string) (*Package, error) {
	wrap := func(err error) error { return fmt.Errorf("read index %s: package %s: %w", d.path, name, err) }
	p := &Package{Name: name}
	var def sql.NullString
	if err := d.sql.QueryRowContext(ctx, `SELECT default_channel FROM package WHERE name = ?`, name).Scan(&def); err != nil {
		if err == sql.ErrNoRows {
			return nil, fmt.Errorf("read index %s: package %s is not in the index", d.path, name)
		}
		return nil, wrap(err)
	}
	p.DefaultChannel = def.String

	real := map[string]bool{}
	bundles := map[string]*Bundle{}
	err := queryEach(ctx, d.sql, `SELECT ob.name, ob.version, ob.bundlepath, ob.replaces, ob.skips, ob.skiprange, ob.bundle IS NOT NULL AND length(ob.bundle) > 0,
		CASE WHEN ob.csv IS NULL OR json_valid(CAST(ob.csv AS TEXT)) = 0 THEN NULL ELSE json_extract(CAST(ob.csv AS TEXT), '$.spec.release') END
		FROM operatorbundle ob WHERE ob.name IN (SELECT operatorbundle_name FROM channel_entry WHERE package_name = ?) ORDER BY ob.name`, []any{name}, func(s scanner) error {
		var b Bundle
		var version, path, replaces, skips, skipRange, release sql.NullString
		if err := s.Scan(&b.Name, &version, &path, &replaces, &skips, &skipRange, &b.HasContent, &release); err != nil {
			return err
		}
		b.Version, b.BundlePath, b.Replaces, b.SkipRange, b.Release = version.String, path.String, replaces.String, skipRange.String, release.String
		for _, s := range strings.Split(skips.String, ",") {
			if s != "" {
				b.Skips = append(b.Skips, s)
			}
		}
		bundles[b.Name] = &b
		real[b.Name] = true
		return nil
	})
	if err != nil {
		return nil, wrap(err)
	}

	chans := map[string]*Channel{}
	var order []string
	err = queryEach(ctx, d.sql, `SELECT name, head_operatorbundle_name FROM channel WHERE package_name = ? ORDER BY name`, []any{name}, func(s scanner) error {
		var c Channel
		var head sql.NullString
		if err := s.Scan(&c.Name, &head); err != nil {
			return err
		}
		c.Head = head.String
		chans[c.Name] = &c
		order = append(order, c.Name)
		return nil
	})
	if err != nil {
		return nil, wrap(err)
	}
	type member struct {
		depth int
		name  string
	}
	members := map[string]map[string]int{}
	edges := map[string]map[Edge]bool{}
	err = queryEach(ctx, d.sql, `SELECT e.channel_name, e.operatorbundle_name, e.depth, r.operatorbundle_name
		FROM channel_entry e LEFT JOIN channel_entry r ON r.entry_id = e.replaces
		WHERE e.package_name = ?`, []any{name}, func(s scanner) error {
		var ch, b string
		var depth sql.NullInt64
		var to sql.NullString
		if err := s.Scan(&ch, &b, &depth, &to); err != nil {
			return err
		}
		if members[ch] == nil {
			members[ch] = map[string]int{}
			edges[ch] = map[Edge]bool{}
		}
		if real[b] {
			if d, ok := members[ch][b]; !ok || int(depth.Int64) < d {
				members[ch][b] = int(depth.Int64)
			}
		}
		if to.Valid {
			edges[ch][Edge{From: b, To: to.String}] = true
		}
		return nil
	})
	if err != nil {
		return nil, wrap(err)
	}
	for _, cn := range order {
		c := chans[cn]
		var ms []member
		for b, d := range members[cn] {
			ms = append(ms, member{d, b})
			bundles[b].Channels = append(bundles[b].Channels, cn)
		}
		sort.Slice(ms, func(i, j int) bool {
			if ms[i].depth != ms[j].depth {
				return ms[i].depth < ms[j].depth
			}
			return ms[i].name < ms[j].name
		})
		for _, m := range ms {
			c.Bundles = append(c.Bundles, m.name)
		}
		for e := range edges[cn] {
			c.Edges = append(c.Edges, e)
		}
		sort.Slice(c.Edges, func(i, j int) bool {
			if c.Edges[i].From != c.Edges[j].From {
				return c.Edges[i].From < c.Edges[j].From
			}
			return c.Edges[i].To < c.Edges[j].To
		})
		p.Channels = append(p.Channels, *c)
	}
	names := make([]string, 0, len(bundles))
	for n := range bundles {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b := bundles[n]
		sort.Strings(b.Channels)
		p.Bundles = append(p.Bundles, *b)
	}
	return p, nil
}
