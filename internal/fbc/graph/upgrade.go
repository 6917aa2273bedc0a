package graph

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
)

// Kinds of upgrade edge: why OLM may go from one bundle to another.
const (
	EdgeReplaces  = "replaces"
	EdgeSkips     = "skips"
	EdgeSkipRange = "skipRange"
)

// Package is one package's upgrade graph: its channels, every bundle's
// version and which bundles are deprecated. It answers what OLM installs
// next by OLM v0's rules (ChannelGraph.NextV0) and the paths OLM v0's or,
// given operator-controller's resolver (PathQuery.ResolveV1), OLM v1's
// steps make (Package.Path).
type Package struct {
	Name           string
	DefaultChannel string
	// Channels are the package's channels by name.
	Channels []*ChannelGraph
	// Versions are the versions of the package's bundles; a bundle whose
	// version does not parse is missing (no skipRange covers it).
	Versions   map[string]semver.Version
	deprecated map[string]bool
	bundles    map[string]bool
	byChannel  map[string]*ChannelGraph
}

// ChannelGraph is one channel: its entries and OLM v0's order of them.
type ChannelGraph struct {
	Package, Name string
	// Entries are the channel's entries, the first of each name.
	Entries []fbc.ChannelEntry
	byName  map[string]int
	ranges  []semver.Range // per entry; nil without a usable skipRange
	// chain is OLM v0's resolver order: from the head down the replaces
	// chain, bundles some entry skips left out. chainErr says why there is
	// none (no head, several heads, a cycle).
	chain    []string
	chainErr error
	// depth is the position along the replaces chain from the head,
	// skipped bundles included: the order in which the sqlite registry
	// server meets a channel's entries.
	depth    map[string]int
	skipped  map[string]bool
	versions map[string]semver.Version
	// into lists, by name, the entries that replace or skip it; ranged the
	// entries with a usable skipRange; rank the position of each chain
	// entry: what the next-step queries look up instead of scanning.
	into   map[string][]int
	ranged []int
	rank   map[string]int
	// ord is the entries that have a version, by version; covers the runs
	// of ord each entry's skipRange covers (its own entry left out);
	// v0best, by position in ord, the entry on the chain nearest the head
	// whose skipRange covers it (-1 when none): a skipRange is kept as
	// runs, never as an edge per covered bundle.
	ord    *versionOrder
	covers [][]span
	v0best []int32
	heads  []string
	// Warnings name skipRanges that do not parse (they give no edge).
	Warnings []string
}

