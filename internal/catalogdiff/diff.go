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
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/rawjson"
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
	Replaces  = graph.EdgeReplaces
	Skips     = graph.EdgeSkips
	SkipRange = graph.EdgeSkipRange
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
	// FailOn are the release gates checked (CheckGates), Violations what
	// they tripped on; both absent when no gate was asked for.
	FailOn     []string    `json:"failOn,omitempty"`
	Violations []Violation `json:"violations,omitempty"`
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
	Image      *Change  `json:"image,omitempty"`
	Version    *Change  `json:"version,omitempty"`
}

// Channel is what changed in one channel. Edges and unreachable bundles are
// compared only in a channel both catalogs have.
type Channel struct {
	Name   string  `json:"name"`
	Status Status  `json:"status"`
	Head   *Change `json:"head,omitempty"`
	// HeadVersion is the versions of Head's bundles, when a head moved
	// and both are known (of several heads, the highest).
	HeadVersion    *Change  `json:"headVersion,omitempty"`
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

// Diff compares two whole catalogs (see Catalog for reading them part by
// part instead).
func Diff(oldC, newC *fbc.Catalog, opts Options) (*Result, error) {
	o, n := NewCatalog(), NewCatalog()
	if err := o.Add(oldC); err != nil {
		return nil, fmt.Errorf("old catalog: %w", err)
	}
	if err := n.Add(newC); err != nil {
		return nil, fmt.Errorf("new catalog: %w", err)
	}
	return Compare(o, n, opts), nil
}

// Compare compares two catalogs package by package.
func Compare(o, n *Catalog, opts Options) *Result {
	names := map[string]bool{}
	for p := range o.pkgs {
		names[p] = true
	}
	for p := range n.pkgs {
		names[p] = true
	}
	if len(opts.Packages) > 0 {
		keep := map[string]bool{}
		for _, p := range opts.Packages {
			keep[p] = true
		}
		for p := range names {
			if !keep[p] {
				delete(names, p)
			}
		}
	}
	r := &Result{SchemaVersion: SchemaVersion, Equal: true}
	for _, name := range sortedKeys(names) {
		if p := comparePackage(name, o.side(name), n.side(name)); p != nil {
			r.Add(p)
		}
	}
	return r
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

// Catalog is one side of a diff: what the comparison needs of a catalog,
// by package. It is built part by part (Add), keeping of each bundle its
// image, version and digests of its properties, not the blob: memory
// follows the catalog's graph, not its manifests.
type Catalog struct {
	pkgs map[string]*side
}

// NewCatalog is an empty side.
func NewCatalog() *Catalog { return &Catalog{pkgs: map[string]*side{}} }

// side is one package of one catalog, indexed for comparison.
type side struct {
	present  bool // some blob names the package
	def      string
	hasPkg   bool
	bundles  map[string]*bundleSum
	versions map[string]semver.Version
	channels map[string]*fbc.Channel
	deps     map[[2]string]string
}

// bundleSum is what a comparison needs of a bundle.
type bundleSum struct {
	pos     fbc.Position
	image   string
	props   map[propKey]int
	related []string
}

// propKey is a property by type and digest of its canonical value.
type propKey struct {
	typ string
	sum [sha256.Size]byte
}

// Has says whether some blob names package name.
func (c *Catalog) Has(name string) bool { return c.pkgs[name] != nil }

// Packages lists the catalog's packages, sorted.
func (c *Catalog) Packages() []string {
	var out []string
	for name, s := range c.pkgs {
		if s.present {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func (c *Catalog) side(name string) *side {
	s := c.pkgs[name]
	if s == nil {
		return &side{bundles: map[string]*bundleSum{}, versions: map[string]semver.Version{}, channels: map[string]*fbc.Channel{}, deps: map[[2]string]string{}}
	}
	return s
}

func (c *Catalog) get(name string) *side {
	s := c.pkgs[name]
	if s == nil {
		s = c.side(name)
		s.present = true
		c.pkgs[name] = s
	}
	return s
}

// Add takes in a part of the catalog (one package or several; a package may
// be spread over parts). A bundle or channel named twice in a package, in
// one part or two, is an error naming both places: which of the two the
// other side is compared with would decide the answer (opm validate
// refuses such a catalog too).
func (c *Catalog) Add(part *fbc.Catalog) error {
	for _, p := range part.Packages {
		s := c.get(p.Name)
		if !s.hasPkg {
			s.hasPkg, s.def = true, p.DefaultChannel
		}
	}
	for i := range part.Channels {
		ch := part.Channels[i]
		s := c.get(ch.Package)
		if first, ok := s.channels[ch.Name]; ok {
			return fmt.Errorf("%s: channel %q of package %q is defined twice (first at %s): keep one olm.channel blob per channel", where(ch.Pos), ch.Name, ch.Package, where(first.Pos))
		}
		s.channels[ch.Name] = &ch
	}
	for i := range part.Bundles {
		b := &part.Bundles[i]
		s := c.get(b.Package)
		if first, ok := s.bundles[b.Name]; ok {
			return fmt.Errorf("%s: bundle %q of package %q is defined twice (first at %s): keep one olm.bundle blob per bundle", where(b.Pos), b.Name, b.Package, where(first.pos))
		}
		sum := &bundleSum{pos: b.Pos, image: b.Image, props: make(map[propKey]int, len(b.Properties))}
		for _, p := range b.Properties {
			sum.props[propKey{p.Type, sha256.Sum256(canonical(p.Value))}]++
		}
		for _, r := range b.RelatedImages {
			sum.related = append(sum.related, r.Name+"\x00"+r.Image)
		}
		sort.Strings(sum.related)
		s.bundles[b.Name] = sum
		// A bundle without a usable version takes no part in skipRanges;
		// validation is where that is reported, not a diff.
		if v, err := graph.Version(b); err == nil {
			s.versions[b.Name] = v
		}
	}
	for _, m := range part.Others {
		if m.Schema != fbc.SchemaDeprecations {
			c.get(m.Package)
			continue
		}
		deps, err := graph.Deprecations(&fbc.Catalog{Others: []fbc.Meta{m}})
		if err != nil {
			return err
		}
		for pkg, ds := range deps {
			s := c.get(pkg)
			for _, d := range ds {
				k := [2]string{d.Schema, d.Name}
				if _, ok := s.deps[k]; !ok {
					s.deps[k] = d.Message
				}
			}
		}
	}
	return nil
}

// comparePackage compares one package's two sides; nil when nothing
// differs.
func comparePackage(name string, o, n *side) *Package {
	p := &Package{Name: name, Status: Changed}
	switch {
	case o.empty():
		p.Status = Added
	case n.empty():
		p.Status = Removed
	}
	if o.def != n.def {
		p.DefaultChannel = &Change{Old: o.def, New: n.def}
	}

	for _, bn := range sortedKeys(n.bundles) {
		nb := n.bundles[bn]
		ob := o.bundles[bn]
		if ob == nil {
			p.BundlesAdded = append(p.BundlesAdded, bundleOf(bn, nb, n.versions))
			continue
		}
		if ch := compareBundles(bn, ob, nb, o.versions, n.versions); ch != nil {
			p.BundlesChanged = append(p.BundlesChanged, *ch)
		}
	}
	for _, bn := range sortedKeys(o.bundles) {
		if n.bundles[bn] == nil {
			p.BundlesRemoved = append(p.BundlesRemoved, bundleOf(bn, o.bundles[bn], o.versions))
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
		return nil
	}
	return p
}

func (s *side) empty() bool { return !s.present }

// where names a blob's place: file and line, or the catalog when it was
// not read from a file.
func where(p fbc.Position) string {
	switch {
	case p.File == "":
		return "catalog"
	case p.Line > 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return p.File
}

func bundleOf(name string, b *bundleSum, versions map[string]semver.Version) Bundle {
	out := Bundle{Name: name, Image: b.image}
	if v, ok := versions[name]; ok {
		out.Version = v.String()
	}
	return out
}

// compareBundles says which parts of a bundle differ. Properties and
// related images are compared as multisets: their order carries no
// meaning, and sources differ in it (a hand-written catalog, a render).
func compareBundles(name string, ob, nb *bundleSum, ov, nv map[string]semver.Version) *BundleChange {
	ch := &BundleChange{Name: name}
	if ob.image != nb.image {
		ch.Fields = append(ch.Fields, "image")
		ch.Image = &Change{Old: ob.image, New: nb.image}
	}
	if types := changedProperties(ob.props, nb.props); len(types) > 0 {
		ch.Fields = append(ch.Fields, "properties")
		ch.Properties = types
	}
	if strings.Join(ob.related, "\n") != strings.Join(nb.related, "\n") {
		ch.Fields = append(ch.Fields, "relatedImages")
	}
	a, aok := ov[name]
	b, bok := nv[name]
	if aok != bok || !a.EQ(b) {
		ch.Fields = append(ch.Fields, "version")
		ch.Version = &Change{Old: versionString(a, aok), New: versionString(b, bok)}
	}
	if len(ch.Fields) == 0 {
		return nil
	}
	return ch
}

func versionString(v semver.Version, ok bool) string {
	if !ok {
		return ""
	}
	return v.String()
}

// changedProperties lists, sorted, the types of properties one side has
// and the other lacks.
func changedProperties(a, b map[propKey]int) []string {
	types := map[string]bool{}
	for k, n := range a {
		if b[k] != n {
			types[k.typ] = true
		}
	}
	for k, n := range b {
		if a[k] != n {
			types[k.typ] = true
		}
	}
	return sortedKeys(types)
}

// canonical is a property value as one JSON value, whatever its spacing,
// escapes (\u003e or >, \u00e4 or ä) or key order: catalogs read from a
// database keep json.Marshal's escapes, hand-written ones any escapes,
// and neither is a change. Loaded values are canonical already, which
// rawjson.Canonical checks at memory speed.
func canonical(v json.RawMessage) []byte {
	c, err := rawjson.Canonical(v)
	if err != nil {
		return v
	}
	return c
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
		ov, ook := topVersion(oc, o.versions)
		nv, nok := topVersion(nc, n.versions)
		if ook && nok {
			c.HeadVersion = &Change{Old: ov.String(), New: nv.String()}
		}
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
	c.EdgesAdded, c.EdgesRemoved = diffEdges(oc, nc, o.versions, n.versions, oe, ne)
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

// topVersion is the version of the channel's head (of several, the
// highest); false when a head has none or there is no head.
func topVersion(ch *fbc.Channel, versions map[string]semver.Version) (semver.Version, bool) {
	heads := topHead(ch, versions)
	if len(heads) != 1 {
		return semver.Version{}, false
	}
	v, ok := versions[heads[0]]
	return v, ok
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

// diffEdges lists the upgrade edges of nc that oc lacks and those it
// lost, as the upgrade graph reads them: replaces and skips one by one; a
// skipRange gives an edge from every other entry whose version it covers,
// but is compared as a range: where an entry keeps its skipRange only the
// entries added, removed or whose version moved can gain or lose an edge
// from it, so those alone are tested (a channel whose every entry covers
// all before it costs its length, not its square).
func diffEdges(oc, nc *fbc.Channel, ov, nv map[string]semver.Version, oe, ne map[string]bool) (added, removed []Edge) {
	og, ng := graph.NewChannelGraph(oc, ov), graph.NewChannelGraph(nc, nv)
	oEdges, nEdges := plainEdges(og), plainEdges(ng)
	// The entries whose skipRange edges may differ without their range
	// differing: in one channel only, or with another version.
	var moved []string
	for name := range ne {
		a, aok := ov[name]
		b, bok := nv[name]
		if !oe[name] || aok != bok || (aok && a.Compare(b) != 0) {
			moved = append(moved, name)
		}
	}
	for name := range oe {
		if !ne[name] {
			moved = append(moved, name)
		}
	}
	sort.Strings(moved)
	oHits, nHits := positions(og, moved), positions(ng, moved)
	rangeEdge := func(m map[edgeKey]Edge, from, to, rng string) {
		m[edgeKey{from, to, SkipRange}] = Edge{From: from, To: to, Kind: SkipRange, Range: rng}
	}
	for _, to := range rangedEntries(og, ng) {
		or, nr := og.SkipRange(to), ng.SkipRange(to)
		if or != nr || or == "" {
			for _, from := range og.Covered(to) {
				rangeEdge(oEdges, from, to, or)
			}
			for _, from := range ng.Covered(to) {
				rangeEdge(nEdges, from, to, nr)
			}
			continue
		}
		for _, from := range append(hits(og, to, oHits), hits(ng, to, nHits)...) {
			if og.CoversEntry(to, from) {
				rangeEdge(oEdges, from, to, or)
			}
			if ng.CoversEntry(to, from) {
				rangeEdge(nEdges, from, to, nr)
			}
		}
	}
	for _, k := range sortedEdgeKeys(nEdges) {
		if _, ok := oEdges[k]; !ok {
			added = append(added, nEdges[k])
		}
	}
	for _, k := range sortedEdgeKeys(oEdges) {
		if _, ok := nEdges[k]; !ok {
			removed = append(removed, oEdges[k])
		}
	}
	return added, removed
}

// plainEdges are a channel's replaces and skips edges.
func plainEdges(g *graph.ChannelGraph) map[edgeKey]Edge {
	out := map[edgeKey]Edge{}
	for _, e := range g.Entries {
		if e.Replaces != "" {
			out[edgeKey{e.Replaces, e.Name, Replaces}] = Edge{From: e.Replaces, To: e.Name, Kind: Replaces}
		}
		for _, s := range e.Skips {
			out[edgeKey{s, e.Name, Skips}] = Edge{From: s, To: e.Name, Kind: Skips}
		}
	}
	return out
}

// rangedEntries are the entries with a usable skipRange on either side.
func rangedEntries(og, ng *graph.ChannelGraph) []string {
	seen := map[string]bool{}
	var out []string
	for _, g := range []*graph.ChannelGraph{og, ng} {
		for _, e := range g.Entries {
			if g.SkipRange(e.Name) != "" && !seen[e.Name] {
				seen[e.Name] = true
				out = append(out, e.Name)
			}
		}
	}
	return out
}

// positions are the places of names in g's version order, sorted.
func positions(g *graph.ChannelGraph, names []string) []int {
	var out []int
	for _, n := range names {
		if p, ok := g.Position(n); ok {
			out = append(out, p)
		}
	}
	sort.Ints(out)
	return out
}

// hits are the entries at the positions given that the skipRange of to
// covers: a binary search per run of the range.
func hits(g *graph.ChannelGraph, to string, pos []int) []string {
	if len(pos) == 0 {
		return nil
	}
	order := g.VersionOrder()
	var out []string
	for _, run := range g.CoveredRuns(to) {
		for k := sort.SearchInts(pos, run[0]); k < len(pos) && pos[k] < run[1]; k++ {
			out = append(out, order[pos[k]])
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
