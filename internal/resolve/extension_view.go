package resolve

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
)

// extPackageView is one package of one catalog as operator-controller's
// catalog cache holds it: the catalog split by package, one blob per
// schema and name (the last one given wins), bundles in the order of their
// file names in that cache (name + ".json").
type extPackageView struct {
	catalog  string
	priority int
	pkg      string
	empty    bool
	bundles  []*fbc.Bundle
	channels []*fbc.Channel
	// deprecated maps deprecated bundles to their message; pkgDeprecated
	// and chanDeprecated hold the package's and channels' (reasons only:
	// operator-controller ranks bundles by their own deprecation alone).
	deprecated     map[string]string
	pkgDeprecated  string
	chanDeprecated map[string]string
	depErr         error
	// idx is what every resolution over the package reads, prepared once
	// (ExtensionSteps shares it across the steps of a walk).
	idx *extPackageIndex

	// After filter: every bundle's version, the candidates by rank, and
	// why the others were dropped.
	info    map[string]*extCandidate
	cands   []*extCandidate
	dropped map[string]PassedOver
	// dropCounts counts the bundles dropped by rule; dropped holds their
	// reasons too, unless the resolution is for a path (extOptions.pathOnly).
	dropCounts map[string]int
	// lostTo says why the catalog's best was not picked: "deprecated",
	// "priority:CATALOG:PRIORITY" or "ambiguous".
	lostTo string
}

// extCandidate is a bundle with its version as operator-controller reads it.
type extCandidate struct {
	bundle  *fbc.Bundle
	version string
	vr      extVersionRelease
	vrErr   error
}

func newExtPackageView(cat Catalog, pkg string) *extPackageView {
	pv := &extPackageView{catalog: cat.Name, priority: cat.Priority, pkg: pkg, empty: true,
		deprecated: map[string]string{}, chanDeprecated: map[string]string{}}
	c := cat.Catalog
	if c == nil {
		return pv
	}
	for _, p := range c.Packages {
		if p.Name == pkg {
			pv.empty = false
		}
	}
	pv.bundles = lastOfEachName(c.Bundles, func(b *fbc.Bundle) (string, bool) { return b.Name, b.Package == pkg })
	sort.SliceStable(pv.bundles, func(i, j int) bool { return pv.bundles[i].Name+".json" < pv.bundles[j].Name+".json" })
	pv.channels = lastOfEachName(c.Channels, func(ch *fbc.Channel) (string, bool) { return ch.Name, ch.Package == pkg })
	if len(pv.bundles) > 0 || len(pv.channels) > 0 {
		pv.empty = false
	}
	var dep *fbc.Meta
	for i := range c.Others {
		m := &c.Others[i]
		if m.Package != pkg {
			continue
		}
		pv.empty = false
		if m.Schema == fbc.SchemaDeprecations {
			dep = m
		}
	}
	if dep != nil {
		var d struct {
			Entries []struct {
				Reference struct {
					Schema string `json:"schema"`
					Name   string `json:"name"`
				} `json:"reference"`
				Message string `json:"message"`
			} `json:"entries"`
		}
		if err := json.Unmarshal(dep.Blob, &d); err != nil {
			pv.depErr = err
		}
		for _, e := range d.Entries {
			switch e.Reference.Schema {
			case fbc.SchemaBundle:
				pv.deprecated[e.Reference.Name] = e.Message
			case fbc.SchemaChannel:
				pv.chanDeprecated[e.Reference.Name] = e.Message
			case fbc.SchemaPackage:
				pv.pkgDeprecated = e.Message
				if pv.pkgDeprecated == "" {
					pv.pkgDeprecated = "deprecated"
				}
			}
		}
	}
	pv.idx = newExtPackageIndex(pv)
	return pv
}

// fresh is the view again, without any resolution's state: the package
// and its index are shared, not copied.
func (pv *extPackageView) fresh() *extPackageView {
	return &extPackageView{catalog: pv.catalog, priority: pv.priority, pkg: pv.pkg, empty: pv.empty,
		bundles: pv.bundles, channels: pv.channels, deprecated: pv.deprecated, pkgDeprecated: pv.pkgDeprecated,
		chanDeprecated: pv.chanDeprecated, depErr: pv.depErr, idx: pv.idx}
}

