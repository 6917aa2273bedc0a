package fbc

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/opmkit/opm/internal/atomicfile"
	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/rawjson"
	"github.com/opmkit/opm/internal/validate"
)

// FromIndex renders an index database as a file-based catalog, as upstream
// `opm render` / `opm migrate` did (see docs/compatibility.md for where it
// differs): per package an olm.package (default channel, icon of the default
// channel's head), one olm.channel per channel and one olm.bundle per bundle.
// Warnings say what was filled in, such as a default channel the database
// lacks (upstream crashed there).
func FromIndex(ctx context.Context, db *index.DB, opts RenderOptions) (*Catalog, []string, error) {
	c := &Catalog{}
	var warnings, metaWarnings []string
	err := eachIndexPackage(ctx, db, opts, func(pc *Catalog, w, mw []string) error {
		c.Merge(pc)
		warnings = append(warnings, w...)
		metaWarnings = append(metaWarnings, mw...)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return c, append(warnings, metaWarnings...), nil
}

// EachIndexPackage is FromIndex a package at a time, in name order: f gets
// each package's blobs and the warnings of that package. Memory holds one
// package's manifests (plus what f keeps), not the database's.
func EachIndexPackage(ctx context.Context, db *index.DB, opts RenderOptions, f func(*Catalog, []string) error) error {
	return eachIndexPackage(ctx, db, opts, func(c *Catalog, w, mw []string) error {
		return f(c, append(w, mw...))
	})
}

// eachIndexPackage hands f each package with the warnings of its rows and
// those of its kept blobs (addIndexMetas) apart. The kept blobs of a
// package the database has no rows for come as a package of their own, in
// name order with the others.
func eachIndexPackage(ctx context.Context, db *index.DB, opts RenderOptions, f func(c *Catalog, warnings, metaWarnings []string) error) error {
	metas, err := db.Metas(ctx)
	if err != nil {
		return fmt.Errorf("render index: %w", err)
	}
	byPkg := map[string][]index.Meta{}
	var metaPkgs []string
	for _, m := range metas {
		if _, ok := byPkg[m.Package]; !ok {
			metaPkgs = append(metaPkgs, m.Package)
		}
		byPkg[m.Package] = append(byPkg[m.Package], m)
	}
	sort.Slice(metaPkgs, func(i, j int) bool { return packageBefore(metaPkgs[i], metaPkgs[j]) })
	next := 0
	// metaOnly hands over the kept blobs of packages without rows that
	// come before name in Write's order (all of them when last).
	metaOnly := func(name string, last bool) error {
		for ; next < len(metaPkgs) && (last || packageBefore(metaPkgs[next], name)); next++ {
			ms, ok := byPkg[metaPkgs[next]]
			if !ok {
				continue // handed over with its package
			}
			delete(byPkg, metaPkgs[next])
			c := &Catalog{}
			mw := c.addIndexMetas(ms)
			if err := f(c, nil, mw); err != nil {
				return err
			}
		}
		return nil
	}
	// Chains start at the least depth of the whole database, as upstream
	// read it (heads are at depth 0 in every database opm or upstream wrote).
	var tip int64
	var inner error
	err = db.DumpEach(ctx, func(d int64) { tip = d }, func(p *index.PackageDump) error {
		if err := metaOnly(p.Name, false); err != nil {
			inner = err
			return err
		}
		c := &Catalog{}
		w, err := c.addIndexPackage(p, tip, opts)
		if err != nil {
			inner = fmt.Errorf("render index %s: package %s: %w", db.Path(), p.Name, err)
			return inner
		}
		var mw []string
		if ms, ok := byPkg[p.Name]; ok {
			delete(byPkg, p.Name)
			mw = c.addIndexMetas(ms)
		}
		if err := f(c, w, mw); err != nil {
			inner = err
			return err
		}
		return nil
	})
	if err != nil {
		if inner != nil {
			return inner
		}
		return fmt.Errorf("render index: %w", err)
	}
	return metaOnly("", true)
}

// addIndexMetas adds the catalog blobs a database made from a catalog
// keeps (deprecations, custom schemas), as they were. Deprecation entries
// whose package, channel or bundle the database no longer holds (removed
// since, by opm or by upstream, which does not know the blobs) are left
// out, with a warning: a catalog may deprecate only what it has.
func (c *Catalog) addIndexMetas(metas []index.Meta) []string {
	var warnings []string
	if len(metas) == 0 {
		return nil
	}
	type refKey struct{ schema, name string }
	have := map[string]map[refKey]bool{}
	for _, p := range c.Packages {
		have[p.Name] = map[refKey]bool{{SchemaPackage, ""}: true}
	}
	for _, ch := range c.Channels {
		if have[ch.Package] != nil {
			have[ch.Package][refKey{SchemaChannel, ch.Name}] = true
		}
	}
	for _, b := range c.Bundles {
		if have[b.Package] != nil {
			have[b.Package][refKey{SchemaBundle, b.Name}] = true
		}
	}
	pkgIndex := map[string]int{}
	for i, p := range c.Packages {
		pkgIndex[p.Name] = i
	}
	bundleIndex := map[[2]string]int{}
	for i, b := range c.Bundles {
		bundleIndex[[2]string{b.Package, b.Name}] = i
	}
	for _, m := range metas {
		blob := m.Blob
		if m.Schema == SchemaBundle {
			i, ok := bundleIndex[[2]string{m.Package, m.Name}]
			if !ok {
				continue // removed from the index since
			}
			var bi bundleImages
			if err := json.Unmarshal(blob, &bi); err != nil {
				warnings = append(warnings, fmt.Sprintf("the related images of bundle %s kept in the index are not JSON (%v); named after the CSV instead", m.Name, err))
				continue
			}
			// Only while the index holds the same images: an index
			// changed since by a tool that does not know the table gives
			// its own.
			if sameImages(bi.RelatedImages, c.Bundles[i].RelatedImages) {
				c.Bundles[i].RelatedImages = bi.RelatedImages
			}
			continue
		}
		if m.Schema == SchemaPackage {
			// The package blob's own fields; the default channel stays
			// the database's (index add may have changed it).
			i, ok := pkgIndex[m.Package]
			if !ok {
				continue
			}
			var p Package
			if err := json.Unmarshal(blob, &p); err != nil {
				warnings = append(warnings, fmt.Sprintf("the olm.package blob of package %s in the index is not JSON (%v); its description and icon come from the CSV", m.Package, err))
				continue
			}
			pk := &c.Packages[i]
			pk.Description, pk.Properties = p.Description, p.Properties
			if p.Icon != nil {
				pk.Icon = p.Icon
			}
			continue
		}
		if m.Schema == SchemaDeprecations {
			refs := have[m.Package]
			if refs == nil {
				warnings = append(warnings, fmt.Sprintf("the index keeps an olm.deprecations blob of package %s, which it no longer holds; left out", m.Package))
				continue
			}
			var d struct {
				Schema  string            `json:"schema"`
				Package string            `json:"package"`
				Entries []json.RawMessage `json:"entries"`
			}
			if err := json.Unmarshal(blob, &d); err != nil {
				warnings = append(warnings, fmt.Sprintf("the olm.deprecations blob of package %s in the index is not JSON (%v); left out", m.Package, err))
				continue
			}
			kept := d.Entries[:0:0]
			for _, e := range d.Entries {
				var ref struct {
					Reference struct {
						Schema string `json:"schema"`
						Name   string `json:"name"`
					} `json:"reference"`
				}
				if json.Unmarshal(e, &ref) == nil && (refs[refKey{ref.Reference.Schema, ref.Reference.Name}] ||
					(ref.Reference.Schema != SchemaPackage && ref.Reference.Schema != SchemaChannel && ref.Reference.Schema != SchemaBundle)) {
					kept = append(kept, e)
					continue
				}
				warnings = append(warnings, fmt.Sprintf("package %s: the deprecation of %s %q is left out: the index no longer holds it",
					m.Package, ref.Reference.Schema, ref.Reference.Name))
			}
			if len(kept) == 0 {
				continue
			}
			if len(kept) != len(d.Entries) {
				d.Entries = kept
				b, err := marshal(d)
				if err != nil {
					warnings = append(warnings, fmt.Sprintf("package %s: olm.deprecations: %v; left out", m.Package, err))
					continue
				}
				blob = b
			}
		}
		c.Others = append(c.Others, Meta{Schema: m.Schema, Package: m.Package, Name: m.Name, Blob: append(json.RawMessage(nil), blob...)})
	}
	return warnings
}

func (c *Catalog) addIndexPackage(p *index.PackageDump, tip int64, opts RenderOptions) ([]string, error) {
	var warnings []string
	bundles := map[string]*index.BundleContent{}
	for _, b := range p.Bundles {
		bundles[b.Name] = b
	}
	pkg := Package{Schema: SchemaPackage, Name: p.Name, DefaultChannel: p.DefaultChannel}
	heads := map[string]string{}
	for _, ch := range p.Channels {
		heads[ch.Name] = ch.Head
	}
	if _, ok := heads[pkg.DefaultChannel]; !ok && len(p.Channels) > 0 {
		pkg.DefaultChannel = fallbackDefault(p, bundles)
		why := "has no default channel"
		if p.DefaultChannel != "" {
			why = fmt.Sprintf("names default channel %q, which it does not have", p.DefaultChannel)
		}
		warnings = append(warnings, fmt.Sprintf("package %s %s in the index; using %s (the channel of its highest version)", p.Name, why, pkg.DefaultChannel))
	}
	if head := bundles[heads[pkg.DefaultChannel]]; head != nil && len(head.CSV) > 0 {
		icon, warn := csvIcon(head)
		pkg.Icon = icon
		if warn != "" {
			warnings = append(warnings, warn)
		}
	}
	c.Packages = append(c.Packages, pkg)

	// Entries by channel, in entry id order.
	byChannel := map[string][]index.EntryDump{}
	for _, e := range p.Entries {
		byChannel[e.Channel] = append(byChannel[e.Channel], e)
	}
	for _, ch := range p.Channels {
		c.Channels = append(c.Channels, channelBlob(p.Name, ch.Name, byChannel[ch.Name], tip, bundles))
	}
	for _, b := range p.Bundles {
		blob, err := bundleBlob(b, opts)
		if err != nil {
			return nil, err
		}
		c.Bundles = append(c.Bundles, *blob)
	}
	return warnings, nil
}

// channelBlob derives a channel's entries from its channel_entry rows the
// way upstream read them (index.ChannelEntries), sorted by bundle name.
func channelBlob(pkg, name string, rows []index.EntryDump, tip int64, bundles map[string]*index.BundleContent) Channel {
	ch := Channel{Schema: SchemaChannel, Name: name, Package: pkg, Entries: []ChannelEntry{}}
	entries := index.ChannelEntries(rows, tip, func(n string) (string, bool) {
		if b := bundles[n]; b != nil {
			return b.SkipRange, true
		}
		return "", false
	})
	for _, e := range entries {
		ch.Entries = append(ch.Entries, ChannelEntry{Name: e.Name, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange})
	}
	return ch
}

// fallbackDefault picks a default channel for a package whose database has
// none: its only channel, or the first channel (by name) holding its highest
// version.
func fallbackDefault(p *index.PackageDump, bundles map[string]*index.BundleContent) string {
	if len(p.Channels) == 1 {
		return p.Channels[0].Name
	}
	type cand struct {
		v    index.Version
		name string
	}
	var best *cand
	for _, ch := range p.Channels {
		b := bundles[ch.Head]
		if b == nil {
			continue
		}
		v, err := index.ParseVersion(b.Version, b.Release)
		if err != nil {
			continue
		}
		if best == nil || v.Compare(best.v) > 0 {
			best = &cand{v, ch.Name}
		}
	}
	if best != nil {
		return best.name
	}
	return p.Channels[0].Name
}

// csvIcons is what csvIcon reads of a CSV.
type csvIcons struct {
	Spec struct {
		Icon []csvIcon1 `json:"icon"`
	} `json:"spec"`
}

type csvIcon1 struct {
	Data      string `json:"base64data"`
	MediaType string `json:"mediatype"`
}

// csvIcon is the package icon upstream took from a CSV: its first icon, the
// base64 data decoded (retried without spaces).
func csvIcon(b *index.BundleContent) (*Icon, string) {
	var csv csvIcons
	if !decodeCSVIconsFast(b.CSV, &csv) {
		csv = csvIcons{}
		if err := json.Unmarshal(b.CSV, &csv); err != nil {
			return nil, ""
		}
	}
	if len(csv.Spec.Icon) == 0 {
		return nil, ""
	}
	ic := csv.Spec.Icon[0]
	data, err := base64.StdEncoding.DecodeString(ic.Data)
	if err != nil {
		data, err = base64.StdEncoding.DecodeString(strings.ReplaceAll(ic.Data, " ", ""))
		if err != nil {
			return nil, fmt.Sprintf("package %s: the icon of %s is not base64 (%v); the package has no icon", b.Package, b.Name, err)
		}
	}
	return &Icon{Data: data, MediaType: ic.MediaType}, ""
}

// EachIndexFile is EachIndexPackage on the database file at path, opened
// read-only.
func EachIndexFile(ctx context.Context, path string, opts RenderOptions, f func(*Catalog, []string) error) error {
	db, err := index.OpenReadOnly(path)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }() // read-only: nothing to lose
	return EachIndexPackage(ctx, db, opts, f)
}

// RenderIndexFileToDir is RenderIndexFile then WriteDir, a package at a
// time: the same tree, with memory for one package. It returns the number
// of packages written and the render's warnings.
func RenderIndexFileToDir(ctx context.Context, path, dir string, ropts RenderOptions, wopts WriteDirOptions) (int, []string, error) {
	dw, err := NewDirWriter(dir, wopts)
	if err != nil {
		return 0, nil, err
	}
	defer dw.Abort()
	db, err := index.OpenReadOnly(path)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = db.Close() }() // read-only: nothing to lose
	packages := 0
	var warnings []string
	err = EachIndexPackage(ctx, db, ropts, func(c *Catalog, w []string) error {
		warnings = append(warnings, w...)
		packages += len(c.PackageNames())
		return dw.Add(c)
	})
	if err != nil {
		return 0, nil, err
	}
	if err := dw.Commit(); err != nil {
		return 0, nil, err
	}
	return packages, warnings, nil
}

