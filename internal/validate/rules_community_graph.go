package validate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
)

// Community package rules: what the pipelines check across every bundle of
// an operator's directory. opm sees the bundles given in one run, so these
// run when two or more bundles of a package are validated together
// (opm bundle validate operators/<name>/*/). The operator's ci.yaml says how
// the pipelines build the graph: in semver-mode each bundle of a channel is
// replaced by the next higher version whatever its CSV says, so the graph
// rules have nothing to check there (the pipelines' checks pass it), while
// spec.replaces, when given, must still name a bundle that exists.
var (
	RuleCommunityOneName = register(&Rule{ID: "community-one-operator-name", Severity: Error, Scope: ScopePackage, Set: SetCommunity,
		What: "Every bundle of a package uses the same operator name as its CSV name's prefix.",
		Why:  "The pipelines' check_operator_name_unique fails an operator whose bundles disagree: the catalog builds one package from them and upgrades by CSV name.",
		Fix:  "Name every CSV <package>.v<version>."})
	RuleCommunityReplaces = register(&Rule{ID: "community-replaces-given", Severity: Error, Scope: ScopePackage, Set: SetCommunity,
		What: "A bundle's spec.replaces names another bundle of the package given in the run (by its version), never itself.",
		Why:  "The pipelines' check_replaces_availability fails a bundle that replaces a version the repository does not have, or itself: OLM cannot upgrade into it, and the catalog build refuses it.",
		Fix:  "Replace the previous version that exists (give every version's directory), or drop spec.replaces for the first bundle."})
	RuleCommunityDangling = register(&Rule{ID: "community-dangling-bundles", Severity: Error, Scope: ScopePackage, Set: SetCommunity,
		What: "In every channel, each bundle but the channel's newest is replaced, skipped or skip-ranged by another bundle of the channel (replaces-mode, the default; in the ci.yaml's semver-mode every bundle is replaced by the next version). An updateGraph the pipelines do not build (semver-skippatch, a typo) or a ci.yaml that does not parse is an error too.",
		Why:  "A bundle nothing upgrades from is a dead end: clusters that installed it never leave it. The pipelines' check_dangling_bundles fails such a graph.",
		Fix:  "Make the next version replace (or skip, or skipRange over) the dangling bundle, or set updateGraph: semver-mode in the operator's ci.yaml."})
	RuleCommunityLoop = register(&Rule{ID: "community-graph-loop", Severity: Error, Scope: ScopePackage, Set: SetCommunity,
		What: "The upgrade graph of each channel (replaces, skips, olm.skipRange) has no loop.",
		Why:  "A loop makes OLM upgrade in circles or refuse the channel; the pipelines' check_upgrade_graph_loop fails it.",
		Fix:  "Make every edge go from an older version to a newer one."})
	RuleCommunitySkipRangePrune = register(&Rule{ID: "community-skiprange-prunes", Severity: Warning, Scope: ScopePackage, Set: SetCommunity,
		What: "A bundle with olm.skipRange and no spec.replaces, in a channel that holds older bundles.",
		Why:  "In the replaces-mode graph the community catalogs build, a bundle without replaces starts a new chain: the older bundles of the channel are reached only through the range and drop out of the channel's replaces chain, so the graph is cut there.",
		Fix:  "Also set spec.replaces to the previous version, so the chain continues."})
)

// commVersion is a CSV name's version part, as the pipelines read it:
// after the first dot, without a leading v.
func commVersion(csvName string) string {
	_, v, ok := strings.Cut(csvName, ".")
	if !ok {
		return ""
	}
	return strings.TrimPrefix(v, "v")
}

// channelMembers groups a package's members by channel (the default
// channel counts), in channel name order.
func channelMembers(members []*Member) ([]string, map[string][]*Member) {
	by := map[string][]*Member{}
	for _, m := range members {
		chans := append([]string{}, m.Channels...)
		if m.DefaultChannel != "" && !contains(chans, m.DefaultChannel) {
			chans = append(chans, m.DefaultChannel)
		}
		for _, ch := range chans {
			by[ch] = append(by[ch], m)
		}
	}
	names := make([]string, 0, len(by))
	for ch := range by {
		names = append(names, ch)
	}
	sort.Strings(names)
	return names, by
}

// upgradeEdges returns, for one channel, the members each member can be
// replaced by (old -> new), from replaces, skips and olm.skipRange.
func upgradeEdges(ms []*Member) map[*Member][]*Member {
	byVer := map[string]*Member{}
	for _, m := range ms {
		byVer[commVersion(m.Name)] = m
	}
	edges := map[*Member][]*Member{}
	add := func(from, to *Member) {
		if from != nil && from != to && !containsMember(edges[from], to) {
			edges[from] = append(edges[from], to)
		}
	}
	for _, m := range ms {
		for _, r := range append([]string{m.Replaces}, m.Skips...) {
			if r != "" {
				add(byVer[commVersion(r)], m)
			}
		}
		if m.SkipRange == "" {
			continue
		}
		rng, err := semver.ParseRange(m.SkipRange)
		if err != nil {
			continue
		}
		for _, o := range ms {
			if v, err := semver.ParseTolerant(commVersion(o.Name)); err == nil && o != m && rng(v) {
				add(o, m)
			}
		}
	}
	return edges
}

func containsMember(list []*Member, m *Member) bool {
	for _, o := range list {
		if o == m {
			return true
		}
	}
	return false
}

// newest is the member of highest spec.version.
func newest(ms []*Member) *Member {
	var best *Member
	var bestV semver.Version
	for _, m := range ms {
		v, err := semver.ParseTolerant(m.Version)
		if err != nil {
			continue
		}
		if best == nil || v.GT(bestV) {
			best, bestV = m, v
		}
	}
	return best
}