// channelsConsidered are the channels the extension names (all when
// none) that the package has.
func (pv *extPackageView) channelsConsidered(names []string) []*fbc.Channel {
	if len(names) == 0 {
		return pv.channels
	}
	var out []*fbc.Channel
	for _, ch := range pv.channels {
		if extHasString(names, ch.Name) {
			out = append(out, ch)
		}
	}
	return out
}

func extHasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// inChannels says whether a bundle is an entry of one of chans.
func (pv *extPackageView) inChannels(name string, chans []*fbc.Channel) bool {
	for _, ref := range pv.idx.entries[name] {
		pv.idx.visit(1)
		for _, ch := range chans {
			if ref.ch == ch {
				return true
			}
		}
	}
	return false
}

// filter applies the extension's channels, range and successor rule,
// then ranks what is left: not deprecated first, then by version and
// release, highest first (bundles whose version does not read last).
// The package's bundles are walked in that order already (idx.ranked),
// so what is left needs no sort. A path (pathOnly) needs only the best:
// then the walk stops at the first bundle left, and the bundles dropped
// are only counted (every one of them when none is left).
func (pv *extPackageView) filter(ext ClusterExtension, rng *extRange, succ *extSuccessorRule, pathOnly bool) {
	reasons := !pathOnly
	// Every bundle's version is read once per package, not per resolution.
	pv.info = pv.idx.info
	pv.dropped = map[string]PassedOver{}
	pv.dropCounts = map[string]int{}
	pv.cands = nil
	chans := pv.channelsConsidered(ext.Channels)
	for _, cd := range pv.idx.ranked {
		pv.idx.visit(1)
		b := cd.bundle
		drop := func(rule string, reason func() string) {
			pv.dropCounts[rule]++
			if reasons {
				pv.dropped[b.Name] = PassedOver{Bundle: b.Name, Version: cd.version, Catalog: pv.catalog, Rule: rule, Reason: reason()}
			}
		}
		switch {
		case len(ext.Channels) > 0 && !pv.inChannels(b.Name, chans):
			drop(PassedChannel, func() string {
				return fmt.Sprintf("in none of the channels asked for (%s); it is in %s", strings.Join(ext.Channels, ", "), extOrNoChannel(pv.channelsOf(b.Name)))
			})
		case rng != nil && cd.vrErr != nil:
			drop(PassedVersionRange, func() string { return fmt.Sprintf("its version cannot be read (%v), so no range admits it", cd.vrErr) })
		case rng != nil && !rng.contains(rangeFromSemver(cd.vr.version)):
			drop(PassedVersionRange, func() string { return fmt.Sprintf("version %s is outside the range %q", cd.version, ext.Version) })
		case succ != nil && !succ.admits(cd):
			drop(PassedNotSuccessor, succ.whyNot)
		default:
			pv.cands = append(pv.cands, cd)
			if pathOnly {
				return
			}
		}
	}
}

// rankBefore is operator-controller's order of one catalog's candidates.
func (pv *extPackageView) rankBefore(a, b *extCandidate) bool {
	_, da := pv.deprecated[a.bundle.Name]
	_, db := pv.deprecated[b.bundle.Name]
	if da != db {
		return !da
	}
	if (a.vrErr == nil) != (b.vrErr == nil) {
		return a.vrErr == nil
	}
	if a.vrErr != nil {
		return false
	}
	return a.vr.compare(b.vr) > 0
}

func (pv *extPackageView) channelsOf(name string) []string {
	var out []string
	for _, ref := range pv.idx.entries[name] {
		pv.idx.visit(1)
		if !extHasString(out, ref.ch.Name) {
			out = append(out, ref.ch.Name)
		}
	}
	sort.Strings(out)
	return out
}

func extOrNoChannel(list []string) string {
	if len(list) == 0 {
		return "no channel"
	}
	return strings.Join(list, ", ")
}

