package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/blang/semver/v4"
)

// ImportPackage is one package given with explicit channel graphs rather
// than as bundles to place by a graph mode: what a file-based catalog holds.
type ImportPackage struct {
	Name           string
	DefaultChannel string
	Bundles        []*BundleContent
	Channels       []ImportChannel
	// Metas are the catalog's other blobs of the package (deprecations,
	// custom schemas), stored in opm's own table (MetaTable). A package
	// with Metas only (no bundles, no channels) adds no package: its blobs
	// are stored alone.
	Metas []Meta
}

// ImportChannel is a channel and its entries.
type ImportChannel struct {
	Name    string
	Entries []ImportEntry
}

// ImportEntry is one bundle of a channel and its upgrade edges there.
type ImportEntry struct {
	Bundle   string
	Replaces string
	Skips    []string
	// SkipRange is the entry's; one other than its bundle's is kept in
	// EntryNoteTable.
	SkipRange string
}

// Import writes packages into the database in one transaction, all or
// nothing. Each channel is laid out in channel_entry the way Add lays out a
// channel (head at depth 0, replaces chains, an entry per skipped name), from
// the channel's own edges. A package already in the database, a channel
// without exactly one head, an edge cycle or an entry naming a bundle the
// package does not hold is an error.
func (d *DB) Import(ctx context.Context, pkgs []ImportPackage) error {
	entries := 0
	for _, p := range pkgs {
		for _, c := range p.Channels {
			entries += len(c.Entries)
		}
	}
	im, err := d.BeginImport(ctx, entries)
	if err != nil {
		return err
	}
	defer im.Rollback()
	for _, p := range pkgs {
		if err := im.Add(ctx, p); err != nil {
			return err
		}
	}
	return im.Commit(ctx)
}

// Importer is Import a package at a time, so that a caller converting a
// large catalog holds one package in memory rather than all of them: one
// transaction, committed whole by Commit or dropped by Rollback.
type Importer struct {
	d    *DB
	tx   *sql.Tx
	w    *writer
	errs []error
	done bool
}

// BeginImport starts an import of packages holding about entries channel
// entries in all (it decides whether the import builds helper indexes).
func (d *DB) BeginImport(ctx context.Context, entries int) (*Importer, error) {
	if d.readOnly {
		return nil, fmt.Errorf("import into index %s: opened read-only", d.path)
	}
	tx, err := d.sql.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("import into index %s: begin: %w", d.path, err)
	}
	w, err := newWriter(ctx, tx)
	if err != nil {
		_ = tx.Rollback()
		return nil, fmt.Errorf("import into index %s: %w", d.path, err)
	}
	// A large import needs the helper indexes from the start: each new
	// channel_entry row makes sqlite look for rows replacing it.
	if err := w.ensureHelperIndexesFor(ctx, helpAll, 2*entries); err != nil {
		w.close()
		_ = tx.Rollback()
		return nil, fmt.Errorf("import into index %s: %w", d.path, err)
	}
	return &Importer{d: d, tx: tx, w: w}, nil
}

// Add writes one package. A problem of the package's content (an *Error)
// is kept for Commit to return, with those of the other packages; any
// other error ends the import and is returned.
func (im *Importer) Add(ctx context.Context, p ImportPackage) error {
	if err := im.w.importPackage(ctx, p); err != nil {
		var ie *Error
		if !errors.As(err, &ie) {
			return fmt.Errorf("import into index %s: package %s: %w", im.d.path, p.Name, err)
		}
		im.errs = append(im.errs, err)
	}
	return nil
}

// SetPlural sets the plural of an API whose row was written without one.
func (im *Importer) SetPlural(ctx context.Context, a API) error {
	_, err := im.tx.ExecContext(ctx, `UPDATE api SET plural = ? WHERE group_name = ? AND version = ? AND kind = ? AND plural = ''`,
		a.Plural, a.Group, a.Version, a.Kind)
	if err != nil {
		return fmt.Errorf("import into index %s: api %s/%s %s: %w", im.d.path, a.Group, a.Version, a.Kind, err)
	}
	return nil
}