// ToIndexOptions control ToIndex.
type ToIndexOptions struct {
	// Force replaces an existing file at the destination.
	Force bool
	// Sources are the local paths the catalog is read from: a destination
	// that holds one, is one or lies inside one is refused (see
	// atomicfile.CheckApart).
	Sources []string
	// Scratch writes a database that need not survive a crash of the
	// machine (see index.OpenOptions.Scratch): a temporary one, or a serve
	// cache, whose digest is checked before use.
	Scratch bool
}

// RenderIndexFile is FromIndex on the database file at path, opened read-only.
func RenderIndexFile(ctx context.Context, path string, opts RenderOptions) (*Catalog, []string, error) {
	db, err := index.OpenReadOnly(path)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = db.Close() }() // read-only: nothing to lose
	c, warnings, err := FromIndex(ctx, db, opts)
	if db.RolledBack() {
		warnings = append(warnings, index.RolledBackWarning(path))
	}
	return c, warnings, err
}

// ToIndex writes the catalog as a new index database at path (schema 13, as
// internal/index writes it). A catalog with validation errors (Validate) is
// refused. The database is built in a temporary file
// beside path and renamed into place when complete, so path is never left
// half-written; an existing file is refused unless opts.Force.
func ToIndex(ctx context.Context, c *Catalog, path string, opts ToIndexOptions) error {
	return toIndexFile(ctx, path, opts, func(db *index.DB) error { return ImportCatalog(ctx, db, c) })
}

