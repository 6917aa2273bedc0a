// Package semver renders semver templates (schema olm.semver) into
// file-based catalogs, as upstream opm's `alpha render-template semver`
// does.
//
// A template lists bundle images under up to three archetypes (candidate,
// fast, stable). Render pulls each image once through Options.RenderBundle
// and generates, per archetype, channels named <archetype>-v<X> (major,
// generateMajorChannels) and/or <archetype>-v<X>.<Y> (minor,
// generateMinorChannels; the default when neither is set). Within one
// archetype, channel kind and major version, the highest patch of each minor
// version replaces the highest patch of the previous minor version and skips
// every other earlier bundle; no edge crosses an archetype, a channel kind or
// a major version. The package's default channel is the most stable
// archetype's channel created by the highest version, the kind named by
// defaultChannelTypePreference winning a tie; the package takes its
// description and icon from the CSV of that channel's head.
//
// The result equals upstream's for the same bundles: the same blobs, and the
// same bytes once written with fbc.Write (which orders blobs as upstream's
// writer does).
//
// A command calls Render(ctx, data, Options{RenderBundle, Source}), or
// Parse(data, source) first (a malformed template fails before anything is
// pulled; Template.Images lists what will be pulled) and then
// Template.Render. Every error about the template is an *Error naming the
// file, line and field.
//
// Mermaid(w, catalog, warn) draws a rendered catalog's channels with the
// one mermaid writer, graph.WriteMermaid, as upstream's `alpha
// render-template -o mermaid` does, line for line.
package semver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
)

// Options are what Render needs besides the template.
type Options struct {
	// RenderBundle renders one bundle image to its olm.bundle blob. It is
	// called once per distinct image, from several goroutines at once.
	// The blob's CSV field, when set, supplies the package's description
	// and icon; otherwise its olm.bundle.object CSV does.
	RenderBundle func(ctx context.Context, image string) (*fbc.Bundle, error)
	// Source names the template in errors (a file name; "-" for stdin).
	Source string
	// Concurrency bounds the RenderBundle calls running at once; 0 means 4.
	Concurrency int
}

// Render parses a semver template and renders the catalog it describes:
// one olm.package, the generated olm.channel blobs (sorted by name) and one
// olm.bundle per distinct image (in template order). Errors name the
// template file, line and field at fault; nothing is returned with them.
func Render(ctx context.Context, data []byte, opts Options) (*fbc.Catalog, error) {
	t, err := Parse(data, opts.Source)
	if err != nil {
		return nil, err
	}
	return t.Render(ctx, opts)
}

// Render renders a parsed template; see the package Render.
func (t *Template) Render(ctx context.Context, opts Options) (*fbc.Catalog, error) {
	if opts.RenderBundle == nil {
		return nil, errors.New("semver template: no bundle renderer")
	}
	refs := t.refs()
	if len(refs) == 0 {
		return nil, &Error{Source: t.source, Line: 1, Msg: "the template lists no bundles: add images under candidate, fast or stable bundles"}
	}
	blobs, err := renderAll(ctx, refs, t.source, opts)
	if err != nil {
		return nil, err
	}
	out := &fbc.Catalog{}
	for _, r := range refs {
		out.Bundles = append(out.Bundles, *blobs[r.Image])
	}

	// Versions per archetype, with the package taken from the first bundle.
	g := &generator{t: t, versions: map[Archetype]map[string]semver.Version{}}
	pkgFrom := ""
	for _, a := range Archetypes {
		vs := map[string]semver.Version{}
		where := map[string]BundleRef{}
		for _, r := range t.Bundles[a] {
			b := blobs[r.Image]
			pv, err := packageOf(b)
			if err != nil {
				return nil, &Error{Source: t.source, Line: r.Line, Field: r.Field, Msg: fmt.Sprintf("bundle %s (%s): %v", b.Name, r.Image, err)}
			}
			v, err := semver.Parse(pv.Version)
			if err != nil {
				return nil, &Error{Source: t.source, Line: r.Line, Field: r.Field,
					Msg: fmt.Sprintf("bundle %s (%s) has version %q, which is not semver: %v", b.Name, r.Image, pv.Version, err)}
			}
			if g.pkg == "" {
				g.pkg, pkgFrom = pv.PackageName, r.Field
			} else if pv.PackageName != g.pkg {
				return nil, &Error{Source: t.source, Line: r.Line, Field: r.Field,
					Msg: fmt.Sprintf("bundle %s (%s) is in package %q, but the template's package is %q (from %s): a template renders one package", b.Name, r.Image, pv.PackageName, g.pkg, pkgFrom)}
			}
			if prev, dup := where[b.Name]; dup {
				return nil, &Error{Source: t.source, Line: r.Line, Field: r.Field,
					Msg: fmt.Sprintf("bundle %s is listed twice under %s (also %s at line %d): list each bundle once per archetype", b.Name, a, prev.Field, prev.Line)}
			}
			where[b.Name] = r
			vs[b.Name] = v
		}
		if err := sameVersions(vs, where, t.source, a); err != nil {
			return nil, err
		}
		g.versions[a] = vs
	}

	out.Channels = g.channels()
	pkg := fbc.Package{Schema: fbc.SchemaPackage, Name: g.pkg, DefaultChannel: g.defaultChannel}
	describe(&pkg, out)
	out.Packages = []fbc.Package{pkg}
	return out, nil
}

