// Package catalogdiff compares two operator catalogs, package by package,
// for review: packages, channels and bundles added or removed, bundles
// whose content changed, channel heads and default channels that moved,
// upgrade edges (replaces, skips, skipRange) added or lost, bundles that
// became unreachable, deprecations added or removed. Both catalogs are the
// file-based catalog model, whatever they were read from (a sqlite index,
// an FBC directory, an image of either). Result is the JSON document
// `opm diff -o json` prints; docs/diff.md describes it field by field.
package catalogdiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
)

// SchemaVersion is the version of the Result document. It changes only
// when a field is removed or changes meaning; new fields may appear.
const SchemaVersion = "opm.diff/v1"

// Status says how a package or channel changed.
type Status string

// Statuses.
const (
	Added   Status = "added"
	Removed Status = "removed"
	Changed Status = "changed"
)

// Kinds of upgrade edge.
const (
	Replaces  = "replaces"
	Skips     = "skips"
	SkipRange = "skipRange"
)

// Options narrow a diff.
type Options struct {
	// Packages, when not empty, keeps only these packages.
	Packages []string
}

// Result is a whole diff.
type Result struct {
	SchemaVersion string    `json:"schemaVersion"`
	Old           string    `json:"old"`
	New           string    `json:"new"`
	Equal         bool      `json:"equal"`
	Summary       Summary   `json:"summary"`
	Packages      []Package `json:"packages"`
}

// Summary counts what changed, over every package.
type Summary struct {
	PackagesAdded        int `json:"packagesAdded"`
	PackagesRemoved      int `json:"packagesRemoved"`
	PackagesChanged      int `json:"packagesChanged"`
	ChannelsAdded        int `json:"channelsAdded"`
	ChannelsRemoved      int `json:"channelsRemoved"`
	BundlesAdded         int `json:"bundlesAdded"`
	BundlesRemoved       int `json:"bundlesRemoved"`
	BundlesChanged       int `json:"bundlesChanged"`
	DefaultChannelsMoved int `json:"defaultChannelsMoved"`
	HeadsMoved           int `json:"headsMoved"`
	EdgesAdded           int `json:"edgesAdded"`
	EdgesRemoved         int `json:"edgesRemoved"`
	Unreachable          int `json:"unreachable"`
	DeprecationsAdded    int `json:"deprecationsAdded"`
	DeprecationsRemoved  int `json:"deprecationsRemoved"`
	DeprecationsChanged  int `json:"deprecationsChanged"`
}

// Package is what changed in one package. An added or removed package
// lists its bundles and channels (with their heads), not its edges.
type Package struct {
	Name                string              `json:"name"`
	Status              Status              `json:"status"`
	DefaultChannel      *Change             `json:"defaultChannel,omitempty"`
	BundlesAdded        []Bundle            `json:"bundlesAdded"`
	BundlesRemoved      []Bundle            `json:"bundlesRemoved"`
	BundlesChanged      []BundleChange      `json:"bundlesChanged"`
	Channels            []Channel           `json:"channels"`
	DeprecationsAdded   []Deprecation       `json:"deprecationsAdded"`
	DeprecationsRemoved []Deprecation       `json:"deprecationsRemoved"`
	DeprecationsChanged []DeprecationChange `json:"deprecationsChanged"`
}

// Change is a value before and after ("" when there was or is none).
type Change struct {
	Old string `json:"old"`
	New string `json:"new"`
}

// Bundle names a bundle, with its version and image.
type Bundle struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Image   string `json:"image"`
}

// BundleChange is a bundle in both catalogs whose blob differs: Fields
// names the parts that differ (image, properties, relatedImages; version
// when the olm.package version moved).
type BundleChange struct {
	Name   string   `json:"name"`
	Fields []string `json:"fields"`
	// Properties are the property types with a value added or removed.
	Properties []string `json:"properties,omitempty"`
	Image   *Change  `json:"image,omitempty"`
	Version *Change  `json:"version,omitempty"`
}

