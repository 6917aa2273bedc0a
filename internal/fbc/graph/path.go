package graph

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
)

// PathQuery asks for the bundles OLM installs one after the other.
type PathQuery struct {
	// From is where the cluster is: a bundle name or a version.
	From string
	// To, when set, is where it should get to (a bundle name or a
	// version); otherwise the path runs to where OLM stops.
	To string
	// Channel is the subscription's channel: OLM v0 uses the package's
	// default channel when it is empty, OLM v1 every channel.
	Channel string
	// AnyChannel lets each OLM v0 step take the newest next step of any
	// channel, as a subscription moved from channel to channel would.
	AnyChannel bool
	// OLMv1 follows operator-controller instead of OLM v0: each step is
	// the bundle ResolveV1 answers with the previous one installed.
	OLMv1 bool
	// ResolveV1 is operator-controller's resolver, which an OLMv1 query
	// needs (resolve.ExtensionSteps gives it): the graph library only
	// words the edge each answer follows, so OLM v1's rule lives in one
	// place.
	ResolveV1 V1Resolver
}

// V1Resolver answers one OLM v1 step: the bundle operator-controller
// resolves the ClusterExtension to (CatalogProvided, the query's
// channels) with installed installed. version is the version
// status.install.bundle records: "" for the catalog's version of
// installed.Name, else what --from gave.
type V1Resolver func(installed Bundle, version string) (V1Pick, error)

// V1Pick is operator-controller's answer to one step.
type V1Pick struct {
	// Bundle is the bundle it resolves to: the installed one when it
	// stays; "" when resolution fails.
	Bundle string
	// Error is its resolution error, word for word, when Bundle is "".
	Error string
	// Why says why it stays or fails, in words.
	Why string
}

// EdgeSameVersion is an OLM v1 step with no edge: operator-controller
// keeps the installed version, and another bundle has it.
const EdgeSameVersion = "sameVersion"

// Path is the answer: the steps from From, where they end, and, when To
// was asked for, whether it is reached and why not.
type Path struct {
	Package   string `json:"package"`
	Semantics string `json:"semantics"`
	// Channels are the channels the steps were taken from.
	Channels []string `json:"channels"`
	From     string   `json:"from"`
	To       string   `json:"to,omitempty"`
	Steps    []Step   `json:"steps"`
	// End is the last bundle of the path, and AtHead whether it is a head
	// of a channel the path could take (OLM upgrades no further there).
	End    string `json:"end"`
	AtHead bool   `json:"atHead"`
	// HeadOf are the channels End is the head of.
	HeadOf []string `json:"headOf"`
	// Reached is true when To was asked for and is on the path.
	Reached bool `json:"reached"`
	// Unreachable says why To is not reached, or why the path stops short
	// of a head.
	Unreachable string `json:"unreachable,omitempty"`
	// Error is operator-controller's resolution error, word for word, when
	// it resolves nothing from End (OLM v1 only).
	Error string `json:"error,omitempty"`
}

// Semantics names.
const (
	OLMv0 = "olmv0"
	OLMv1 = "olmv1"
)

// maxSteps bounds a walk; a graph that needs more has a cycle OLM would
// loop on too.
const maxSteps = 10000

// Path walks from q.From as OLM would, one step at a time.
func (p *Package) Path(q PathQuery) (*Path, error) {
	return p.walk(q, nil)
}

// stepMemo remembers next steps by bundle and the channel the path is on,
// for the many walks of KeepForRange: their paths run together.
type stepMemo map[[2]string]memoStep

type memoStep struct {
	st  Step
	ok  bool
	why string
	err error
}

// v1Failure is operator-controller resolving nothing: the path ends
// there, with its error.
type v1Failure struct{ pick V1Pick }

func (f *v1Failure) Error() string { return f.pick.Error }