func init() {
	RuleCommunityOneName.checkPackage = func(c *PackageContext) {
		count := map[string]int{}
		var order []string
		for _, m := range c.Members {
			n := csvOperatorName(m.Name)
			if count[n] == 0 {
				order = append(order, n)
			}
			count[n]++
		}
		if len(order) < 2 {
			return
		}
		major := order[0]
		for _, n := range order {
			if count[n] > count[major] {
				major = n
			}
		}
		for _, m := range c.Members {
			if n := csvOperatorName(m.Name); n != major {
				c.Report(m, "metadata.name", fmt.Sprintf("CSV name %q uses operator name %q; the other bundles of package %s use %q (names: %s)", m.Name, n, c.Package, major, strings.Join(order, ", ")),
					"name the CSV "+major+".v"+m.Version)
			}
		}
	}
	RuleCommunityReplaces.checkPackage = func(c *PackageContext) {
		have := map[string]bool{}
		var versions []string
		for _, m := range c.Members {
			have[commVersion(m.Name)] = true
			versions = append(versions, commVersion(m.Name))
		}
		sort.Strings(versions)
		for _, m := range c.Members {
			if m.Replaces == "" {
				continue
			}
			rv := commVersion(m.Replaces)
			switch {
			case rv == commVersion(m.Name):
				c.Report(m, "spec.replaces", fmt.Sprintf("%s replaces itself", m.Name), "replace the previous version")
			case !have[rv]:
				c.Report(m, "spec.replaces", fmt.Sprintf("%s replaces %s, a version no bundle given for package %s has (given: %s)", m.Name, m.Replaces, c.Package, strings.Join(versions, ", ")),
					"give the replaced bundle too, or replace a version that exists")
			}
		}
	}
	RuleCommunityDangling.checkPackage = func(c *PackageContext) {
		if c.CI != nil && c.CI.Err != nil {
			c.ReportCI(fmt.Sprintf("the operator's ci.yaml cannot be read: %v", c.CI.Err), "fix the file, or give another with --ci-yaml")
			return
		}
		if c.CI != nil && c.CI.UpdateGraph != UpdateGraphReplaces && c.CI.UpdateGraph != UpdateGraphSemver {
			c.ReportCI(fmt.Sprintf("updateGraph %q: the community pipelines build replaces-mode and semver-mode graphs only, and fail any other", c.CI.UpdateGraph),
				"set updateGraph: replaces-mode or semver-mode")
			return
		}
		if c.CI.semverMode() {
			return // every bundle is replaced by the next version
		}
		names, by := channelMembers(c.Members)
		reported := map[*Member]bool{}
		for _, ch := range names {
			ms := by[ch]
			edges, head := upgradeEdges(ms), newest(ms)
			for _, m := range ms {
				if m == head || len(edges[m]) > 0 || reported[m] {
					continue
				}
				reported[m] = true
				c.Report(m, "metadata.name", fmt.Sprintf("%s is a dangling bundle in channel %s: no bundle of the channel replaces, skips or skip-ranges it, and it is not the channel's newest (%s)", m.Name, ch, head.Name),
					"make the next version replace "+m.Name)
			}
		}
	}
	RuleCommunityLoop.checkPackage = func(c *PackageContext) {
		if c.CI.semverMode() {
			return // versions only go up
		}
		names, by := channelMembers(c.Members)
		for _, ch := range names {
			if from, to := findLoop(by[ch], upgradeEdges(by[ch])); from != nil {
				c.Report(to, "spec.replaces", fmt.Sprintf("upgrade graph loop in channel %s: %s upgrades to %s, which leads back to it", ch, from.Name, to.Name),
					"make every edge go from an older version to a newer one")
			}
		}
	}
	RuleCommunitySkipRangePrune.checkPackage = func(c *PackageContext) {
		if c.CI.semverMode() {
			return // no replaces chain to cut
		}
		names, by := channelMembers(c.Members)
		reported := map[*Member]bool{}
		for _, ch := range names {
			for _, m := range by[ch] {
				if m.SkipRange == "" || m.Replaces != "" || reported[m] {
					continue
				}
				mv, err := semver.ParseTolerant(m.Version)
				if err != nil {
					continue
				}
				var older []string
				for _, o := range by[ch] {
					if v, err := semver.ParseTolerant(o.Version); err == nil && v.LT(mv) {
						older = append(older, o.Name)
					}
				}
				if len(older) == 0 {
					continue
				}
				reported[m] = true
				c.Report(m, `metadata.annotations["olm.skipRange"]`, fmt.Sprintf("%s has olm.skipRange %q but no spec.replaces, in channel %s with older bundles (%s): the replaces chain is cut here", m.Name, m.SkipRange, ch, strings.Join(older, ", ")),
					"also set spec.replaces to the previous version")
			}
		}
	}
}

// findLoop returns an edge that closes a loop in the graph, or nils.
func findLoop(ms []*Member, edges map[*Member][]*Member) (*Member, *Member) {
	const (
		unseen = iota
		open
		done
	)
	state := map[*Member]int{}
	var from, to *Member
	var visit func(m *Member) bool
	visit = func(m *Member) bool {
		state[m] = open
		for _, n := range edges[m] {
			if state[n] == open {
				from, to = m, n
				return true
			}
			if state[n] == unseen && visit(n) {
				return true
			}
		}
		state[m] = done
		return false
	}
	for _, m := range ms {
		if state[m] == unseen && visit(m) {
			return from, to
		}
	}
	return nil, nil
}