// Channel is what changed in one channel. Edges and unreachable bundles are
// compared only in a channel both catalogs have.
type Channel struct {
	Name           string   `json:"name"`
	Status         Status   `json:"status"`
	Head           *Change  `json:"head,omitempty"`
	EntriesAdded   []string `json:"entriesAdded"`
	EntriesRemoved []string `json:"entriesRemoved"`
	EdgesAdded     []Edge   `json:"edgesAdded"`
	EdgesRemoved   []Edge   `json:"edgesRemoved"`
	// Unreachable are bundles of the new channel from which no upgrade path
	// leads to its head, that had one in the old channel or are new in it.
	Unreachable []string `json:"unreachable"`
}

// Edge is an upgrade edge: OLM may upgrade from From to To because To's
// channel entry replaces or skips From, or its skipRange covers From's
// version (Range is then that skipRange).
type Edge struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Kind  string `json:"kind"`
	Range string `json:"range,omitempty"`
}

// Deprecation is an olm.deprecations entry: what (Schema olm.package,
// olm.channel or olm.bundle, and Name) and its message.
type Deprecation struct {
	Schema  string `json:"schema"`
	Name    string `json:"name,omitempty"`
	Message string `json:"message"`
}

// DeprecationChange is a deprecation in both whose message changed.
type DeprecationChange struct {
	Schema  string `json:"schema"`
	Name    string `json:"name,omitempty"`
	Message Change `json:"message"`
}