func (p *Package) walk(q PathQuery, memo stepMemo) (*Path, error) {
	chans, err := p.channels(q)
	missing := ""
	if err != nil && q.OLMv1 && q.Channel != "" && len(p.Channels) > 0 && p.byChannel[q.Channel] == nil {
		// A ClusterExtension may name a channel the package lacks:
		// operator-controller then finds nothing, and says so.
		missing = fmt.Sprintf("package %s has no channel %q (it has %s)", p.Name, q.Channel, orNone(p.channelNames()))
		chans, err = []*ChannelGraph{{Package: p.Name, Name: q.Channel}}, nil
	}
	if err != nil {
		return nil, err
	}
	if q.OLMv1 && q.ResolveV1 == nil {
		return nil, fmt.Errorf("an OLM v1 path needs operator-controller's resolver (PathQuery.ResolveV1)")
	}
	from, err := p.resolve("--from", q.From, chans)
	if err != nil {
		return nil, err
	}
	// What status.install.bundle.version says: the version given, when
	// --from is one; the catalog's otherwise.
	fromVersion := ""
	if q.OLMv1 && !p.bundles[q.From] && !p.inChannels(q.From, p.Channels) {
		if from.Name == "" {
			// The installed bundle is in some channel, if not in those
			// asked for: operator-controller knows its name.
			if b, err := p.resolve("--from", q.From, nil); err == nil && b.Name != "" {
				from = b
			}
		}
		fromVersion = q.From
	}
	out := &Path{Package: p.Name, Semantics: OLMv0, From: from.String()}
	if q.OLMv1 {
		out.Semantics = OLMv1
	}
	for _, g := range chans {
		out.Channels = append(out.Channels, g.Name)
	}
	var to *Bundle
	if q.To != "" {
		t, err := p.resolve("--to", q.To, chans)
		if err != nil {
			return nil, err
		}
		if t.Name == "" {
			return nil, fmt.Errorf("--to %s: no bundle of package %s has that version", q.To, p.Name)
		}
		to = &t
		out.To = t.Name
	}

	cur := from
	cycle, why := "", ""
	visited := map[string]bool{from.Name: from.Name != ""}
	onChannel := chans[0]
	for len(out.Steps) < maxSteps {
		if to != nil && cur.Name == to.Name {
			out.Reached = true
			break
		}
		var st Step
		var ok bool
		var err error
		key := [2]string{cur.Name, onChannel.Name}
		if q.OLMv1 {
			// OLM v1's answer does not depend on the channel a step came by.
			key[1] = ""
		}
		version := ""
		if len(out.Steps) == 0 {
			version = fromVersion
		}
		if m, hit := memo[key]; hit && cur.Name != "" && version == "" {
			st, ok, why, err = m.st, m.ok, m.why, m.err
		} else {
			st, ok, why, err = p.next(q, cur, version, chans, onChannel)
			if memo != nil && cur.Name != "" && version == "" {
				memo[key] = memoStep{st, ok, why, err}
			}
		}
		var fail *v1Failure
		if errors.As(err, &fail) {
			out.Error = fail.pick.Error
			break
		}
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if visited[st.To] {
			cycle = fmt.Sprintf("the graph has a cycle: from %s OLM would install %s again", cur, st.To)
			break
		}
		visited[st.To] = true
		out.Steps = append(out.Steps, st)
		if g := p.byChannel[st.Channel]; g != nil {
			onChannel = g
		}
		cur = p.bundle(st.To)
	}
	out.End = cur.String()
	for _, g := range chans {
		if contains(g.Heads(), cur.Name) {
			out.AtHead = true
			out.HeadOf = append(out.HeadOf, g.Name)
		}
	}
	switch {
	case cycle != "":
		out.Unreachable = cycle
	case out.Error != "":
		out.Unreachable = fmt.Sprintf("operator-controller resolves nothing from %s: %s", cur, out.Error)
		if missing != "" {
			why = missing
		}
		if why != "" {
			out.Unreachable += "; " + why
		}
	case to != nil && !out.Reached:
		out.Unreachable = p.whyNot(q, from, *to, out, chans, why)
	case to == nil && !out.AtHead && q.OLMv1:
		word := "channel"
		if len(out.Channels) > 1 {
			word = "any of the channels"
		}
		out.Unreachable = fmt.Sprintf("operator-controller stays at %s, which is not the head of %s %s (%s): %s",
			cur, word, strings.Join(out.Channels, ", "), strings.Join(headsOf(chans), ", "), why)
	case to == nil && !out.AtHead:
		out.Unreachable = fmt.Sprintf("OLM stops at %s, which is not the head of channel %s (%s): %s",
			cur, strings.Join(out.Channels, ", "), strings.Join(headsOf(chans), ", "), whyStuck(cur, chans))
	}
	return out, nil
}