// NewPackage reads the upgrade graph of package pkg of c. A package c does
// not hold is an error naming the packages it does.
func NewPackage(c *fbc.Catalog, pkg string) (*Package, error) {
	p := &Package{Name: pkg, Versions: map[string]semver.Version{}, deprecated: map[string]bool{}, bundles: map[string]bool{}, byChannel: map[string]*ChannelGraph{}}
	found := false
	var names []string
	for _, mp := range c.Packages {
		names = append(names, mp.Name)
		if mp.Name == pkg && !found {
			found = true
			p.DefaultChannel = mp.DefaultChannel
		}
	}
	for i := range c.Bundles {
		b := &c.Bundles[i]
		if b.Package != pkg || p.bundles[b.Name] {
			continue
		}
		found = true
		p.bundles[b.Name] = true
		if v, err := Version(b); err == nil {
			p.Versions[b.Name] = v
		}
	}
	for i := range c.Channels {
		ch := &c.Channels[i]
		if ch.Package != pkg || p.byChannel[ch.Name] != nil {
			continue
		}
		found = true
		g := newChannelGraph(ch, p.Versions)
		p.byChannel[ch.Name] = g
		p.Channels = append(p.Channels, g)
	}
	if !found {
		sort.Strings(names)
		return nil, fmt.Errorf("package %q is not in the catalog (it has %s)", pkg, orNone(names))
	}
	sort.Slice(p.Channels, func(i, j int) bool { return p.Channels[i].Name < p.Channels[j].Name })
	deps, err := Deprecations(c)
	if err != nil {
		return nil, err
	}
	for _, d := range deps[pkg] {
		if d.Schema == fbc.SchemaBundle {
			p.deprecated[d.Name] = true
		}
	}
	return p, nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func newChannelGraph(ch *fbc.Channel, versions map[string]semver.Version) *ChannelGraph {
	g := &ChannelGraph{Package: ch.Package, Name: ch.Name, byName: map[string]int{}, skipped: map[string]bool{}, depth: map[string]int{}, versions: versions}
	for _, e := range ch.Entries {
		if _, ok := g.byName[e.Name]; ok {
			continue
		}
		g.byName[e.Name] = len(g.Entries)
		g.Entries = append(g.Entries, e)
		var r semver.Range
		if e.SkipRange != "" {
			var err error
			if r, err = semver.ParseRange(e.SkipRange); err != nil {
				g.Warnings = append(g.Warnings, fmt.Sprintf("ignoring skipRange %q of %s in channel %s: %v", e.SkipRange, e.Name, ch.Name, err))
				r = nil
			}
		}
		g.ranges = append(g.ranges, r)
	}
	g.into, g.rank = map[string][]int{}, map[string]int{}
	for i, e := range g.Entries {
		if e.Replaces != "" {
			g.into[e.Replaces] = append(g.into[e.Replaces], i)
		}
		for _, s := range e.Skips {
			if _, ok := g.byName[s]; ok {
				g.skipped[s] = true
			}
			g.into[s] = append(g.into[s], i)
		}
		if g.ranges[i] != nil {
			g.ranged = append(g.ranged, i)
		}
	}
	names := make([]string, len(g.Entries))
	for i, e := range g.Entries {
		names[i] = e.Name
	}
	g.ord = newVersionOrder(names, versions)
	g.covers = make([][]span, len(g.Entries))
	for _, i := range g.ranged {
		sp := g.ord.covered(g.ranges[i], g.Entries[i].SkipRange)
		if p, ok := g.ord.pos[g.Entries[i].Name]; ok {
			sp = without(sp, p)
		}
		g.covers[i] = sp
	}
	g.heads = Heads(&fbc.Channel{Name: g.Name, Package: g.Package, Entries: g.Entries})
	g.order()
	for i, n := range g.chain {
		g.rank[n] = i
	}
	// OLM v0 takes, of the skipRanges covering a bundle, the entry nearest
	// the head: paint each position with the first such entry to reach it.
	var onChain []int
	for _, i := range g.ranged {
		if _, ok := g.rank[g.Entries[i].Name]; ok {
			onChain = append(onChain, i)
		}
	}
	sort.Slice(onChain, func(a, b int) bool { return g.rank[g.Entries[onChain[a]].Name] < g.rank[g.Entries[onChain[b]].Name] })
	g.v0best = g.paint(onChain)
	return g
}

// paint gives each position of ord the first of entries (in that order)
// whose skipRange covers it, -1 when none does; each position is painted
// once, so the cost is the entries' runs plus the positions.
func (g *ChannelGraph) paint(entries []int) []int32 {
	best := make([]int32, len(g.ord.names))
	for i := range best {
		best[i] = -1
	}
	u := newUnvisited(len(best))
	for _, i := range entries {
		for _, s := range g.covers[i] {
			for q := u.find(s.lo); q < s.hi; q = u.find(q + 1) {
				best[q] = int32(i)
				u.take(q)
			}
		}
	}
	return best
}

// position is from's place in ord when the channel holds from by name (so
// what covers it is known by position); false otherwise.
func (g *ChannelGraph) position(from Bundle) (int, bool) {
	if from.Name == "" || !from.HasVersion {
		return 0, false
	}
	p, ok := g.ord.pos[from.Name]
	if !ok || g.ord.vers[p].Compare(from.Version) != 0 {
		return 0, false
	}
	return p, true
}

// NewChannelGraph reads one channel's graph; versions are its bundles'
// versions (for its skipRanges).
func NewChannelGraph(ch *fbc.Channel, versions map[string]semver.Version) *ChannelGraph {
	return newChannelGraph(ch, versions)
}

// CoversEntry says whether the skipRange of entry to covers entry from:
// both entries of the channel, from not to itself, from with a version
// the range admits.
func (g *ChannelGraph) CoversEntry(to, from string) bool {
	i, ok := g.byName[to]
	if !ok || g.ranges[i] == nil || from == to {
		return false
	}
	if _, ok := g.byName[from]; !ok {
		return false
	}
	v, ok := g.versions[from]
	return ok && g.ranges[i](v)
}

// SkipRange is the usable skipRange of entry name ("" when it has none or
// it does not parse).
func (g *ChannelGraph) SkipRange(name string) string {
	i, ok := g.byName[name]
	if !ok || g.ranges[i] == nil {
		return ""
	}
	return g.Entries[i].SkipRange
}

// Position is name's place in VersionOrder; false when the channel has
// no such entry with a version.
func (g *ChannelGraph) Position(name string) (int, bool) {
	p, ok := g.ord.pos[name]
	return p, ok
}

// Covered lists the entries the skipRange of entry name covers (the entry
// itself left out), lowest version first; nil without a usable skipRange.
// Each call costs the length of the answer: callers that need every
// skipRange of a channel read CoveredRuns instead.
func (g *ChannelGraph) Covered(name string) []string {
	i, ok := g.byName[name]
	if !ok {
		return nil
	}
	var out []string
	for _, s := range g.covers[i] {
		out = append(out, g.ord.names[s.lo:s.hi]...)
	}
	return out
}

// CoveredRuns lists what the skipRange of entry name covers as runs of
// VersionOrder: each [Lo, Hi) pair of positions is a run of bundles the
// range admits. nil without a usable skipRange.
func (g *ChannelGraph) CoveredRuns(name string) [][2]int {
	i, ok := g.byName[name]
	if !ok {
		return nil
	}
	var out [][2]int
	for _, s := range g.covers[i] {
		out = append(out, [2]int{s.lo, s.hi})
	}
	return out
}

// VersionOrder lists the channel's entries that have a version, lowest
// first: the order CoveredRuns counts in.
func (g *ChannelGraph) VersionOrder() []string { return g.ord.names }

// order walks the replaces chain down from the head, as OLM v0's resolver
// sorts a channel: a channel it cannot sort (no head, several, a cycle)
// gets no chain and its reason.
func (g *ChannelGraph) order() {
	heads := g.Heads()
	for _, h := range heads {
		// Depth is wanted even of a channel OLM v0 cannot sort: the
		// registry server answers replacements there all the same.
		d, n := 0, h
		for {
			if _, seen := g.depth[n]; seen {
				break
			}
			g.depth[n] = d
			i, ok := g.byName[n]
			if !ok || g.Entries[i].Replaces == "" {
				break
			}
			n, d = g.Entries[i].Replaces, d+1
		}
	}
	switch {
	case len(heads) == 0:
		g.chainErr = orderErrorf("channel %s has no head (every entry is replaced or skipped by another: a cycle)", g.Name)
		return
	case len(heads) > 1:
		g.chainErr = orderErrorf("channel %s has %d heads (%s); OLM v0 needs one replaces chain to order a channel", g.Name, len(heads), strings.Join(heads, ", "))
		return
	}
	seen := map[string]bool{}
	for n := heads[0]; ; {
		if seen[n] {
			g.chainErr = orderErrorf("channel %s: the replaces chain from %s comes back to %s (a cycle)", g.Name, heads[0], n)
			g.chain = nil
			return
		}
		seen[n] = true
		i, ok := g.byName[n]
		if !ok {
			// The tail replaces a bundle the channel does not hold: fine.
			break
		}
		if !g.skipped[n] {
			g.chain = append(g.chain, n)
		}
		if g.Entries[i].Replaces == "" {
			break
		}
		n = g.Entries[i].Replaces
	}
}

// OrderError is a channel OLM v0 cannot order (no head, several, a
// cycle): a fault of the catalog, not of the question asked.
type OrderError struct{ msg string }

func (e *OrderError) Error() string { return e.msg }

func orderErrorf(format string, args ...any) error {
	return &OrderError{fmt.Sprintf(format, args...)}
}

// Heads lists the entries no other entry of the channel replaces or
// skips: one in a sound channel.
func (g *ChannelGraph) Heads() []string { return g.heads }

// Has says whether the channel has an entry of that name.
func (g *ChannelGraph) Has(name string) bool {
	_, ok := g.byName[name]
	return ok
}

// Skipped says whether an entry of the channel skips name: OLM v0 never
// installs such a bundle from this channel.
func (g *ChannelGraph) Skipped(name string) bool { return g.skipped[name] }

// SkippedBy names the entries of the channel that skip name.
func (g *ChannelGraph) SkippedBy(name string) []string {
	var out []string
	for _, e := range g.Entries {
		for _, s := range e.Skips {
			if s == name {
				out = append(out, e.Name)
				break
			}
		}
	}
	return out
}

// Order is OLM v0's order of the channel, head first (see NextV0), or why
// OLM v0 cannot order it.
func (g *ChannelGraph) Order() ([]string, error) { return g.chain, g.chainErr }

// Step is one upgrade: OLM installs To over From because of Edge (To's
// entry replaces or skips From, or its SkipRange covers From's version).
type Step struct {
	From      string `json:"from"`
	To        string `json:"to"`
	Version   string `json:"version"`
	Channel   string `json:"channel"`
	Edge      string `json:"edge"`
	SkipRange string `json:"skipRange,omitempty"`
}

// Bundle is where an upgrade starts: a bundle name, its version, or both.
// A version alone (a bundle no longer in the catalog) can only be left by
// a skipRange.
type Bundle struct {
	Name       string
	Version    semver.Version
	HasVersion bool
}

func (b Bundle) String() string {
	switch {
	case b.Name != "":
		return b.Name
	case b.HasVersion:
		return "version " + b.Version.String()
	}
	return "(nothing)"
}

// edge is the edge entry i of the channel gives from b, if any: replaces
// first, then skips, then skipRange.
func (g *ChannelGraph) edge(i int, from Bundle) (Step, bool) {
	e := g.Entries[i]
	if e.Name == from.Name {
		return Step{}, false
	}
	st := Step{From: from.String(), To: e.Name, Channel: g.Name}
	if v, ok := g.versions[e.Name]; ok {
		st.Version = v.String()
	}
	switch {
	case from.Name != "" && e.Replaces == from.Name:
		st.Edge = EdgeReplaces
	case from.Name != "" && contains(e.Skips, from.Name):
		st.Edge = EdgeSkips
	case from.HasVersion && g.ranges[i] != nil && g.ranges[i](from.Version):
		st.Edge, st.SkipRange = EdgeSkipRange, e.SkipRange
	default:
		return Step{}, false
	}
	return st, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// candidates are the entries that may have an edge from from, in entry
// order, each once.
func (g *ChannelGraph) candidates(from Bundle) []int {
	var out []int
	if from.Name != "" {
		out = append(out, g.into[from.Name]...)
	}
	if from.HasVersion {
		out = append(out, g.ranged...)
	}
	sort.Ints(out)
	return slices.Compact(out)
}

// nextCandidates are the entries that may be the next step from from:
// those that replace or skip it and, of the skipRanges covering it, the
// best by the painting given; every ranged entry when from's position is
// not known.
func (g *ChannelGraph) nextCandidates(from Bundle, best []int32) []int {
	p, ok := g.position(from)
	if !ok {
		return g.candidates(from)
	}
	out := append([]int(nil), g.into[from.Name]...)
	if b := best[p]; b >= 0 {
		out = append(out, int(b))
	}
	sort.Ints(out)
	return slices.Compact(out)
}

// Edges lists every step the channel's entries allow out of from, by
// entry order.
func (g *ChannelGraph) Edges(from Bundle) []Step {
	var out []Step
	for _, i := range g.candidates(from) {
		if st, ok := g.edge(i, from); ok {
			out = append(out, st)
		}
	}
	return out
}

// NextV0 is what OLM v0's resolver installs over from in this channel:
// among the entries that replace or skip from, or whose skipRange covers
// its version, the one nearest the head along the replaces chain, skipped
// bundles left out (a skipRange thus jumps to the newest bundle that
// admits the version, and a skipped bundle is never installed). ok is
// false when there is none: from is the head, or stranded. A channel OLM
// v0 cannot order is an error.
func (g *ChannelGraph) NextV0(from Bundle) (Step, bool, error) {
	if g.chainErr != nil {
		return Step{}, false, g.chainErr
	}
	var best Step
	bestRank := -1
	for _, i := range g.nextCandidates(from, g.v0best) {
		r, onChain := g.rank[g.Entries[i].Name]
		if !onChain || (bestRank >= 0 && r >= bestRank) {
			continue
		}
		if st, ok := g.edge(i, from); ok {
			best, bestRank = st, r
		}
	}
	return best, bestRank >= 0, nil
}

// Replacement is the registry server's answer to GetBundleThatReplaces
// (GetReplacementBundleInPackageChannel) for name in this channel: an
// entry that replaces or skips it (skipRanges play no part), the one
// nearest the head along the replaces chain when several do. ok is false
// when none does.
func (g *ChannelGraph) Replacement(name string) (Step, bool) {
	var best Step
	bestDepth, found := 0, false
	for _, i := range g.candidates(Bundle{Name: name}) {
		st, ok := g.edge(i, Bundle{Name: name})
		if !ok {
			continue
		}
		d, onChain := g.depth[st.To]
		if !onChain {
			d = len(g.Entries) + 1
		}
		if !found || d < bestDepth || (d == bestDepth && st.To < best.To) {
			best, bestDepth, found = st, d, true
		}
	}
	return best, found
}

// Channel is the package's channel of that name, or nil.
func (p *Package) Channel(name string) *ChannelGraph { return p.byChannel[name] }

// HasBundle says whether the package has a bundle of that name.
func (p *Package) HasBundle(name string) bool { return p.bundles[name] }

// Deprecated says whether an olm.deprecations entry of the package names
// the bundle.
func (p *Package) Deprecated(name string) bool { return p.deprecated[name] }