// Diff compares two whole catalogs, package by package (each package's
// blobs are found once; only one package's comparison is held at a time).
func Diff(oldC, newC *fbc.Catalog, opts Options) (*Result, error) {
	oldP, newP := split(oldC), split(newC)
	names := map[string]bool{}
	for n := range oldP {
		names[n] = true
	}
	for n := range newP {
		names[n] = true
	}
	if len(opts.Packages) > 0 {
		keep := map[string]bool{}
		for _, p := range opts.Packages {
			keep[p] = true
		}
		for n := range names {
			if !keep[n] {
				delete(names, n)
			}
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	r := &Result{SchemaVersion: SchemaVersion}
	for _, n := range sorted {
		p, err := DiffPackage(n, oldP[n], newP[n])
		if err != nil {
			return nil, err
		}
		if p != nil {
			r.Add(p)
		}
	}
	r.Equal = len(r.Packages) == 0
	return r, nil
}

// Add appends a package's diff and counts it in the summary: a caller that
// reads catalogs package by package builds its Result with DiffPackage and
// Add.
func (r *Result) Add(p *Package) {
	s := &r.Summary
	switch p.Status {
	case Added:
		s.PackagesAdded++
	case Removed:
		s.PackagesRemoved++
	default:
		s.PackagesChanged++
	}
	if p.DefaultChannel != nil && p.Status == Changed {
		s.DefaultChannelsMoved++
	}
	s.BundlesAdded += len(p.BundlesAdded)
	s.BundlesRemoved += len(p.BundlesRemoved)
	s.BundlesChanged += len(p.BundlesChanged)
	for _, c := range p.Channels {
		switch c.Status {
		case Added:
			s.ChannelsAdded++
		case Removed:
			s.ChannelsRemoved++
		default:
			if c.Head != nil {
				s.HeadsMoved++
			}
		}
		s.EdgesAdded += len(c.EdgesAdded)
		s.EdgesRemoved += len(c.EdgesRemoved)
		s.Unreachable += len(c.Unreachable)
	}
	s.DeprecationsAdded += len(p.DeprecationsAdded)
	s.DeprecationsRemoved += len(p.DeprecationsRemoved)
	s.DeprecationsChanged += len(p.DeprecationsChanged)
	r.Packages = append(r.Packages, *p)
	r.Equal = false
}

// split groups a catalog's blobs by package, keeping their order.
func split(c *fbc.Catalog) map[string]*fbc.Catalog {
	out := map[string]*fbc.Catalog{}
	get := func(n string) *fbc.Catalog {
		p := out[n]
		if p == nil {
			p = &fbc.Catalog{}
			out[n] = p
		}
		return p
	}
	for _, p := range c.Packages {
		get(p.Name).Packages = append(get(p.Name).Packages, p)
	}
	for _, ch := range c.Channels {
		get(ch.Package).Channels = append(get(ch.Package).Channels, ch)
	}
	for _, b := range c.Bundles {
		get(b.Package).Bundles = append(get(b.Package).Bundles, b)
	}
	for _, m := range c.Others {
		get(m.Package).Others = append(get(m.Package).Others, m)
	}
	return out
}

// side is one package of one catalog, indexed for comparison.
type side struct {
	def      string
	bundles  map[string]*fbc.Bundle
	versions map[string]semver.Version
	channels map[string]*fbc.Channel
	deps     map[[2]string]string
}

func newSide(name string, c *fbc.Catalog) (*side, error) {
	s := &side{bundles: map[string]*fbc.Bundle{}, versions: map[string]semver.Version{}, channels: map[string]*fbc.Channel{}, deps: map[[2]string]string{}}
	if c == nil {
		return s, nil
	}
	if len(c.Packages) > 0 {
		s.def = c.Packages[0].DefaultChannel
	}
	for i := range c.Bundles {
		b := &c.Bundles[i]
		if _, ok := s.bundles[b.Name]; ok {
			continue
		}
		s.bundles[b.Name] = b
		// A bundle without a usable version takes no part in skipRanges;
		// validation is where that is reported, not a diff.
		if v, err := graph.Version(b); err == nil {
			s.versions[b.Name] = v
		}
	}
	for i := range c.Channels {
		if _, ok := s.channels[c.Channels[i].Name]; !ok {
			s.channels[c.Channels[i].Name] = &c.Channels[i]
		}
	}
	deps, err := graph.Deprecations(c)
	if err != nil {
		return nil, fmt.Errorf("package %s: %w", name, err)
	}
	for _, d := range deps[name] {
		s.deps[[2]string{d.Schema, d.Name}] = d.Message
	}
	return s, nil
}

// DiffPackage compares one package's blobs in the old and new catalog (nil
// when the package is not there); nil when nothing differs.
func DiffPackage(name string, oldC, newC *fbc.Catalog) (*Package, error) {
	o, err := newSide(name, oldC)
	if err != nil {
		return nil, fmt.Errorf("old catalog: %w", err)
	}
	n, err := newSide(name, newC)
	if err != nil {
		return nil, fmt.Errorf("new catalog: %w", err)
	}
	p := &Package{Name: name, Status: Changed}
	switch {
	case empty(oldC):
		p.Status = Added
	case empty(newC):
		p.Status = Removed
	}
	if o.def != n.def {
		p.DefaultChannel = &Change{Old: o.def, New: n.def}
	}

	for _, bn := range sortedKeys(n.bundles) {
		nb := n.bundles[bn]
		ob := o.bundles[bn]
		if ob == nil {
			p.BundlesAdded = append(p.BundlesAdded, bundleOf(nb, n.versions))
			continue
		}
		if ch := compareBundles(ob, nb, o.versions, n.versions); ch != nil {
			p.BundlesChanged = append(p.BundlesChanged, *ch)
		}
	}
	for _, bn := range sortedKeys(o.bundles) {
		if n.bundles[bn] == nil {
			p.BundlesRemoved = append(p.BundlesRemoved, bundleOf(o.bundles[bn], o.versions))
		}
	}

	chNames := map[string]bool{}
	for c := range o.channels {
		chNames[c] = true
	}
	for c := range n.channels {
		chNames[c] = true
	}
	for _, cn := range sortedKeys(chNames) {
		if c := diffChannel(cn, o, n); c != nil {
			p.Channels = append(p.Channels, *c)
		}
	}

	for _, k := range sortedDepKeys(n.deps) {
		if om, ok := o.deps[k]; !ok {
			p.DeprecationsAdded = append(p.DeprecationsAdded, Deprecation{Schema: k[0], Name: k[1], Message: n.deps[k]})
		} else if om != n.deps[k] {
			p.DeprecationsChanged = append(p.DeprecationsChanged, DeprecationChange{Schema: k[0], Name: k[1], Message: Change{Old: om, New: n.deps[k]}})
		}
	}
	for _, k := range sortedDepKeys(o.deps) {
		if _, ok := n.deps[k]; !ok {
			p.DeprecationsRemoved = append(p.DeprecationsRemoved, Deprecation{Schema: k[0], Name: k[1], Message: o.deps[k]})
		}
	}

	if p.Status == Changed && p.DefaultChannel == nil && len(p.BundlesAdded)+len(p.BundlesRemoved)+len(p.BundlesChanged)+len(p.Channels)+
		len(p.DeprecationsAdded)+len(p.DeprecationsRemoved)+len(p.DeprecationsChanged) == 0 {
		return nil, nil
	}
	return p, nil
}

func empty(c *fbc.Catalog) bool {
	return c == nil || len(c.Packages)+len(c.Channels)+len(c.Bundles)+len(c.Others) == 0
}

func bundleOf(b *fbc.Bundle, versions map[string]semver.Version) Bundle {
	out := Bundle{Name: b.Name, Image: b.Image}
	if v, ok := versions[b.Name]; ok {
		out.Version = v.String()
	}
	return out
}

// compareBundles says which parts of a bundle's blob differ. Properties
// and related images are compared as sets: their order carries no meaning,
// and sources differ in it (a hand-written catalog, a render).
func compareBundles(ob, nb *fbc.Bundle, ov, nv map[string]semver.Version) *BundleChange {
	ch := &BundleChange{Name: nb.Name}
	if ob.Image != nb.Image {
		ch.Fields = append(ch.Fields, "image")
		ch.Image = &Change{Old: ob.Image, New: nb.Image}
	}
	if types := changedProperties(ob.Properties, nb.Properties); len(types) > 0 {
		ch.Fields = append(ch.Fields, "properties")
		ch.Properties = types
	}
	if !sameRelated(ob.RelatedImages, nb.RelatedImages) {
		ch.Fields = append(ch.Fields, "relatedImages")
	}
	if a, b := ov[ob.Name], nv[nb.Name]; !a.EQ(b) {
		ch.Fields = append(ch.Fields, "version")
		ch.Version = &Change{Old: a.String(), New: b.String()}
	}
	if len(ch.Fields) == 0 {
		return nil
	}
	return ch
}

// changedProperties lists, sorted, the types of properties one side has
// and the other lacks (values compared after compaction).
func changedProperties(a, b []fbc.Property) []string {
	count := map[string]int{}
	for _, p := range a {
		count[p.Type+"\x00"+string(compact(p.Value))]++
	}
	for _, p := range b {
		count[p.Type+"\x00"+string(compact(p.Value))]--
	}
	types := map[string]bool{}
	for k, n := range count {
		if n != 0 {
			t, _, _ := strings.Cut(k, "\x00")
			types[t] = true
		}
	}
	return sortedKeys(types)
}

// compact normalizes a property value's whitespace (loaded values are
// compacted already; this guards values built elsewhere).
func compact(v json.RawMessage) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return v
	}
	return buf.Bytes()
}

