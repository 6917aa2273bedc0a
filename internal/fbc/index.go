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
)

// FromIndex renders an index database as a file-based catalog, as upstream
// `opm render` / `opm migrate` did (see docs/compatibility.md for where it
// differs): per package an olm.package (default channel, icon of the default
// channel's head), one olm.channel per channel and one olm.bundle per bundle.
// Warnings say what was filled in, such as a default channel the database
// lacks (upstream crashed there).
func FromIndex(ctx context.Context, db *index.DB, opts RenderOptions) (*Catalog, []string, error) {
	pkgs, err := db.Dump(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("render index: %w", err)
	}
	// Chains start at the least depth of the whole database, as upstream
	// read it (heads are at depth 0 in every database opm or upstream wrote).
	tip := int64(-1)
	for _, p := range pkgs {
		for _, e := range p.Entries {
			if tip < 0 || e.Depth < tip {
				tip = e.Depth
			}
		}
	}
	c := &Catalog{}
	var warnings []string
	for _, p := range pkgs {
		w, err := c.addIndexPackage(p, tip, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("render index %s: package %s: %w", db.Path(), p.Name, err)
		}
		warnings = append(warnings, w...)
	}
	metas, err := db.Metas(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("render index: %w", err)
	}
	warnings = append(warnings, c.addIndexMetas(metas)...)
	return c, warnings, nil
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

// channelBlob derives a channel's entries from its channel_entry rows the way
// upstream read them: the chain starts at the entries at depth tip (the
// head) and follows replaces; a bundle's replaces is the (greatest) name its
// chain entries replace, and its skips are the names its other entries
// replace, in entry order. Entries are sorted by bundle name.
func channelBlob(pkg, name string, rows []index.EntryDump, tip int64, bundles map[string]*index.BundleContent) Channel {
	ch := Channel{Schema: SchemaChannel, Name: name, Package: pkg, Entries: []ChannelEntry{}}
	byID := make(map[int64]index.EntryDump, len(rows))
	for _, e := range rows {
		byID[e.ID] = e
	}
	chain := map[int64]bool{}
	var stack []int64
	for _, e := range rows {
		if e.Depth == tip {
			stack = append(stack, e.ID)
		}
	}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		e, ok := byID[id]
		if !ok || chain[id] {
			continue
		}
		chain[id] = true
		if e.Replaces != 0 {
			stack = append(stack, e.Replaces)
		}
	}
	entries := map[string]*ChannelEntry{}
	var names []string
	for _, e := range rows {
		b := bundles[e.Bundle]
		if b == nil {
			continue // a skipped name, not a bundle of the index
		}
		ce := entries[e.Bundle]
		if ce == nil {
			ce = &ChannelEntry{Name: e.Bundle, SkipRange: b.SkipRange}
			entries[e.Bundle] = ce
			names = append(names, e.Bundle)
		}
		if e.Replaces == 0 {
			continue
		}
		to, ok := byID[e.Replaces]
		if !ok {
			continue
		}
		if chain[e.ID] {
			if to.Bundle > ce.Replaces {
				ce.Replaces = to.Bundle
			}
		} else {
			ce.Skips = append(ce.Skips, to.Bundle)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		ch.Entries = append(ch.Entries, *entries[n])
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

// csvIcon is the package icon upstream took from a CSV: its first icon, the
// base64 data decoded (retried without spaces).
func csvIcon(b *index.BundleContent) (*Icon, string) {
	var csv struct {
		Spec struct {
			Icon []struct {
				Data      string `json:"base64data"`
				MediaType string `json:"mediatype"`
			} `json:"icon"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(b.CSV, &csv); err != nil || len(csv.Spec.Icon) == 0 {
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

// ToIndexOptions control ToIndex.
type ToIndexOptions struct {
	// Force replaces an existing file at the destination.
	Force bool
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
		warnings = append(warnings, fmt.Sprintf("%s has the journal of a write that never committed (a killed writer); read the committed content from a private copy with that write rolled back (open the file once with write access to roll it back in place)", path))
	}
	return c, warnings, err
}

// ToIndex writes the catalog as a new index database at path (schema 13, as
// internal/index writes it). A catalog with validation errors (Validate) is
// refused. The database is built in a temporary file
// beside path and renamed into place when complete, so path is never left
// half-written; an existing file is refused unless opts.Force.
func ToIndex(ctx context.Context, c *Catalog, path string, opts ToIndexOptions) error {
	if _, err := os.Lstat(path); err == nil && !opts.Force {
		return fmt.Errorf("write index %s: %w; remove it or write elsewhere", path, os.ErrExist)
	}
	pkgs, err := importPackages(c)
	if err != nil {
		return fmt.Errorf("write index %s: %w", path, err)
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
	db, err := index.Create(tmp)
	if err != nil {
		return fmt.Errorf("write index %s: %w", path, err)
	}
	if err := db.Import(ctx, pkgs); err != nil {
		_ = db.Close()
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
	pkgs, err := importPackages(c)
	if err != nil {
		return fmt.Errorf("write index %s: %w", db.Path(), err)
	}
	return db.Import(ctx, pkgs)
}

// importPackages converts a catalog that validates to index content.
func importPackages(c *Catalog) ([]index.ImportPackage, error) {
	if err := Check(c); err != nil {
		return nil, err
	}
	var out []index.ImportPackage
	var errs []error
	for _, name := range c.PackageNames() {
		pc := c.Package(name)
		metas := indexMetas(pc.Others)
		if len(pc.Packages) == 0 && len(pc.Channels) == 0 && len(pc.Bundles) == 0 {
			// Blobs of no package of the catalog (custom schemas): kept
			// on their own.
			out = append(out, index.ImportPackage{Name: name, Metas: metas})
			continue
		}
		if len(pc.Packages) != 1 {
			errs = append(errs, fmt.Errorf("package %q: %d olm.package blobs; exactly one is needed (opm validate tells more)", name, len(pc.Packages)))
			continue
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
				ic.Entries = append(ic.Entries, index.ImportEntry{Bundle: e.Name, Replaces: e.Replaces, Skips: e.Skips})
				if _, ok := firstEntry[e.Name]; !ok {
					firstEntry[e.Name] = e
				}
			}
			ip.Channels = append(ip.Channels, ic)
		}
		for _, b := range pc.Bundles {
			bc, csvImages, err := bundleContent(b, firstEntry[b.Name])
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
		out = append(out, ip)
	}
	// Bundles without manifests (upstream's semver modes dropped them) take
	// an API's plural from another bundle that has it: the api table holds
	// one row per group/version/kind.
	plurals := map[index.API]string{}
	for _, ip := range out {
		for _, b := range ip.Bundles {
			for _, a := range append(append([]index.API{}, b.Provided...), b.Required...) {
				k := index.API{Group: a.Group, Version: a.Version, Kind: a.Kind}
				if a.Plural != "" && plurals[k] == "" {
					plurals[k] = a.Plural
				}
			}
		}
	}
	for _, ip := range out {
		for _, b := range ip.Bundles {
			for _, list := range [][]index.API{b.Provided, b.Required} {
				for i, a := range list {
					if a.Plural == "" {
						list[i].Plural = plurals[index.API{Group: a.Group, Version: a.Version, Kind: a.Kind}]
					}
				}
			}
		}
	}
	return out, errors.Join(errs...)
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
		var buf bytes.Buffer
		if json.Compact(&buf, blob) == nil {
			blob = buf.Bytes()
		}
		out = append(out, index.Meta{Schema: m.Schema, Package: m.Package, Name: m.Name, Blob: blob})
	}
	return out
}

// bundleContent converts an olm.bundle blob to what the index stores: the
// inverse of bundleBlob. It also returns the CSV's relatedImages.
func bundleContent(b Bundle, entry ChannelEntry) (*index.BundleContent, []RelatedImage, error) {
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
			v, err := decodeBundleObject(p.Value)
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
		if err := json.Unmarshal(o, &obj); err != nil {
			var te *json.UnmarshalTypeError
			if !errors.As(err, &te) {
				return nil, nil, fail("an olm.bundle.object is not a JSON manifest: %v", err)
			}
			// A field of another type than OLM's: keep what did decode.
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
		Versions []struct {
			Name string `json:"name"`
		} `json:"versions"`
		Version string `json:"version"`
	} `json:"spec"`
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