// whyStuck says why OLM v0 goes no further from cur, off the head.
func whyStuck(cur Bundle, chans []*ChannelGraph) string {
	var skipped, offChain []string
	for _, g := range chans {
		for _, st := range g.Edges(cur) {
			if g.Skipped(st.To) {
				skipped = append(skipped, st.To)
			} else {
				offChain = append(offChain, st.To)
			}
		}
	}
	switch {
	case len(skipped) > 0 && len(offChain) == 0:
		return fmt.Sprintf("what replaces or skips it (%s) is skipped by another entry, and OLM v0 never installs a skipped bundle", strings.Join(skipped, ", "))
	case len(skipped)+len(offChain) > 0:
		return fmt.Sprintf("what leads on from it (%s) is skipped or off the replaces chain from the head, which OLM v0 picks from", strings.Join(append(skipped, offChain...), ", "))
	}
	for _, g := range chans {
		if g.Has(cur.Name) {
			return "no entry replaces or skips it or has a skipRange covering its version"
		}
	}
	return "it is not in the channel, and no entry replaces or skips it or has a skipRange covering its version"
}

func headsOf(chans []*ChannelGraph) []string {
	var out []string
	for _, g := range chans {
		out = append(out, g.Heads()...)
	}
	return out
}

// channels are the channels a query may take steps from, the
// subscription's first.
func (p *Package) channels(q PathQuery) ([]*ChannelGraph, error) {
	name := q.Channel
	if name == "" && !q.OLMv1 {
		name = p.DefaultChannel
		if name == "" {
			return nil, fmt.Errorf("package %s has no default channel: name one with --channel", p.Name)
		}
	}
	if name == "" {
		if len(p.Channels) == 0 {
			return nil, fmt.Errorf("package %s has no channels", p.Name)
		}
		return p.Channels, nil
	}
	g := p.byChannel[name]
	if g == nil {
		return nil, fmt.Errorf("package %s has no channel %q (it has %s)", p.Name, name, orNone(p.channelNames()))
	}
	if !q.AnyChannel {
		return []*ChannelGraph{g}, nil
	}
	out := []*ChannelGraph{g}
	for _, o := range p.Channels {
		if o != g {
			out = append(out, o)
		}
	}
	return out, nil
}

func (p *Package) channelNames() []string {
	var out []string
	for _, g := range p.Channels {
		out = append(out, g.Name)
	}
	return out
}

func (p *Package) bundle(name string) Bundle {
	b := Bundle{Name: name}
	b.Version, b.HasVersion = p.Versions[name]
	return b
}