// ImportCatalog imports the catalog into db, validated and converted as
// ToIndex does, in one transaction (index filter: the packages it replaces
// are removed first).
func ImportCatalog(ctx context.Context, db *index.DB, c *Catalog) error {
	return importSource(ctx, db, &wholeCatalog{c: c}, countEntries(c), nil)
}

// ToIndexScanned is ToIndex of a scanned catalog, a package at a time:
// memory holds a few packages, not the catalog. The result, and every
// error, is what LoadDir then ToIndex give for the same files, except that
// load errors come as a *CatalogLoadError.
func ToIndexScanned(ctx context.Context, s *Scanned, path string, opts ToIndexOptions) error {
	return toIndexFile(ctx, path, opts, func(db *index.DB) error {
		return importSource(ctx, db, s, s.Entries, s.Err)
	})
}

// DirCounts says how much DirToIndex converted.
type DirCounts struct {
	Packages, Bundles int
}

// DirToIndex is LoadDir then ToIndex, a package at a time (ScanDir,
// ToIndexScanned): load errors come as a *CatalogLoadError.
func DirToIndex(ctx context.Context, dir, path string, opts ToIndexOptions, load LoadOptions) (DirCounts, error) {
	s, err := ScanDir(dir, load)
	if err != nil {
		return DirCounts{}, &CatalogLoadError{Err: err}
	}
	defer func() { _ = s.Close() }() // only a temporary file to release
	if s.Cut() {
		return DirCounts{}, &CatalogLoadError{Err: s.Err()}
	}
	if err := ToIndexScanned(ctx, s, path, opts); err != nil {
		return DirCounts{}, err
	}
	return DirCounts{Packages: len(s.Packages()), Bundles: s.Bundles}, nil
}