func sameRelated(a, b []fbc.RelatedImage) bool {
	if len(a) != len(b) {
		return false
	}
	key := func(rs []fbc.RelatedImage) []string {
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = r.Name + "\x00" + r.Image
		}
		sort.Strings(out)
		return out
	}
	ka, kb := key(a), key(b)
	for i := range ka {
		if ka[i] != kb[i] {
			return false
		}
	}
	return true
}

func diffChannel(name string, o, n *side) *Channel {
	oc, nc := o.channels[name], n.channels[name]
	c := &Channel{Name: name, Status: Changed}
	switch {
	case oc == nil:
		c.Status = Added
		c.Head = &Change{New: headOf(nc)}
		c.EntriesAdded = entryNames(nc)
		return c
	case nc == nil:
		c.Status = Removed
		c.Head = &Change{Old: headOf(oc)}
		c.EntriesRemoved = entryNames(oc)
		return c
	}
	if oh, nh := headOf(oc), headOf(nc); oh != nh {
		c.Head = &Change{Old: oh, New: nh}
	}
	oe, ne := map[string]bool{}, map[string]bool{}
	for _, e := range oc.Entries {
		oe[e.Name] = true
	}
	for _, e := range nc.Entries {
		ne[e.Name] = true
	}
	for _, e := range sortedKeys(ne) {
		if !oe[e] {
			c.EntriesAdded = append(c.EntriesAdded, e)
		}
	}
	for _, e := range sortedKeys(oe) {
		if !ne[e] {
			c.EntriesRemoved = append(c.EntriesRemoved, e)
		}
	}
	oEdges, nEdges := edges(oc, o.versions), edges(nc, n.versions)
	for _, k := range sortedEdgeKeys(nEdges) {
		if _, ok := oEdges[k]; !ok {
			c.EdgesAdded = append(c.EdgesAdded, nEdges[k])
		}
	}
	for _, k := range sortedEdgeKeys(oEdges) {
		if _, ok := nEdges[k]; !ok {
			c.EdgesRemoved = append(c.EdgesRemoved, oEdges[k])
		}
	}
	// Unreachability is only worth computing when the graph moved.
	if len(c.EdgesAdded)+len(c.EdgesRemoved)+len(c.EntriesAdded)+len(c.EntriesRemoved) > 0 || c.Head != nil {
		oReach := graph.ReachableFrom(oc, topHead(oc, o.versions), o.versions)
		nReach := graph.ReachableFrom(nc, topHead(nc, n.versions), n.versions)
		for _, e := range sortedKeys(ne) {
			if !nReach[e] && (oReach[e] || !oe[e]) {
				c.Unreachable = append(c.Unreachable, e)
			}
		}
	}
	if c.Head == nil && len(c.EntriesAdded)+len(c.EntriesRemoved)+len(c.EdgesAdded)+len(c.EdgesRemoved)+len(c.Unreachable) == 0 {
		return nil
	}
	return c
}

