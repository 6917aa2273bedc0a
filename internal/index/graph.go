package index

import (
	"fmt"
	"sort"
	"strings"
)

// Mode says how Add builds channel graphs.
type Mode string

// Graph modes (FORMATS.md).
const (
	// ModeReplaces builds each channel from the CSVs' spec.replaces and
	// spec.skips; the head is the highest bundle of the channel.
	ModeReplaces Mode = "replaces"
	// ModeSemver ignores replaces and chains the bundles of each channel in
	// version order, each replacing the next lower one.
	ModeSemver Mode = "semver"
	// ModeSemverSkipPatch is ModeSemver where a bundle also replaces (skips)
	// every lower bundle of its channel with the same major.minor.
	ModeSemverSkipPatch Mode = "semver-skippatch"
)

// ParseMode accepts a mode name ("" is replaces).
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", ModeReplaces:
		return ModeReplaces, nil
	case ModeSemver, ModeSemverSkipPatch:
		return Mode(s), nil
	}
	return "", fmt.Errorf("unknown graph mode %q: use replaces, semver or semver-skippatch", s)
}

// node is one bundle of a package as the graph builder sees it.
type node struct {
	Name     string
	Version  Version
	Replaces string
	Skips    []string
	Channels []string // the channels the bundle is in
	New      bool     // added by this call
}

func (n *node) VersionName() string    { return n.Name }
func (n *node) BundleVersion() Version { return n.Version }

// entry is one channel_entry row: Replaces indexes the entries of the same
// channel (-1 for none).
type entry struct {
	Bundle   string
	Replaces int
	Depth    int
}

// chanGraph is one channel's head and entries.
type chanGraph struct {
	Name    string
	Head    string
	Entries []entry
}