// CatalogLoadError is a catalog's load errors (see Load), returned by the
// conversions that load it a package at a time.
type CatalogLoadError struct{ Err error }

func (e *CatalogLoadError) Error() string { return e.Err.Error() }
func (e *CatalogLoadError) Unwrap() error { return e.Err }

func toIndexFile(ctx context.Context, path string, opts ToIndexOptions, fill func(*index.DB) error) error {
	if err := atomicfile.CheckApart(path, opts.Sources...); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	if _, err := os.Lstat(path); err == nil && !opts.Force {
		return fmt.Errorf("write index %s: %w; remove it or write elsewhere", path, os.ErrExist)
	}
	if _, err := atomicfile.CleanStale(path); err != nil {
		return fmt.Errorf("write index %s: clean up after an earlier run: %w", path, err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), atomicfile.TempPattern(path, atomicfile.KindTmp))
	if err != nil {
		return fmt.Errorf("write index %s: %w", path, err)
	}
	tmp := f.Name()
	f.Close()
	os.Remove(tmp)
	defer os.Remove(tmp)
	defer os.Remove(tmp + "-journal")
	db, err := index.CreateWith(tmp, index.OpenOptions{Scratch: opts.Scratch})
	if err != nil {
		return fmt.Errorf("write index %s: %w", path, err)
	}
	if err := fill(db); err != nil {
		_ = db.Close()
		var le *CatalogLoadError
		if errors.As(err, &le) {
			return err
		}
		return fmt.Errorf("write index %s: %w", path, err)
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("write index %s: %w", path, err)
	}
	if opts.Force {
		err = os.Rename(tmp, path)
	} else {
		// Link, not rename: never replace a file that appeared meanwhile.
		err = os.Link(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("write index %s: %w", path, err)
	}
	return nil
}

// ToIndexDB adds the catalog's packages to an open index database (none of
// them may be in it yet).
func ToIndexDB(ctx context.Context, c *Catalog, db *index.DB) error {
	if err := importSource(ctx, db, &wholeCatalog{c: c}, countEntries(c), nil); err != nil {
		return fmt.Errorf("write index %s: %w", db.Path(), err)
	}
	return nil
}

func countEntries(c *Catalog) int {
	n := 0
	for _, ch := range c.Channels {
		n += len(ch.Entries)
	}
	return n
}

// preparedPackage is one package validated and converted (on a worker).
type preparedPackage struct {
	findings []validate.Finding // errors only
	pkg      index.ImportPackage
	errs     []error
}

// importSource validates and converts each package of src and imports it
// into db, all in one transaction. What fails, in this order of
// precedence as when the catalog was whole: the catalog's load errors
// (loadErr, read once every package is loaded), its validation errors,
// conversion errors, then the database's refusals.
func importSource(ctx context.Context, db *index.DB, src packageSource, entries int, loadErr func() error) error {
	im, err := db.BeginImport(ctx, entries)
	if err != nil {
		return err
	}
	defer im.Rollback()
	var findings []validate.Finding
	var convErrs []error
	// Bundles without manifests (upstream's semver modes dropped them) take
	// an API's plural from another bundle that has it: the api table holds
	// one row per group/version/kind, written by its first bundle; rows
	// written without a plural get the first one seen, at the end.
	plurals := map[index.API]string{}
	var pluralOrder []index.API
	prepare := func(name string, pc *Catalog) *preparedPackage {
		pp := &preparedPackage{}
		objs := decodedObjects{}
		for _, f := range validateKeeping(pc, objs) {
			if f.Severity == validate.Error {
				pp.findings = append(pp.findings, f)
			}
		}
		if len(pp.findings) == 0 {
			pp.pkg, pp.errs = importPackage(name, pc, objs)
		}
		return pp
	}
	err = eachPrepared(ctx, src, prepare, func(_ string, pp *preparedPackage) error {
		findings = append(findings, pp.findings...)
		convErrs = append(convErrs, pp.errs...)
		if len(findings) > 0 || len(convErrs) > 0 {
			return nil // refused in the end: convert the rest only to report it
		}
		for _, b := range pp.pkg.Bundles {
			for _, a := range append(append([]index.API{}, b.Provided...), b.Required...) {
				k := index.API{Group: a.Group, Version: a.Version, Kind: a.Kind}
				if a.Plural != "" && plurals[k] == "" {
					plurals[k] = a.Plural
					pluralOrder = append(pluralOrder, k)
				}
			}
		}
		return im.Add(ctx, pp.pkg)
	})
	if err != nil {
		return err
	}
	if loadErr != nil {
		if err := loadErr(); err != nil {
			return &CatalogLoadError{Err: err}
		}
	}
	if len(findings) > 0 {
		sortFindings(findings)
		return &InvalidError{Findings: findings}
	}
	if len(convErrs) > 0 {
		return errors.Join(convErrs...)
	}
	for _, k := range pluralOrder {
		k.Plural = plurals[k]
		if err := im.SetPlural(ctx, k); err != nil {
			return err
		}
	}
	return im.Commit(ctx)
}

// importPackage converts one package of a catalog that validates to
// index content.
func importPackage(name string, pc *Catalog, objs decodedObjects) (index.ImportPackage, []error) {
	metas := indexMetas(pc.Others)
	if len(pc.Packages) == 0 && len(pc.Channels) == 0 && len(pc.Bundles) == 0 {
		// Blobs of no package of the catalog (custom schemas): kept
		// on their own.
		return index.ImportPackage{Name: name, Metas: metas}, nil
	}
	if len(pc.Packages) != 1 {
		return index.ImportPackage{}, []error{fmt.Errorf("package %q: %d olm.package blobs; exactly one is needed (opm validate tells more)", name, len(pc.Packages))}
	}
	pkg := pc.Packages[0]
	ip := index.ImportPackage{Name: name, DefaultChannel: pkg.DefaultChannel, Metas: metas}
	// The channel entry of each bundle in the default channel (or the
	// first channel), for the bundle's own replaces and skips.
	firstEntry := map[string]ChannelEntry{}
	chans := append([]Channel(nil), pc.Channels...)
	sort.SliceStable(chans, func(i, j int) bool {
		if (chans[i].Name == ip.DefaultChannel) != (chans[j].Name == ip.DefaultChannel) {
			return chans[i].Name == ip.DefaultChannel
		}
		return chans[i].Name < chans[j].Name
	})
	for _, ch := range chans {
		ic := index.ImportChannel{Name: ch.Name}
		for _, e := range ch.Entries {
			ic.Entries = append(ic.Entries, index.ImportEntry{Bundle: e.Name, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange})
			if _, ok := firstEntry[e.Name]; !ok {
				firstEntry[e.Name] = e
			}
		}
		ip.Channels = append(ip.Channels, ic)
	}
	var errs []error
	for _, b := range pc.Bundles {
		bc, csvImages, err := bundleContent(b, firstEntry[b.Name], objs)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ip.Bundles = append(ip.Bundles, bc)
		// Related images whose names (or order) a render would not
		// give back from the CSV are kept as they are.
		if !slices.Equal(namedImages(csvImages, bc.Images), b.RelatedImages) {
			blob, err := marshal(bundleImages{RelatedImages: b.RelatedImages})
			if err != nil {
				errs = append(errs, fmt.Errorf("bundle %s: %w", b.Name, err))
				continue
			}
			ip.Metas = append(ip.Metas, index.Meta{Schema: SchemaBundle, Package: name, Name: b.Name, Blob: blob})
		}
	}
	if m, err := packageMeta(pkg, pc.Channels, ip.Bundles); err != nil {
		errs = append(errs, err)
	} else if m != nil {
		ip.Metas = append([]index.Meta{*m}, ip.Metas...)
	}
	return ip, errs
}

// bundleImages is what the index keeps of a bundle blob's related images
// when a render would not give them back (as an olm.bundle row of
// index.MetaTable).
type bundleImages struct {
	RelatedImages []RelatedImage `json:"relatedImages"`
}

// packageMeta keeps what a package blob says that the index has no column
// for: its description, its properties, and an icon other than the one a
// render takes from the default channel head's CSV. Nil when there is none.
func packageMeta(pkg Package, channels []Channel, bundles []*index.BundleContent) (*index.Meta, error) {
	icon := pkg.Icon
	if icon != nil {
		var head string
		for _, ch := range channels {
			if ch.Name == pkg.DefaultChannel {
				head = channelHead(ch)
			}
		}
		for _, b := range bundles {
			if b.Name == head && len(b.CSV) > 0 {
				if own, _ := csvIcon(b); own != nil && own.MediaType == icon.MediaType && bytes.Equal(own.Data, icon.Data) {
					icon = nil
				}
			}
		}
	}
	if pkg.Description == "" && icon == nil && len(pkg.Properties) == 0 {
		return nil, nil
	}
	blob, err := marshal(Package{Schema: SchemaPackage, Name: pkg.Name, Icon: icon, Description: pkg.Description, Properties: pkg.Properties})
	if err != nil {
		return nil, fmt.Errorf("package %q: %w", pkg.Name, err)
	}
	return &index.Meta{Schema: SchemaPackage, Package: pkg.Name, Name: pkg.Name, Blob: blob}, nil
}

// channelHead is the entry no other entry replaces or skips ("" unless
// exactly one).
func channelHead(ch Channel) string {
	replaced := map[string]bool{}
	for _, e := range ch.Entries {
		if e.Replaces != "" {
			replaced[e.Replaces] = true
		}
		for _, s := range e.Skips {
			replaced[s] = true
		}
	}
	head := ""
	for _, e := range ch.Entries {
		if !replaced[e.Name] {
			if head != "" {
				return ""
			}
			head = e.Name
		}
	}
	return head
}

// sameImages reports whether two lists name the same set of images.
func sameImages(a, b []RelatedImage) bool {
	set := func(l []RelatedImage) map[string]bool {
		m := map[string]bool{}
		for _, ri := range l {
			if ri.Image != "" {
				m[ri.Image] = true
			}
		}
		return m
	}
	x, y := set(a), set(b)
	if len(x) != len(y) {
		return false
	}
	for k := range x {
		if !y[k] {
			return false
		}
	}
	return true
}

// indexMetas are the blobs the index keeps in opm's own table
// (deprecations, custom schemas), compacted.
func indexMetas(others []Meta) []index.Meta {
	out := make([]index.Meta, 0, len(others))
	for _, m := range others {
		blob := []byte(m.Blob)
		if c, err := rawjson.Compact(blob); err == nil {
			blob = c
		}
		out = append(out, index.Meta{Schema: m.Schema, Package: m.Package, Name: m.Name, Blob: blob})
	}
	return out
}

// bundleContent converts an olm.bundle blob to what the index stores: the
// inverse of bundleBlob. It also returns the CSV's relatedImages.
func bundleContent(b Bundle, entry ChannelEntry, objs decodedObjects) (*index.BundleContent, []RelatedImage, error) {
	fail := func(format string, args ...any) error {
		where := b.Pos.File
		if b.Pos.Line > 0 {
			where = fmt.Sprintf("%s:%d", b.Pos.File, b.Pos.Line)
		}
		if where != "" {
			where += ": "
		}
		return fmt.Errorf("%sbundle %s: %s", where, b.Name, fmt.Sprintf(format, args...))
	}
	c := &index.BundleContent{Name: b.Name, Package: b.Package, BundlePath: b.Image,
		Replaces: entry.Replaces, Skips: entry.Skips, SkipRange: entry.SkipRange}
	var provided, required []GVKValue
	var csvImages []RelatedImage
	// Every property but the manifests goes to the properties table, in
	// the blob's order: that is what upstream's opm serve answers for the
	// bundle (OLM stamps it on the installed CSV). Dependencies are filled
	// as upstream's server fills them, from the requirements: olm.gvk for
	// olm.gvk.required, olm.package (version = the range) for
	// olm.package.required.
	prop := func(p Property) {
		c.Properties = append(c.Properties, index.TypedValue{Type: p.Type, Value: p.Value})
	}
	for _, p := range b.Properties {
		switch p.Type {
		case PropertyPackage:
			var v PackageValue
			if err := json.Unmarshal(p.Value, &v); err != nil {
				return nil, nil, fail("property olm.package: %v", err)
			}
			c.Version, c.Release = v.Version, v.Release
			prop(p)
		case PropertyGVK:
			var v GVKValue
			if err := json.Unmarshal(p.Value, &v); err != nil {
				return nil, nil, fail("property olm.gvk: %v", err)
			}
			provided = append(provided, v)
			// Readers find the providers of an API by this exact value:
			// keys in the order every writer uses.
			prop(mustProperty(PropertyGVK, v))
		case PropertyGVKRequired:
			var v GVKValue
			if err := json.Unmarshal(p.Value, &v); err != nil {
				return nil, nil, fail("property olm.gvk.required: %v", err)
			}
			required = append(required, v)
			prop(p)
			c.Dependencies = append(c.Dependencies, index.TypedValue{Type: PropertyGVK, Value: p.Value})
		case PropertyPackageRequired:
			var v PackageRequiredValue
			if err := json.Unmarshal(p.Value, &v); err != nil {
				return nil, nil, fail("property olm.package.required: %v", err)
			}
			prop(p)
			c.Dependencies = append(c.Dependencies, index.TypedValue{Type: PropertyPackage,
				Value: mustProperty(PropertyPackage, PackageValue{PackageName: v.PackageName, Version: v.VersionRange}).Value})
		case PropertyBundleObject:
			v, err := objs.decode(p.Value)
			if err != nil {
				return nil, nil, fail("property olm.bundle.object: %v", err)
			}
			if v.Ref != "" && len(v.Data) == 0 {
				return nil, nil, fail("olm.bundle.object refers to file %q; opm reads only inline data (base64 in \"data\")", v.Ref)
			}
			c.Objects = append(c.Objects, v.Data)
		default:
			prop(p)
		}
	}
	if c.Version == "" {
		return nil, nil, fail("no olm.package property with a version")
	}
	// The CSV, and plurals, from the manifests when the blob carries them.
	plurals := map[GVKValue]string{}
	for _, o := range c.Objects {
		// Only CSVs and CRDs matter here: skip parsing the others.
		if !bytes.Contains(o, []byte(bundle.CSVKind)) && !bytes.Contains(o, []byte(bundle.CRDKind)) {
			continue
		}
		var obj manifestHead
		if !decodeManifestHeadFast(o, &obj) {
			obj = manifestHead{}
			if err := json.Unmarshal(o, &obj); err != nil {
				var te *json.UnmarshalTypeError
				if !errors.As(err, &te) {
					return nil, nil, fail("an olm.bundle.object is not a JSON manifest: %v", err)
				}
				// A field of another type than OLM's: keep what did decode.
			}
		}
		switch obj.Kind {
		case bundle.CSVKind:
			if c.CSV != nil {
				continue
			}
			c.CSV = o
			csvImages = obj.Spec.RelatedImages
			if obj.Spec.Replaces != "" {
				c.Replaces = obj.Spec.Replaces
			}
			var skips []string
			for _, s := range obj.Spec.Skips {
				if s != "" {
					skips = append(skips, s)
				}
			}
			if len(skips) > 0 {
				c.Skips = skips
			}
			if sr := obj.Metadata.Annotations[bundle.AnnotationSkipRange]; sr != "" && c.SkipRange == "" {
				c.SkipRange = sr
			}
			for _, d := range append(append([]crdDesc{}, obj.Spec.CRDs.Owned...), obj.Spec.CRDs.Required...) {
				if plural, group, ok := strings.Cut(d.Name, "."); ok {
					k := GVKValue{Group: group, Kind: d.Kind, Version: d.Version}
					if plurals[k] == "" {
						plurals[k] = plural
					}
				}
			}
			for _, d := range append(append([]apiDesc{}, obj.Spec.APIs.Owned...), obj.Spec.APIs.Required...) {
				k := GVKValue{Group: d.Group, Kind: d.Kind, Version: d.Version}
				if plurals[k] == "" {
					plurals[k] = d.Name
				}
			}
		case bundle.CRDKind:
			for _, v := range obj.Spec.Versions {
				plurals[GVKValue{Group: obj.Spec.Group, Kind: obj.Spec.Names.Kind, Version: v.Name}] = obj.Spec.Names.Plural
			}
			if obj.Spec.Version != "" {
				plurals[GVKValue{Group: obj.Spec.Group, Kind: obj.Spec.Names.Kind, Version: obj.Spec.Version}] = obj.Spec.Names.Plural
			}
		}
	}
	for _, v := range provided {
		c.Provided = append(c.Provided, index.API{Group: v.Group, Version: v.Version, Kind: v.Kind, Plural: plurals[v]})
	}
	for _, v := range required {
		c.Required = append(c.Required, index.API{Group: v.Group, Version: v.Version, Kind: v.Kind, Plural: plurals[v]})
	}
	for _, ri := range b.RelatedImages {
		if ri.Image != "" {
			c.Images = append(c.Images, ri.Image)
		}
	}
	return c, csvImages, nil
}

// manifestHead is what ToIndex reads of a CSV or CRD manifest.
type manifestHead struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		// CSV
		Replaces      string         `json:"replaces"`
		Skips         []string       `json:"skips"`
		RelatedImages []RelatedImage `json:"relatedImages"`
		CRDs          struct {
			Owned    []crdDesc `json:"owned"`
			Required []crdDesc `json:"required"`
		} `json:"customresourcedefinitions"`
		APIs struct {
			Owned    []apiDesc `json:"owned"`
			Required []apiDesc `json:"required"`
		} `json:"apiservicedefinitions"`
		// CRD
		Group string `json:"group"`
		Names struct {
			Kind   string `json:"kind"`
			Plural string `json:"plural"`
		} `json:"names"`
		Versions []crdVersion `json:"versions"`
		Version  string       `json:"version"`
	} `json:"spec"`
}

type crdVersion struct {
	Name string `json:"name"`
}

type crdDesc struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

type apiDesc struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
}