// passedOver says, for every bundle of the view but the one picked, why
// it was not: highest version first (idx.listed's order).
func (pv *extPackageView) passedOver(won bool) []PassedOver {
	var top *extCandidate
	if len(pv.cands) > 0 {
		top = pv.cands[0]
	}
	inCands := make(map[*extCandidate]bool, len(pv.cands))
	for _, cd := range pv.cands {
		inCands[cd] = true
	}
	var out []PassedOver
	for _, cd := range pv.idx.listed {
		pv.idx.visit(1)
		if !inCands[cd] {
			if po, ok := pv.dropped[cd.bundle.Name]; ok {
				out = append(out, po)
			}
			continue
		}
		if cd == top {
			if won {
				continue
			}
			po := PassedOver{Bundle: cd.bundle.Name, Version: cd.version, Catalog: pv.catalog}
			switch {
			case pv.lostTo == "deprecated":
				po.Rule, po.Reason = PassedDeprecated, "the best this catalog offers, but deprecated, and another catalog offers one that is not"
			case strings.HasPrefix(pv.lostTo, "priority:"):
				parts := strings.SplitN(pv.lostTo, ":", 3)
				po.Rule, po.Reason = PassedCatalogPriority, fmt.Sprintf("the best this catalog (priority %d) offers, but catalog %s has a higher priority (%s)", pv.priority, parts[1], parts[2])
			default:
				po.Rule, po.Reason = PassedAmbiguous, fmt.Sprintf("the best this catalog offers, but another catalog at the same priority (%d) offers one too", pv.priority)
			}
			out = append(out, po)
			continue
		}
		po := PassedOver{Bundle: cd.bundle.Name, Version: cd.version, Catalog: pv.catalog}
		_, dep := pv.deprecated[cd.bundle.Name]
		_, topDep := pv.deprecated[top.bundle.Name]
		if dep && !topDep {
			po.Rule, po.Reason = PassedDeprecated, fmt.Sprintf("deprecated, so ranked after %s, which is not", top.bundle.Name)
		} else {
			po.Rule, po.Reason = PassedLowerVersion, fmt.Sprintf("%s (%s) ranks higher in this catalog", top.bundle.Name, top.version)
			if cd.vrErr == nil && top.vrErr == nil && cd.vr.compare(top.vr) == 0 {
				po.Reason = fmt.Sprintf("same version and release as %s; operator-controller takes either (the order it reads the catalog in decides)", top.bundle.Name)
			}
		}
		out = append(out, po)
	}
	return out
}

// extSuccessorRule is CatalogProvided's filter when a bundle is installed:
// the installed version itself, or a bundle whose entry in a channel
// considered replaces or skips the installed bundle's name, or whose
// skipRange covers its version.
type extSuccessorRule struct {
	installed InstalledBundle
	version   semver.Version
	vr        extVersionRelease
	channels  []*fbc.Channel
	idx       *extPackageIndex
	// why is whyNot's answer, the same for every bundle: worded once.
	why string
}

func newExtSuccessorRule(inst InstalledBundle, channels []*fbc.Channel, idx *extPackageIndex) (*extSuccessorRule, error) {
	vr, err := extLegacyVersionRelease(inst.Version)
	if err != nil {
		return nil, fmt.Errorf("failed to get version and release of installed bundle: %w", err)
	}
	v, err := semver.Parse(inst.Version)
	if err != nil {
		return nil, fmt.Errorf("getting successorsPredicate: error parsing installed bundle version: %w", err)
	}
	return &extSuccessorRule{installed: inst, version: v, vr: vr, channels: channels, idx: idx}, nil
}

// leads says whether the entry leads from the installed bundle: it
// replaces or skips it, or its skipRange covers its version.
func (s *extSuccessorRule) leads(e *fbc.ChannelEntry) bool {
	if e.Replaces == s.installed.Name || extHasString(e.Skips, s.installed.Name) {
		return true
	}
	if e.SkipRange == "" {
		return false
	}
	r := s.idx.ranges[e.SkipRange]
	return r != nil && r(s.version)
}

// admits says whether cd passes the rule: one of its entries in a channel
// considered leads from the installed bundle, or its version is the
// installed one. Only cd's own entries are read (the index by name), so
// a resolution reads each entry once.
func (s *extSuccessorRule) admits(cd *extCandidate) bool {
	for _, ref := range s.idx.entries[cd.bundle.Name] {
		s.idx.visit(1)
		if s.considers(ref.ch) && s.leads(ref.e) {
			return true
		}
	}
	return cd.vrErr == nil && cd.vr.compare(s.vr) == 0
}

// considers says whether ch is one of the channels considered.
func (s *extSuccessorRule) considers(ch *fbc.Channel) bool {
	for _, c := range s.channels {
		if c == ch {
			return true
		}
	}
	return false
}