// Commit ends the import: the packages' problems joined when Add found
// any (nothing is written then), else the transaction committed.
func (im *Importer) Commit(ctx context.Context) error {
	if len(im.errs) > 0 {
		im.Rollback()
		return errors.Join(im.errs...)
	}
	im.done = true
	defer im.w.close()
	if err := im.w.finish(ctx); err != nil {
		_ = im.tx.Rollback()
		return fmt.Errorf("import into index %s: %w", im.d.path, err)
	}
	if err := im.tx.Commit(); err != nil {
		return fmt.Errorf("import into index %s: commit: %w", im.d.path, err)
	}
	return nil
}

// Rollback drops the import unless it was committed; safe to call twice.
func (im *Importer) Rollback() {
	if im.done {
		return
	}
	im.done = true
	im.w.close()
	_ = im.tx.Rollback()
}

func (w *writer) importPackage(ctx context.Context, p ImportPackage) error {
	if len(p.Bundles) == 0 && len(p.Channels) == 0 && p.DefaultChannel == "" {
		return writeMetas(ctx, w.tx, p.Metas)
	}
	var n int
	if err := w.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM package WHERE name = ?`, p.Name).Scan(&n); err != nil {
		return fmt.Errorf("look up package: %w", err)
	}
	if n > 0 {
		return &Error{Kind: KindCSVExists, Package: p.Name, Msg: "the package is already in the index", Fix: "import into a new index, or remove the package first"}
	}
	byName := map[string]*BundleContent{}
	for _, b := range p.Bundles {
		if byName[b.Name] != nil {
			return &Error{Kind: KindCSVExists, Package: p.Name, Bundle: b.Name, Msg: "given twice", Fix: "give each bundle once"}
		}
		byName[b.Name] = b
	}
	var graph []chanGraph
	chans := append([]ImportChannel(nil), p.Channels...)
	sort.Slice(chans, func(i, j int) bool { return chans[i].Name < chans[j].Name })
	for _, c := range chans {
		g, err := importChannel(p.Name, c, byName)
		if err != nil {
			return err
		}
		graph = append(graph, g)
	}
	if p.DefaultChannel != "" {
		found := false
		for _, g := range graph {
			found = found || g.Name == p.DefaultChannel
		}
		if !found {
			return &Error{Kind: KindInvalidBundle, Package: p.Name, Msg: fmt.Sprintf("default channel %q is not a channel of the package", p.DefaultChannel), Fix: "name one of the package's channels"}
		}
	}
	for _, name := range sortedBundleNames(byName) {
		b := byName[name]
		r := &rows{Name: b.Name, Package: p.Name, VersionStr: b.Version, Path: b.BundlePath,
			body: body{Replaces: b.Replaces, Skips: b.Skips, SkipRange: b.SkipRange, Images: b.Images}}
		if len(b.CSV) > 0 {
			r.CSV = append(append([]byte{}, b.CSV...), '\n')
		}
		r.Objects = joinObjects(b.Objects)
		for _, a := range b.Provided {
			r.Provided = append(r.Provided, apiKey(a))
		}
		for _, a := range b.Required {
			r.Required = append(r.Required, apiKey(a))
		}
		for _, tv := range b.Properties {
			r.Properties = append(r.Properties, typedValue(tv))
		}
		for _, tv := range b.Dependencies {
			r.Deps = append(r.Deps, typedValue(tv))
		}
		if err := w.insertBundle(ctx, r); err != nil {
			if isbundleFault(err) {
				return &Error{Kind: KindInvalidBundle, Package: p.Name, Bundle: b.Name, Msg: "writing the bundle failed", Err: err}
			}
			return fmt.Errorf("bundle %s: %w", b.Name, err)
		}
	}
	if err := w.writeChannels(ctx, p.Name, graph, p.DefaultChannel); err != nil {
		return err
	}
	if err := writeEntryNotes(ctx, w.tx, entryNotes(p.Name, chans, graph, byName)); err != nil {
		return err
	}
	return writeMetas(ctx, w.tx, p.Metas)
}

// entryNotes are what channel_entry cannot say of the package's channels
// (EntryNoteTable): the rows the layout wrote for bundles of the package
// that are not entries of the row's channel (an entry replaces or skips a
// bundle of another channel; names that are no bundle of the package need
// no note, no reader takes them for one), and entries whose skipRange is
// not their bundle's.
func entryNotes(pkg string, chans []ImportChannel, graph []chanGraph, bundles map[string]*BundleContent) []entryNote {
	var out []entryNote
	for i, c := range chans {
		in := make(map[string]bool, len(c.Entries))
		for _, e := range c.Entries {
			in[e.Bundle] = true
			if b := bundles[e.Bundle]; b != nil && e.SkipRange != b.SkipRange {
				out = append(out, entryNote{EntryKey{pkg, c.Name, e.Bundle}, EntryNote{SkipRange: e.SkipRange, HasSkipRange: true}})
			}
		}
		seen := map[string]bool{}
		for _, e := range graph[i].Entries {
			if in[e.Bundle] || seen[e.Bundle] || bundles[e.Bundle] == nil {
				continue
			}
			seen[e.Bundle] = true
			out = append(out, entryNote{EntryKey{pkg, c.Name, e.Bundle}, EntryNote{EdgeOnly: true}})
		}
	}
	return out
}

// importChannel lays out one channel from its explicit edges.
func importChannel(pkg string, c ImportChannel, bundles map[string]*BundleContent) (chanGraph, error) {
	if len(c.Entries) == 0 {
		return chanGraph{}, &Error{Kind: KindInvalidBundle, Package: pkg, Channel: c.Name, Msg: "the channel has no entries", Fix: "list at least one bundle in the channel"}
	}
	nodes := map[string]*node{}
	replaced := map[string]bool{}
	for _, e := range c.Entries {
		b := bundles[e.Bundle]
		if b == nil {
			return chanGraph{}, &Error{Kind: KindReplacesMissing, Package: pkg, Channel: c.Name, Bundle: e.Bundle, Msg: "the channel lists a bundle the package does not hold", Fix: "add the bundle, or drop the entry"}
		}
		if nodes[e.Bundle] != nil {
			return chanGraph{}, &Error{Kind: KindInvalidBundle, Package: pkg, Channel: c.Name, Bundle: e.Bundle, Msg: "listed twice in the channel", Fix: "list each bundle once per channel"}
		}
		v, err := ParseVersion(b.Version, b.Release)
		if err != nil {
			sv, terr := semver.ParseTolerant(b.Version)
			if terr != nil {
				sv = semver.Version{}
			}
			v = Version{Semver: sv}
		}
		nodes[e.Bundle] = &node{Name: e.Bundle, Version: v, Replaces: e.Replaces, Skips: e.Skips, Channels: []string{c.Name}}
		if e.Replaces != "" {
			replaced[e.Replaces] = true
		}
		for _, s := range e.Skips {
			replaced[s] = true
		}
	}
	var heads []string
	for _, e := range c.Entries {
		if !replaced[e.Bundle] {
			heads = append(heads, e.Bundle)
		}
	}
	sort.Strings(heads)
	if len(heads) != 1 {
		msg := "no bundle of the channel is left unreplaced: the replaces and skips edges form a cycle"
		if len(heads) > 1 {
			msg = "the channel has " + strconv.Itoa(len(heads)) + " heads (" + strings.Join(heads, ", ") + "); one bundle must replace or skip the others, directly or not"
		}
		return chanGraph{}, &Error{Kind: KindTwoHeads, Package: pkg, Channel: c.Name, Msg: msg, Fix: "make the newest bundle replace or skip the others"}
	}
	g, errs := layoutChannel(pkg, c.Name, nodes[heads[0]], nodes,
		func(n *node) string { return n.Replaces }, func(n *node) []string { return n.Skips })
	if len(errs) > 0 {
		return g, errs[0]
	}
	reached := map[string]bool{}
	for _, e := range g.Entries {
		reached[e.Bundle] = true
	}
	for _, e := range c.Entries {
		if !reached[e.Bundle] {
			return g, &Error{Kind: KindPrune, Package: pkg, Channel: c.Name, Bundle: e.Bundle, Msg: "not reachable from the channel head " + heads[0] + " (is it part of a replaces cycle?)", Fix: "make a bundle on the head's upgrade path replace or skip it"}
		}
	}
	return g, nil
}

func sortedBundleNames(m map[string]*BundleContent) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