// resolve reads a bundle name or a version. A version names the bundle
// of the channels (any bundle when chans is nil) that has it, or, when
// none has, stands for itself.
func (p *Package) resolve(flag, s string, chans []*ChannelGraph) (Bundle, error) {
	if p.bundles[s] || p.inChannels(s, p.Channels) {
		return p.bundle(s), nil
	}
	v, err := semver.ParseTolerant(s)
	if err != nil {
		return Bundle{}, fmt.Errorf("%s %q: package %s has no bundle of that name, and it is not a version", flag, s, p.Name)
	}
	var names []string
	for name, bv := range p.Versions {
		if bv.Equals(v) && (chans == nil || p.inChannels(name, chans)) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	switch len(names) {
	case 0:
		return Bundle{Version: v, HasVersion: true}, nil
	case 1:
		return p.bundle(names[0]), nil
	}
	return Bundle{}, fmt.Errorf("%s %s: bundles %s all have that version; name one", flag, s, strings.Join(names, ", "))
}

func (p *Package) inChannels(name string, chans []*ChannelGraph) bool {
	for _, g := range chans {
		if g.Has(name) {
			return true
		}
	}
	return false
}

// next is one step of q from cur (whose recorded version, for OLM v1, is
// version when not ""); why says why OLM v1 stays or fails.
func (p *Package) next(q PathQuery, cur Bundle, version string, chans []*ChannelGraph, on *ChannelGraph) (Step, bool, string, error) {
	if q.OLMv1 {
		return p.nextV1(q, cur, version, chans)
	}
	if !q.AnyChannel {
		st, ok, err := chans[0].NextV0(cur)
		return st, ok, "", err
	}
	// Each channel's own answer; the newest wins, the channel the path is
	// on first among equals, then the default channel, then by name.
	var best Step
	found := false
	rank := func(ch string) int {
		switch ch {
		case on.Name:
			return 0
		case p.DefaultChannel:
			return 1
		}
		return 2
	}
	for _, g := range chans {
		st, ok, err := g.NextV0(cur)
		if err != nil || !ok {
			// A channel OLM v0 cannot order offers nothing.
			continue
		}
		if !found {
			best, found = st, true
			continue
		}
		vb, vs := p.Versions[best.To], p.Versions[st.To]
		if c := vs.Compare(vb); c > 0 || (c == 0 && rank(st.Channel) < rank(best.Channel)) {
			best = st
		}
	}
	return best, found, "", nil
}

// nextV1 asks operator-controller's resolver what it installs with cur
// installed, and words the step: the edge its entry follows, from the
// default channel when several channels offer it. ok is false when it
// stays; a *v1Failure when it resolves nothing.
func (p *Package) nextV1(q PathQuery, cur Bundle, version string, chans []*ChannelGraph) (Step, bool, string, error) {
	pick, err := q.ResolveV1(cur, version)
	if err != nil {
		return Step{}, false, "", err
	}
	if pick.Bundle == "" {
		return Step{}, false, pick.Why, &v1Failure{pick}
	}
	if pick.Bundle == cur.Name {
		return Step{}, false, pick.Why, nil
	}
	var best Step
	found := false
	for _, g := range chans {
		// A channel holds one entry of a name: only the pick's can be the
		// step (reading every candidate from cur would make a step cost
		// the channel's skipRanges).
		i, ok := g.byName[pick.Bundle]
		if !ok {
			continue
		}
		if st, ok := g.edge(i, cur); ok && (!found || g.Name == p.DefaultChannel) {
			best, found = st, true
		}
	}
	if !found {
		best = Step{From: cur.String(), To: pick.Bundle, Edge: EdgeSameVersion}
		if v, ok := p.Versions[pick.Bundle]; ok {
			best.Version = v.String()
		}
	}
	return best, true, pick.Why, nil
}

// whyNot says why the path from from does not reach to; stay is why
// operator-controller stays where the path ends (OLM v1).
func (p *Package) whyNot(q PathQuery, from, to Bundle, path *Path, chans []*ChannelGraph, stay string) string {
	if !p.inChannels(to.Name, chans) {
		var in []string
		for _, g := range p.Channels {
			if g.Has(to.Name) {
				in = append(in, g.Name)
			}
		}
		hint := "--channel " + orNone(in)
		if !q.OLMv1 {
			hint += " or --any-channel"
		}
		return fmt.Sprintf("%s is not in channel %s (it is in %s; try %s)", to.Name, strings.Join(path.Channels, ", "), orNone(in), hint)
	}
	if from.HasVersion && to.HasVersion && to.Version.LT(from.Version) {
		return fmt.Sprintf("%s (%s) is older than %s (%s): OLM does not downgrade", to.Name, to.Version, from, from.Version)
	}
	if !q.OLMv1 {
		var by []string
		for _, g := range chans {
			by = append(by, g.SkippedBy(to.Name)...)
		}
		if len(by) > 0 {
			return fmt.Sprintf("%s is skipped by %s: OLM v0 never installs a skipped bundle", to.Name, strings.Join(by, ", "))
		}
	}
	// Where did the path leave the bundles from which an edge leads to?
	reach := p.reaching(to.Name, chans)
	nodes := []string{from.Name}
	for _, st := range path.Steps {
		nodes = append(nodes, st.To)
	}
	last := -1
	for i, n := range nodes {
		if n != "" && reach[n] || (i == 0 && from.Name == "" && p.versionReaches(from, reach, chans)) {
			last = i
		}
	}
	if last < 0 {
		return fmt.Sprintf("no chain of replaces, skips or skipRange edges in channel %s leads from %s to %s (OLM stops at %s)",
			strings.Join(path.Channels, ", "), from, to.Name, path.End)
	}
	at := from.String()
	if last > 0 {
		at = nodes[last]
	}
	if last == len(path.Steps) {
		if q.OLMv1 && stay != "" {
			return fmt.Sprintf("operator-controller stays at %s although edges lead on to %s: %s", at, to.Name, stay)
		}
		return fmt.Sprintf("OLM stops at %s although edges lead on to %s", at, to.Name)
	}
	st := path.Steps[last]
	rule := "it is nearer the channel head"
	if q.OLMv1 {
		rule = "operator-controller ranks it first (not deprecated, then the highest version)"
	} else if q.AnyChannel {
		rule = "it is the newest next step of any channel"
	}
	return fmt.Sprintf("from %s OLM installs %s (%s) instead: %s, and no edge leads from there back to %s", at, st.To, edgeText(st), rule, to.Name)
}

func edgeText(st Step) string {
	if st.Edge == EdgeSkipRange {
		return fmt.Sprintf("skipRange %q", st.SkipRange)
	}
	return st.Edge
}

// reaching is the set of bundles from which some chain of edges of chans
// leads to target (target included).
func (p *Package) reaching(target string, chans []*ChannelGraph) map[string]bool {
	return walkBack([]string{target}, chans)
}

// versionReaches says whether a bare version has a skipRange edge into
// the set.
func (p *Package) versionReaches(from Bundle, set map[string]bool, chans []*ChannelGraph) bool {
	for _, g := range chans {
		for _, st := range g.Edges(from) {
			if set[st.To] {
				return true
			}
		}
	}
	return false
}

// Keep is the answer to "which bundles must a catalog keep so that every
// version in a range still reaches the head".
type Keep struct {
	Package   string   `json:"package"`
	Semantics string   `json:"semantics"`
	Channels  []string `json:"channels"`
	Range     string   `json:"range"`
	// Bundles are the bundles to keep, oldest first: every bundle OLM
	// installs on the way from a version in the range, and the heads the
	// paths end at.
	Bundles []KeptBundle `json:"bundles"`
	// Stranded are bundles in the range from which OLM reaches no head.
	Stranded []string `json:"stranded"`
}

// KeptBundle is one bundle to keep and the bundles in the range whose path
// passes it.
type KeptBundle struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	For     []string `json:"for"`
	// ChainOnly marks a bundle no path installs that OLM v0 still needs:
	// it orders a channel by its replaces chain from the head, and a gap
	// in that chain makes a second head, a channel it refuses.
	ChainOnly bool `json:"chainOnly,omitempty"`
}