func (s *extSuccessorRule) whyNot() string {
	if s.why != "" {
		return s.why
	}
	var names []string
	for _, ch := range s.channels {
		names = append(names, ch.Name)
	}
	where := "channels " + strings.Join(names, ", ")
	if len(names) == 0 {
		where = "no channel considered"
	}
	s.why = fmt.Sprintf("not an upgrade from the installed %s %s: none of its entries (in %s) replaces or skips %s or has a skipRange covering %s, and its version is not the installed one (CatalogProvided; SelfCertified would allow it)",
		s.installed.Name, s.installed.Version, where, s.installed.Name, s.installed.Version)
	return s.why
}

// extNoneWhy explains "no bundles found": per catalog, what left nothing.
func extNoneWhy(ext ClusterExtension, views []*extPackageView) []string {
	if len(views) == 0 {
		return []string{fmt.Sprintf("no catalog selected has package %s", ext.PackageName)}
	}
	var out []string
	for _, pv := range views {
		counts := pv.dropCounts
		if len(pv.bundles) == 0 {
			out = append(out, fmt.Sprintf("catalog %s has package %s but no bundle of it", pv.catalog, ext.PackageName))
			continue
		}
		var parts []string
		for _, r := range []struct{ rule, what string }{
			{PassedChannel, "in none of the channels asked for"},
			{PassedVersionRange, "outside the version range"},
			{PassedNotSuccessor, "not an upgrade from the installed bundle"},
		} {
			if n := counts[r.rule]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, r.what))
			}
		}
		out = append(out, fmt.Sprintf("catalog %s: none of the %d bundles of %s is left: %s", pv.catalog, len(pv.bundles), ext.PackageName, strings.Join(parts, ", ")))
	}
	return out
}

// extPickWhy says why the bundle picked won.
func extPickWhy(ext ClusterExtension, cd *extCandidate, catalog string, deprecated bool, nviews int, pv *extPackageView) []string {
	var filters []string
	if len(ext.Channels) > 0 {
		filters = append(filters, "channels "+strings.Join(ext.Channels, ", "))
	}
	if ext.Version != "" {
		filters = append(filters, fmt.Sprintf("version range %q", ext.Version))
	}
	if ext.Installed != nil {
		if ext.UpgradeConstraintPolicy == PolicySelfCertified {
			filters = append(filters, fmt.Sprintf("any bundle may replace the installed %s, as SelfCertified allows", ext.Installed.Name))
		} else {
			filters = append(filters, fmt.Sprintf("the installed version %s and the bundles that upgrade from %s, as CatalogProvided allows", ext.Installed.Version, ext.Installed.Name))
		}
	}
	if len(filters) > 0 {
		filters[0] = " (" + filters[0]
		filters[len(filters)-1] += ")"
	}
	what := "the highest version"
	if deprecated {
		what = "the highest version, deprecated (every candidate is)"
	} else if len(pv.deprecated) > 0 {
		what = "the highest version not deprecated"
	}
	out := []string{fmt.Sprintf("%s %s from catalog %s: %s of package %s%s", cd.bundle.Name, cd.version, catalog, what, ext.PackageName, strings.Join(filters, "; "))}
	if ext.Installed != nil && ext.UpgradeConstraintPolicy != PolicySelfCertified {
		if cd.bundle.Name == ext.Installed.Name || (cd.vrErr == nil && ext.Installed != nil && cd.version == ext.Installed.Version) {
			out = append(out, "no upgrade: the installed version is the best the rules allow")
		}
	}
	if nviews > 1 {
		out = append(out, fmt.Sprintf("catalog %s (priority %d) wins over the other catalogs that have the package", catalog, pv.priority))
	}
	if deprecated {
		out = append(out, fmt.Sprintf("%s is deprecated: %s", cd.bundle.Name, pv.deprecated[cd.bundle.Name]))
	}
	if pv.pkgDeprecated != "" {
		out = append(out, fmt.Sprintf("package %s is deprecated: %s", ext.PackageName, pv.pkgDeprecated))
	}
	for _, ch := range pv.channelsOf(cd.bundle.Name) {
		if msg, ok := pv.chanDeprecated[ch]; ok && (len(ext.Channels) == 0 || extHasString(ext.Channels, ch)) {
			out = append(out, fmt.Sprintf("channel %s is deprecated: %s", ch, msg))
		}
	}
	return out
}

// extCatalogSelector is a ClusterExtension's catalog selector over the one
// label a ClusterCatalog is known to carry (CatalogNameLabel).
type extCatalogSelector struct {
	sel *LabelSelector
}

