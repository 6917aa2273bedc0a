package index

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

// PackageDump is one package of an index as stored: its channels, the raw
// channel_entry rows and its bundles' content. It is the read side of
// conversions to other catalog formats (file-based catalogs).
type PackageDump struct {
	Name string
	// DefaultChannel is "" when package.default_channel is NULL.
	DefaultChannel string
	Channels       []ChannelDump // by name
	Entries        []EntryDump   // by entry id
	Bundles        []*BundleContent
}

// ChannelDump is one channel row.
type ChannelDump struct {
	Name string
	Head string
}

// EntryDump is one channel_entry row. Replaces is the entry id it replaces,
// 0 for none.
type EntryDump struct {
	ID       int64
	Channel  string
	Bundle   string
	Replaces int64
	Depth    int64
	// EdgeOnly says the row only names the target of an upgrade edge of
	// its channel: the bundle is not an entry there (EntryNoteTable).
	EdgeOnly bool
	// SkipRange, when HasSkipRange, is the entry's skipRange in place of
	// its bundle's (EntryNoteTable).
	SkipRange    string
	HasSkipRange bool
}

// Dump reads every package with its channels, entries and bundles. Bundles
// that are in no channel entry belong to no package and are left out, as
// every reader of the database does.
func (d *DB) Dump(ctx context.Context) ([]*PackageDump, error) {
	var out []*PackageDump
	err := d.DumpEach(ctx, nil, func(p *PackageDump) error {
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DumpEach is Dump one package at a time, in name order: every table but
// the bundles' manifests (operatorbundle's csv and bundle columns, nearly
// all of a database) is read first, the manifests of a package only when
// it is handed to f. f owns the package; memory holds the manifests of the
// packages f keeps, not the catalog's. minDepth, when not nil, is called
// before the first package with the least channel entry depth of the
// whole database (where upstream started every chain).
func (d *DB) DumpEach(ctx context.Context, minDepth func(int64), f func(*PackageDump) error) error {
	wrap := func(what string, err error) error { return fmt.Errorf("read index %s: %s: %w", d.path, what, err) }
	pkgs := map[string]*PackageDump{}
	var order []string
	err := queryEach(ctx, d.sql, `SELECT name, default_channel FROM package ORDER BY name`, nil, func(s scanner) error {
		var n string
		var def sql.NullString
		if err := s.Scan(&n, &def); err != nil {
			return err
		}
		pkgs[n] = &PackageDump{Name: n, DefaultChannel: def.String}
		order = append(order, n)
		return nil
	})
	if err != nil {
		return wrap("packages", err)
	}
	pkgOf := func(name string) *PackageDump {
		p := pkgs[name]
		if p == nil {
			// Entries of a package without a package row: keep them
			// rather than lose bundles.
			p = &PackageDump{Name: name}
			pkgs[name] = p
			order = append(order, name)
		}
		return p
	}
	err = queryEach(ctx, d.sql, `SELECT name, package_name, head_operatorbundle_name FROM channel ORDER BY package_name, name`, nil, func(s scanner) error {
		var n, p string
		var head sql.NullString
		if err := s.Scan(&n, &p, &head); err != nil {
			return err
		}
		pk := pkgOf(p)
		pk.Channels = append(pk.Channels, ChannelDump{Name: n, Head: head.String})
		return nil
	})
	if err != nil {
		return wrap("channels", err)
	}
	notes, err := ReadEntryNotes(ctx, d.sql)
	if err != nil {
		return wrap("channel entries", err)
	}
	bundlePkg := map[string]string{}
	tip := int64(-1)
	err = queryEach(ctx, d.sql, `SELECT entry_id, channel_name, package_name, operatorbundle_name, replaces, depth FROM channel_entry ORDER BY entry_id`, nil, func(s scanner) error {
		var e EntryDump
		var ch, p, b sql.NullString
		var rep, depth sql.NullInt64
		if err := s.Scan(&e.ID, &ch, &p, &b, &rep, &depth); err != nil {
			return err
		}
		e.Channel, e.Bundle, e.Replaces, e.Depth = ch.String, b.String, rep.Int64, depth.Int64
		if n, ok := notes[EntryKey{Package: p.String, Channel: e.Channel, Bundle: e.Bundle}]; ok {
			// Only a row that replaces nothing is an edge target (the
			// layout writes them so); any other was rewritten since.
			e.EdgeOnly = n.EdgeOnly && e.Replaces == 0
			e.SkipRange, e.HasSkipRange = n.SkipRange, n.HasSkipRange
		}
		pk := pkgOf(p.String)
		pk.Entries = append(pk.Entries, e)
		if _, ok := bundlePkg[e.Bundle]; !ok {
			bundlePkg[e.Bundle] = p.String
		}
		if tip < 0 || e.Depth < tip {
			tip = e.Depth
		}
		return nil
	})
	if err != nil {
		return wrap("channel entries", err)
	}

	// Everything of the bundles but their manifests; those are read per
	// package below.
	bundles := map[string]*BundleContent{}
	err = queryEach(ctx, d.sql, `SELECT name, bundlepath, skiprange, version, replaces, skips FROM operatorbundle ORDER BY name`, nil, func(s scanner) error {
		var name string
		var path, skipRange, version, replaces, skips sql.NullString
		if err := s.Scan(&name, &path, &skipRange, &version, &replaces, &skips); err != nil {
			return err
		}
		p, ok := bundlePkg[name]
		if !ok {
			return nil
		}
		b := &BundleContent{Name: name, Package: p, BundlePath: path.String, SkipRange: skipRange.String,
			Version: version.String, Replaces: replaces.String}
		for _, k := range strings.Split(skips.String, ",") {
			if k = strings.TrimSpace(k); k != "" {
				b.Skips = append(b.Skips, k)
			}
		}
		bundles[name] = b
		pkgs[p].Bundles = append(pkgs[p].Bundles, b)
		return nil
	})
	if err != nil {
		return wrap("bundles", err)
	}
	// Rows of the other tables, in insertion (rowid) order.
	typed := func(table string, add func(b *BundleContent, tv TypedValue)) error {
		return queryEach(ctx, d.sql, `SELECT operatorbundle_name, type, value FROM `+table+` ORDER BY rowid`, nil, func(s scanner) error {
			var n, t, v sql.NullString
			if err := s.Scan(&n, &t, &v); err != nil {
				return err
			}
			if b := bundles[n.String]; b != nil && t.Valid {
				add(b, TypedValue{Type: t.String, Value: []byte(v.String)})
			}
			return nil
		})
	}
	if err := typed("properties", func(b *BundleContent, tv TypedValue) { b.Properties = append(b.Properties, tv) }); err != nil {
		return wrap("properties", err)
	}
	if err := typed("dependencies", func(b *BundleContent, tv TypedValue) { b.Dependencies = append(b.Dependencies, tv) }); err != nil {
		return wrap("dependencies", err)
	}
	apis := func(table string, add func(b *BundleContent, a API)) error {
		return queryEach(ctx, d.sql, `SELECT t.operatorbundle_name, t.group_name, t.version, t.kind, IFNULL(a.plural, '')
			FROM `+table+` t LEFT JOIN api a ON a.group_name = t.group_name AND a.version = t.version AND a.kind = t.kind ORDER BY t.rowid`, nil, func(s scanner) error {
			var n, g, v, k, pl sql.NullString
			if err := s.Scan(&n, &g, &v, &k, &pl); err != nil {
				return err
			}
			if b := bundles[n.String]; b != nil {
				add(b, API{Group: g.String, Version: v.String, Kind: k.String, Plural: pl.String})
			}
			return nil
		})
	}
	if err := apis("api_provider", func(b *BundleContent, a API) { b.Provided = append(b.Provided, a) }); err != nil {
		return wrap("provided apis", err)
	}
	if err := apis("api_requirer", func(b *BundleContent, a API) { b.Required = append(b.Required, a) }); err != nil {
		return wrap("required apis", err)
	}
	err = queryEach(ctx, d.sql, `SELECT operatorbundle_name, image FROM related_image ORDER BY rowid`, nil, func(s scanner) error {
		var n, img sql.NullString
		if err := s.Scan(&n, &img); err != nil {
			return err
		}
		if b := bundles[n.String]; b != nil && img.String != "" {
			b.Images = append(b.Images, img.String)
		}
		return nil
	})
	if err != nil {
		return wrap("related images", err)
	}
	// Channel membership, from the entries.
	for _, p := range pkgs {
		in := map[string]map[string]bool{}
		for _, e := range p.Entries {
			if e.EdgeOnly {
				continue
			}
			if in[e.Bundle] == nil {
				in[e.Bundle] = map[string]bool{}
			}
			in[e.Bundle][e.Channel] = true
		}
		for _, b := range p.Bundles {
			for c := range in[b.Name] {
				b.Channels = append(b.Channels, c)
			}
			sort.Strings(b.Channels)
		}
	}
	if minDepth != nil {
		if tip < 0 {
			tip = 0
		}
		minDepth(tip)
	}
	// The manifests, a package at a time: a primary-key lookup each.
	manifests, err := d.sql.PrepareContext(ctx, `SELECT csv, bundle,
		CASE WHEN csv IS NULL OR instr(csv, '"release"') = 0 OR json_valid(CAST(csv AS TEXT)) = 0 THEN NULL ELSE json_extract(CAST(csv AS TEXT), '$.spec.release') END
		FROM operatorbundle WHERE name = ?`)
	if err != nil {
		return wrap("bundles", err)
	}
	defer func() { _ = manifests.Close() }() // a read statement: nothing to lose
	sort.Strings(order)
	for _, n := range order {
		p := pkgs[n]
		for _, b := range p.Bundles {
			var csv, objs []byte
			var release sql.NullString
			if err := manifests.QueryRowContext(ctx, b.Name).Scan(&csv, &objs, &release); err != nil {
				return wrap("bundle "+b.Name, err)
			}
			b.Release = release.String
			b.Objects = splitObjects(objs)
			// Writers store the CSV as compact JSON and a newline.
			if csv = bytes.TrimSpace(csv); len(csv) > 0 {
				b.CSV = csv
			}
		}
		// The package is f's now: drop this reference so that its
		// manifests can be freed once f is done with them.
		delete(pkgs, n)
		for _, b := range p.Bundles {
			delete(bundles, b.Name)
		}
		if err := f(p); err != nil {
			return err
		}
	}
	return nil
}