// topHead is the head unreachability is measured against: the channel's
// head, or of several heads the highest version (the others are dead ends
// OLM cannot upgrade out of), or all of them when a version is unknown.
func topHead(ch *fbc.Channel, versions map[string]semver.Version) []string {
	heads := graph.Heads(ch)
	if len(heads) < 2 {
		return heads
	}
	top := ""
	for _, h := range heads {
		v, ok := versions[h]
		if !ok {
			return heads
		}
		if top == "" || v.GT(versions[top]) {
			top = h
		}
	}
	return []string{top}
}

// headOf is the channel's head, or its heads joined by ", " when it has
// several ("" when a cycle leaves none).
func headOf(ch *fbc.Channel) string { return strings.Join(graph.Heads(ch), ", ") }

func entryNames(ch *fbc.Channel) []string {
	seen := map[string]bool{}
	for _, e := range ch.Entries {
		seen[e.Name] = true
	}
	return sortedKeys(seen)
}

type edgeKey struct{ from, to, kind string }

// edges lists a channel's upgrade edges; a skipRange gives one edge to
// every other entry of the channel whose version it covers.
func edges(ch *fbc.Channel, versions map[string]semver.Version) map[edgeKey]Edge {
	out := map[edgeKey]Edge{}
	add := func(e Edge) { out[edgeKey{e.From, e.To, e.Kind}] = e }
	for _, e := range ch.Entries {
		if e.Replaces != "" {
			add(Edge{From: e.Replaces, To: e.Name, Kind: Replaces})
		}
		for _, s := range e.Skips {
			add(Edge{From: s, To: e.Name, Kind: Skips})
		}
		if e.SkipRange == "" {
			continue
		}
		r, err := semver.ParseRange(e.SkipRange)
		if err != nil {
			continue
		}
		for _, o := range ch.Entries {
			if v, ok := versions[o.Name]; ok && o.Name != e.Name && r(v) {
				add(Edge{From: o.Name, To: e.Name, Kind: SkipRange, Range: e.SkipRange})
			}
		}
	}
	return out
}

func sortedEdgeKeys(m map[edgeKey]Edge) []edgeKey {
	out := make([]edgeKey, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.to != b.to {
			return a.to < b.to
		}
		if a.from != b.from {
			return a.from < b.from
		}
		return a.kind < b.kind
	})
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedDepKeys(m map[[2]string]string) [][2]string {
	out := make([][2]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i][0] != out[j][0] {
			return out[i][0] < out[j][0]
		}
		return out[i][1] < out[j][1]
	})
	return out
}