func newExtCatalogSelector(sel *LabelSelector) (extCatalogSelector, error) {
	if sel == nil {
		return extCatalogSelector{}, nil
	}
	for k, v := range sel.MatchLabels {
		if err := checkSelectorKey(k); err != nil {
			return extCatalogSelector{}, fmt.Errorf("matchLabels key %q: %w", k, err)
		}
		if err := checkSelectorValue(v); err != nil {
			return extCatalogSelector{}, fmt.Errorf("matchLabels %s value %q: %w", k, v, err)
		}
	}
	for i, e := range sel.MatchExpressions {
		if err := checkSelectorKey(e.Key); err != nil {
			return extCatalogSelector{}, fmt.Errorf("matchExpressions[%d] key %q: %w", i, e.Key, err)
		}
		switch e.Operator {
		case "In", "NotIn":
			if len(e.Values) == 0 {
				return extCatalogSelector{}, fmt.Errorf("matchExpressions[%d]: values set can't be empty for operator %s", i, e.Operator)
			}
		case "Exists", "DoesNotExist":
			if len(e.Values) > 0 {
				return extCatalogSelector{}, fmt.Errorf("matchExpressions[%d]: values set must be empty for operator %s", i, e.Operator)
			}
		default:
			return extCatalogSelector{}, fmt.Errorf("matchExpressions[%d]: %q is not a valid label selector operator (In, NotIn, Exists, DoesNotExist)", i, e.Operator)
		}
		for _, v := range e.Values {
			if err := checkSelectorValue(v); err != nil {
				return extCatalogSelector{}, fmt.Errorf("matchExpressions[%d] value %q: %w", i, v, err)
			}
		}
	}
	return extCatalogSelector{sel: sel}, nil
}

func (s extCatalogSelector) matches(catalog string) bool {
	if s.sel == nil {
		return true
	}
	labels := map[string]string{CatalogNameLabel: catalog}
	for k, v := range s.sel.MatchLabels {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	for _, e := range s.sel.MatchExpressions {
		got, ok := labels[e.Key]
		switch e.Operator {
		case "In":
			if !ok || !extHasString(e.Values, got) {
				return false
			}
		case "NotIn":
			if ok && extHasString(e.Values, got) {
				return false
			}
		case "Exists":
			if !ok {
				return false
			}
		case "DoesNotExist":
			if ok {
				return false
			}
		}
	}
	return true
}

// checkSelectorKey checks a label key: an optional DNS subdomain prefix and
// "/", then a name of at most 63 characters.
func checkSelectorKey(k string) error {
	name := k
	if i := strings.LastIndexByte(k, '/'); i >= 0 {
		prefix := k[:i]
		name = k[i+1:]
		if prefix == "" || len(prefix) > 253 || !labelDNSSubdomain(prefix) {
			return fmt.Errorf("prefix %q must be a DNS subdomain", prefix)
		}
	}
	if name == "" || len(name) > 63 || !labelNameOK(name) {
		return fmt.Errorf("name part must be 1-63 alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric one")
	}
	return nil
}

func checkSelectorValue(v string) error {
	if v == "" {
		return nil
	}
	if len(v) > 63 || !labelNameOK(v) {
		return fmt.Errorf("a label value must be at most 63 alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric one")
	}
	return nil
}

func labelAlnum(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

func labelNameOK(s string) bool {
	if s == "" || !labelAlnum(s[0]) || !labelAlnum(s[len(s)-1]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !labelAlnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.' {
			return false
		}
	}
	return true
}

func labelDNSSubdomain(s string) bool {
	for _, part := range strings.Split(s, ".") {
		if part == "" || len(part) > 63 {
			return false
		}
		for i := 0; i < len(part); i++ {
			c := part[i]
			if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
				return false
			}
		}
		if part[0] == '-' || part[len(part)-1] == '-' {
			return false
		}
	}
	return true
}

// lastOfEachName is every element of all that keep takes, once per name,
// in the order of first appearance, a name met again taking the later
// element's place (as a catalog's later blob replaces an earlier one).
func lastOfEachName[T any](all []T, keep func(*T) (name string, ok bool)) []*T {
	var out []*T
	at := map[string]int{}
	for i := range all {
		name, ok := keep(&all[i])
		if !ok {
			continue
		}
		if j, seen := at[name]; seen {
			out[j] = &all[i]
			continue
		}
		at[name] = len(out)
		out = append(out, &all[i])
	}
	return out
}