// KeepForRange walks from every bundle of the query's channels whose
// version is in rng (q.From and q.To are not used) and lists the bundles
// those paths install: keeping them, with their channel entries as they
// are, every such version upgrades to the head as it does now, and no
// smaller set does without changing some path (each bundle listed is one
// OLM installs on the way).
func (p *Package) KeepForRange(q PathQuery, rng string) (*Keep, error) {
	r, err := semver.ParseRange(rng)
	if err != nil {
		return nil, fmt.Errorf("--from-range %q: %w", rng, err)
	}
	chans, err := p.channels(q)
	if err != nil {
		return nil, err
	}
	out := &Keep{Package: p.Name, Semantics: OLMv0, Range: rng}
	if q.OLMv1 {
		out.Semantics = OLMv1
	}
	for _, g := range chans {
		out.Channels = append(out.Channels, g.Name)
	}
	var starts []string
	for name, v := range p.Versions {
		if r(v) && p.inChannels(name, chans) {
			starts = append(starts, name)
		}
	}
	sort.Slice(starts, func(i, j int) bool { return p.older(starts[i], starts[j]) })
	kept := map[string][]string{}
	memo := stepMemo{}
	for _, s := range starts {
		sq := q
		sq.From, sq.To = s, ""
		path, err := p.walk(sq, memo)
		if err != nil {
			return nil, err
		}
		if !path.AtHead {
			out.Stranded = append(out.Stranded, s)
			continue
		}
		for _, st := range path.Steps {
			kept[st.To] = append(kept[st.To], s)
		}
		if len(path.Steps) == 0 {
			// Already at the head: the head itself stays.
			kept[s] = append(kept[s], s)
		}
	}
	chainOnly := map[string]bool{}
	if !q.OLMv1 {
		for _, g := range chans {
			lowest := -1
			for name := range kept {
				if d, ok := g.depth[name]; ok && g.Has(name) && d > lowest {
					lowest = d
				}
			}
			for name, d := range g.depth {
				if d < lowest && kept[name] == nil && g.Has(name) {
					chainOnly[name] = true
				}
			}
		}
	}
	for name := range chainOnly {
		kept[name] = nil
	}
	for name, fr := range kept {
		kb := KeptBundle{Name: name, For: fr, ChainOnly: chainOnly[name]}
		if v, ok := p.Versions[name]; ok {
			kb.Version = v.String()
		}
		out.Bundles = append(out.Bundles, kb)
	}
	sort.Slice(out.Bundles, func(i, j int) bool { return p.older(out.Bundles[i].Name, out.Bundles[j].Name) })
	return out, nil
}

func (p *Package) older(a, b string) bool {
	va, vb := p.Versions[a], p.Versions[b]
	if c := va.Compare(vb); c != 0 {
		return c < 0
	}
	return a < b
}