// renderAll calls RenderBundle once per image, a few at a time; every
// failure is reported, each at the image's first line.
func renderAll(ctx context.Context, refs []BundleRef, source string, opts Options) (map[string]*fbc.Bundle, error) {
	n := opts.Concurrency
	if n <= 0 {
		n = 4
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]*fbc.Bundle, len(refs))
	errs := make([]error, len(refs))
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i, r := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-sem }()
			b, err := opts.RenderBundle(ctx, r.Image)
			if err == nil && b == nil {
				err = errors.New("no bundle in the image")
			}
			if err != nil {
				errs[i] = &Error{Source: source, Line: r.Line, Field: r.Field, Msg: fmt.Sprintf("render %s: %v", r.Image, err), Err: err}
				return
			}
			results[i] = b
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var all []error
	for _, e := range errs {
		if e != nil {
			all = append(all, e)
		}
	}
	if len(all) > 0 {
		return nil, errors.Join(all...)
	}
	out := map[string]*fbc.Bundle{}
	for i, r := range refs {
		out[r.Image] = results[i]
	}
	return out, nil
}

// packageOf returns the bundle's one olm.package property value.
func packageOf(b *fbc.Bundle) (fbc.PackageValue, error) {
	var found []fbc.PackageValue
	for _, p := range b.Properties {
		if p.Type != fbc.PropertyPackage {
			continue
		}
		var v fbc.PackageValue
		if err := json.Unmarshal(p.Value, &v); err != nil {
			return v, fmt.Errorf("olm.package property %s: %w", p.Value, err)
		}
		found = append(found, v)
	}
	if len(found) != 1 {
		return fbc.PackageValue{}, fmt.Errorf("has %d olm.package properties; exactly one is needed", len(found))
	}
	return found[0], nil
}

// sameVersions refuses two bundles of one archetype whose versions differ
// only in build metadata (or not at all): they cannot be ordered.
func sameVersions(vs map[string]semver.Version, where map[string]BundleRef, source string, a Archetype) error {
	names := make([]string, 0, len(vs))
	for n := range vs {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return where[names[i]].Line < where[names[j]].Line })
	first := map[string]string{}
	var errs []error
	for _, n := range names {
		v := vs[n]
		v.Build = nil
		key := v.String()
		if prev, dup := first[key]; dup {
			r := where[n]
			errs = append(errs, &Error{Source: source, Line: r.Line, Field: r.Field,
				Msg: fmt.Sprintf("bundle %s has version %s, which cannot be ordered against %s (%s) under %s: versions may not differ only in build metadata", n, vs[n], prev, vs[prev], a)})
			continue
		}
		first[key] = n
	}
	return errors.Join(errs...)
}

// generator builds the channels of one rendered template.
type generator struct {
	t              *Template
	pkg            string
	versions       map[Archetype]map[string]semver.Version
	defaultChannel string
}

// member is one bundle in one generated channel.
type member struct {
	name    string
	version semver.Version
	channel *fbc.Channel
	index   int // in channel.Entries
}

// best tracks the default-channel candidate: the most stable archetype, then
// the highest version that created a channel, then the preferred kind.
type best struct {
	arch    Archetype
	kind    Kind
	version semver.Version
	name    string
}

func (b best) beats(o best, pref Kind) bool {
	if b.arch.rank() != o.arch.rank() {
		return b.arch.rank() > o.arch.rank()
	}
	if !b.version.EQ(o.version) {
		return b.version.GT(o.version)
	}
	if b.kind != o.kind {
		switch pref {
		case b.kind:
			return true
		case o.kind:
			return false
		}
		return b.kind.rank() > o.kind.rank()
	}
	return false
}