// Edges are the distinct (bundle, replaced) pairs of the channel's entries.
func (c *chanGraph) Edges() [][2]string {
	seen := map[[2]string]bool{}
	var out [][2]string
	for _, e := range c.Entries {
		if e.Replaces < 0 {
			continue
		}
		k := [2]string{e.Bundle, c.Entries[e.Replaces].Bundle}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// buildGraph builds the channels of one package from its bundles. It returns
// the channels sorted by name, or every problem it found (each blaming the new
// bundles that cause it, so that --permissive can drop them and try again).
func buildGraph(pkg string, nodes []*node, mode Mode) ([]chanGraph, []*Error) {
	return buildGraphRefused(pkg, nodes, mode, nil)
}

// buildGraphRefused is buildGraph knowing the bundles of the call that were
// refused (name → why), so that errors about them name the real cause.
func buildGraphRefused(pkg string, nodes []*node, mode Mode, refused map[string]string) ([]chanGraph, []*Error) {
	byName := make(map[string]*node, len(nodes))
	for _, n := range nodes {
		byName[n.Name] = n
	}
	members := map[string][]*node{}
	for _, n := range nodes {
		for _, c := range n.Channels {
			members[c] = append(members[c], n)
		}
	}
	var errs []*Error
	if mode == ModeReplaces {
		errs = append(errs, checkReplaces(pkg, nodes, byName, refused)...)
		if len(errs) > 0 {
			return nil, errs
		}
		if err := noUpgradeEdges(pkg, nodes, members); err != nil {
			return nil, []*Error{err}
		}
	}
	names := make([]string, 0, len(members))
	for c := range members {
		names = append(names, c)
	}
	sort.Strings(names)
	var out []chanGraph
	for _, c := range names {
		ms := members[c]
		SortBundles(ms)
		g, cerrs := buildChannel(pkg, c, ms, byName, mode)
		errs = append(errs, cerrs...)
		if len(cerrs) == 0 {
			out = append(out, g)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// checkReplaces finds new bundles whose spec.replaces names a bundle missing
// from the package, and replaces-cycles, before any channel is walked, so the
// error says what is wrong rather than "not reachable".
func checkReplaces(pkg string, nodes []*node, byName map[string]*node, refused map[string]string) []*Error {
	var errs []*Error
	for _, n := range nodes {
		if !n.New || n.Replaces == "" {
			continue
		}
		if why, ok := refused[n.Replaces]; ok {
			errs = append(errs, &Error{Kind: KindReplacesMissing, Package: pkg, Bundle: n.Name,
				Msg:   fmt.Sprintf("spec.replaces names %s, which is among the bundles given but could not be added (%s)", n.Replaces, why),
				Fix:   fmt.Sprintf("fix %s first (its own error says how)", n.Replaces),
				Blame: []string{n.Name}})
			continue
		}
		if _, ok := byName[n.Replaces]; !ok {
			errs = append(errs, &Error{Kind: KindReplacesMissing, Package: pkg, Bundle: n.Name,
				Msg:   fmt.Sprintf("spec.replaces names %s, which is not in the index nor among the bundles being added", n.Replaces),
				Fix:   fmt.Sprintf("add %s in the same call or before, or correct spec.replaces", n.Replaces),
				Blame: []string{n.Name}})
		}
	}
	reported := map[string]bool{}
	for _, n := range nodes {
		if !n.New {
			continue
		}
		// Follow replaces; each bundle replaces at most one, so a path that
		// comes back to n is a cycle through n.
		path := []string{n.Name}
		seen := map[string]bool{n.Name: true}
		cur := n
		for cur.Replaces != "" {
			next, ok := byName[cur.Replaces]
			if !ok {
				break
			}
			if next == n {
				key := cycleKey(path)
				if !reported[key] {
					reported[key] = true
					errs = append(errs, cycleError(pkg, "", append(path, n.Name), byName))
				}
				break
			}
			if seen[next.Name] {
				break // a cycle not through n: reported from one of its members
			}
			seen[next.Name] = true
			path = append(path, next.Name)
			cur = next
		}
	}
	return errs
}

// noUpgradeEdges returns one error for a package where, in replaces mode,
// no bundle replaces or skips another although a channel holds several:
// every bundle would head its channel, which is one problem (the wrong mode
// or missing spec.replaces), not one per bundle and channel.
func noUpgradeEdges(pkg string, nodes []*node, members map[string][]*node) *Error {
	var blame []string
	for _, n := range nodes {
		if n.Replaces != "" || len(n.Skips) > 0 {
			return nil
		}
		if n.New {
			blame = append(blame, n.Name)
		}
	}
	var crowded []string
	for c, ms := range members {
		if len(ms) > 2 { // with two, the usual two-heads error says it as well
			crowded = append(crowded, fmt.Sprintf("%s (%d bundles)", c, len(ms)))
		}
	}
	if len(crowded) == 0 || len(blame) == 0 {
		return nil
	}
	sort.Strings(crowded)
	return &Error{Kind: KindTwoHeads, Package: pkg,
		Msg: fmt.Sprintf("no bundle of the package sets spec.replaces or spec.skips, so in replaces mode each of its %d bundles would head its channels: %s",
			len(nodes), strings.Join(crowded, ", ")),
		Fix:   "add the bundles with --mode semver (channels ordered by spec.version, no replaces needed), or set spec.replaces in each bundle to the one before it",
		Blame: blame}
}

func cycleKey(path []string) string {
	p := append([]string{}, path...)
	sort.Strings(p)
	return strings.Join(p, "\x00")
}

func cycleError(pkg, channel string, path []string, byName map[string]*node) *Error {
	var blame []string
	seen := map[string]bool{}
	for _, name := range path {
		if n := byName[name]; n != nil && n.New && !seen[name] {
			seen[name] = true
			blame = append(blame, name)
		}
	}
	return &Error{Kind: KindCycle, Package: pkg, Bundle: path[0], Channel: channel,
		Msg:   "upgrade cycle: " + strings.Join(path, " → "),
		Fix:   "each bundle must replace or skip only lower versions; correct spec.replaces/spec.skips of one of these bundles",
		Blame: blame}
}

// buildChannel builds one channel; ms are its members, ascending.
func buildChannel(pkg, channel string, ms []*node, byName map[string]*node, mode Mode) (chanGraph, []*Error) {
	head := ms[len(ms)-1]
	g := chanGraph{Name: channel, Head: head.Name}

	// The edges each member uses in this channel.
	replacesOf := func(n *node) string { return n.Replaces }
	skipsOf := func(n *node) []string { return n.Skips }
	if mode != ModeReplaces {
		below := map[string]string{}
		skips := map[string][]string{}
		for i := len(ms) - 1; i > 0; i-- {
			below[ms[i].Name] = ms[i-1].Name
			if mode == ModeSemverSkipPatch {
				for j := i - 2; j >= 0; j-- {
					if sameMinor(ms[j].Version, ms[i].Version) {
						skips[ms[i].Name] = append(skips[ms[i].Name], ms[j].Name)
					}
				}
			}
		}
		replacesOf = func(n *node) string { return below[n.Name] }
		skipsOf = func(n *node) []string { return skips[n.Name] }
	}

	g.Entries = append(g.Entries, entry{Bundle: head.Name, Replaces: -1, Depth: 0})
	depth := 1
	expanded := map[string]bool{}
	type pending struct {
		name string
		idx  int
	}
	var queue []pending
	var errs []*Error

	// walk follows the replaces chain from the bundle of entry idx, adding an
	// entry for every skipped name (upstream's layout: the skipped name, and
	// a copy of the skipping bundle that replaces it, one depth further).
	walk := func(start string, idx int) {
		cur := byName[start]
		chain := []string{start}
		seen := map[string]bool{start: true}
		for {
			expanded[cur.Name] = true
			for _, s := range skipsOf(cur) {
				g.Entries = append(g.Entries, entry{Bundle: s, Replaces: -1, Depth: depth})
				sIdx := len(g.Entries) - 1
				g.Entries = append(g.Entries, entry{Bundle: cur.Name, Replaces: sIdx, Depth: depth})
				depth++
				if _, real := byName[s]; real {
					queue = append(queue, pending{s, sIdx})
				}
			}
			r := replacesOf(cur)
			if r == "" {
				return
			}
			next, ok := byName[r]
			if !ok {
				// Only bundles already in the database get here (new ones
				// were checked): keep upstream's entry for the name.
				g.Entries = append(g.Entries, entry{Bundle: r, Replaces: -1, Depth: depth})
				g.Entries[idx].Replaces = len(g.Entries) - 1
				depth++
				return
			}
			if seen[r] {
				errs = append(errs, cycleError(pkg, channel, append(chain, r), byName))
				return
			}
			g.Entries = append(g.Entries, entry{Bundle: r, Replaces: -1, Depth: depth})
			g.Entries[idx].Replaces = len(g.Entries) - 1
			idx = len(g.Entries) - 1
			depth++
			if expanded[r] {
				return // the rest of this chain is already in the channel
			}
			seen[r] = true
			chain = append(chain, r)
			cur = next
		}
	}
	walk(head.Name, 0)
	// A skipped bundle that is in the package keeps its own upgrade chain:
	// follow it too (upstream did not, and called those bundles pruned).
	for len(queue) > 0 && len(errs) == 0 {
		p := queue[0]
		queue = queue[1:]
		if expanded[p.name] {
			continue
		}
		walk(p.name, p.idx)
	}
	if len(errs) > 0 {
		return g, errs
	}
	if err := checkEdgeCycles(pkg, &g, byName); err != nil {
		return g, []*Error{err}
	}

	reached := map[string]bool{}
	for _, e := range g.Entries {
		reached[e.Bundle] = true
	}
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		if reached[m.Name] {
			continue
		}
		if m.New {
			errs = append(errs, &Error{Kind: KindPrune, Package: pkg, Bundle: m.Name, Channel: channel,
				Msg: fmt.Sprintf("version %s is below the channel head %s (%s), and no bundle on the head's upgrade path replaces or skips it, so it would not be reachable (upstream: \"add prunes bundle\")",
					m.Version, head.Name, head.Version),
				Fix:   fmt.Sprintf("make a bundle on %s's upgrade path replace it or list it in spec.skips, or drop channel %s from its annotations", head.Name, channel),
				Blame: []string{m.Name}})
			continue
		}
		var blame []string
		if head.New {
			blame = []string{head.Name}
		} else {
			for _, x := range ms {
				if x.New {
					blame = append(blame, x.Name)
				}
			}
		}
		errs = append(errs, &Error{Kind: KindTwoHeads, Package: pkg, Bundle: head.Name, Channel: channel,
			Msg: fmt.Sprintf("the channel would have two heads: %s (%s) and %s (%s), which %s does not reach through replaces or skips",
				head.Name, head.Version, m.Name, m.Version, head.Name),
			Fix:   twoHeadsFix(head, m, mode),
			Blame: blame})
	}
	return g, errs
}

func twoHeadsFix(head, other *node, mode Mode) string {
	fix := fmt.Sprintf("make %s replace %s (spec.replaces) or skip it (spec.skips)", head.Name, other.Name)
	if mode == ModeReplaces && head.Replaces == "" && len(head.Skips) == 0 {
		fix += ", or add the bundles with --mode semver to order the channel by spec.version"
	}
	return fix
}

// checkEdgeCycles looks for a cycle in the replaces and skips edges between
// the bundles of a channel.
func checkEdgeCycles(pkg string, g *chanGraph, byName map[string]*node) *Error {
	adj := map[string][]string{}
	for _, e := range g.Edges() {
		if _, ok := byName[e[1]]; ok {
			adj[e[0]] = append(adj[e[0]], e[1])
		}
	}
	for k := range adj {
		sort.Strings(adj[k])
	}
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var found []string
	var visit func(n string) bool
	visit = func(n string) bool {
		color[n] = grey
		stack = append(stack, n)
		for _, m := range adj[n] {
			switch color[m] {
			case grey:
				for i, s := range stack {
					if s == m {
						found = append(append([]string{}, stack[i:]...), m)
						break
					}
				}
				return true
			case white:
				if visit(m) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
		return false
	}
	starts := make([]string, 0, len(adj))
	for k := range adj {
		starts = append(starts, k)
	}
	sort.Strings(starts)
	for _, s := range starts {
		if color[s] == white && visit(s) {
			return cycleError(pkg, g.Name, found, byName)
		}
	}
	return nil
}