func channelName(a Archetype, k Kind, v semver.Version) string {
	if k == Major {
		return fmt.Sprintf("%s-v%d", a, v.Major)
	}
	return fmt.Sprintf("%s-v%d.%d", a, v.Major, v.Minor)
}

func (g *generator) channels() []fbc.Channel {
	byName := map[string]*fbc.Channel{}
	top := best{arch: Candidate}
	for _, a := range Archetypes {
		vs := g.versions[a]
		if len(vs) == 0 {
			continue
		}
		names := make([]string, 0, len(vs))
		for n := range vs {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool { return vs[names[i]].LT(vs[names[j]]) })
		for _, k := range g.t.kinds() {
			var stream []member
			for _, n := range names {
				v := vs[n]
				cn := channelName(a, k, v)
				ch := byName[cn]
				if ch == nil {
					ch = &fbc.Channel{Schema: fbc.SchemaChannel, Name: cn, Package: g.pkg, Entries: []fbc.ChannelEntry{}}
					byName[cn] = ch
					if c := (best{arch: a, kind: k, version: v, name: cn}); c.beats(top, g.t.DefaultChannelTypePreference) {
						top = c
					}
				}
				ch.Entries = append(ch.Entries, fbc.ChannelEntry{Name: n})
				stream = append(stream, member{name: n, version: v, channel: ch, index: len(ch.Entries) - 1})
			}
			link(stream)
		}
	}
	g.defaultChannel = top.name
	out := make([]fbc.Channel, 0, len(byName))
	for _, ch := range byName {
		out = append(out, *ch)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// link writes the edges of one archetype's channels of one kind, given in
// ascending version order. Per major version, the last (highest) bundle of
// each minor version replaces the last bundle of the previous minor version
// and skips every other bundle before it; the other bundles get no edges.
func link(stream []member) {
	start := 0 // first member of the current major version
	prevMinorTop := ""
	for i, m := range stream {
		if i > 0 && stream[i-1].version.Major != m.version.Major {
			start, prevMinorTop = i, ""
		}
		last := i == len(stream)-1
		if !last {
			next := stream[i+1].version
			if next.Major == m.version.Major && next.Minor == m.version.Minor {
				continue // not the top of its minor version
			}
		}
		e := &m.channel.Entries[m.index]
		e.Replaces = prevMinorTop
		var skips []string
		for _, s := range stream[start:i] {
			if s.name != prevMinorTop {
				skips = append(skips, s.name)
			}
		}
		sort.Strings(skips)
		if len(skips) > 0 {
			e.Skips = skips
		}
		prevMinorTop = m.name
	}
}

// describe sets the package's description and icon from the CSV of the
// default channel's head (its last entry), when there is one.
func describe(pkg *fbc.Package, c *fbc.Catalog) {
	var head string
	for _, ch := range c.Channels {
		if ch.Name == pkg.DefaultChannel {
			if len(ch.Entries) > 0 {
				head = ch.Entries[len(ch.Entries)-1].Name
			}
			break
		}
	}
	if head == "" {
		return
	}
	for i := range c.Bundles {
		if c.Bundles[i].Name != head {
			continue
		}
		csv := csvOf(&c.Bundles[i])
		if csv == nil {
			return
		}
		var doc struct {
			Spec map[string]json.RawMessage `json:"spec"`
		}
		if json.Unmarshal(csv, &doc) != nil {
			return
		}
		var desc string
		if raw, ok := doc.Spec["description"]; ok && json.Unmarshal(raw, &desc) == nil && desc != "" {
			pkg.Description = desc
		}
		var icons []struct {
			MediaType string `json:"mediatype"`
			Data      []byte `json:"base64data"`
		}
		if raw, ok := doc.Spec["icon"]; ok && json.Unmarshal(raw, &icons) == nil && len(icons) > 0 {
			pkg.Icon = &fbc.Icon{Data: icons[0].Data, MediaType: icons[0].MediaType}
		}
		return
	}
}

// csvOf returns the bundle's CSV as JSON: its CSV field, else its
// olm.bundle.object holding a ClusterServiceVersion.
func csvOf(b *fbc.Bundle) []byte {
	if len(b.CSV) > 0 {
		return b.CSV
	}
	for _, p := range b.Properties {
		if p.Type != fbc.PropertyBundleObject {
			continue
		}
		var o fbc.BundleObjectValue
		if json.Unmarshal(p.Value, &o) != nil {
			continue
		}
		var meta struct {
			Kind string `json:"kind"`
		}
		if json.Unmarshal(o.Data, &meta) == nil && meta.Kind == "ClusterServiceVersion" {
			return o.Data
		}
	}
	return nil
}
