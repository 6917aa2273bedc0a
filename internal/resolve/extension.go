package resolve

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/olmv1"
)

// Upgrade constraint policies of a ClusterExtension
// (spec.source.catalog.upgradeConstraintPolicy).
const (
	// PolicyCatalogProvided, the default, lets operator-controller move an
	// installed bundle only along the catalog's upgrade edges (replaces,
	// skips, skipRange) or keep it.
	PolicyCatalogProvided = "CatalogProvided"
	// PolicySelfCertified lets it install any bundle the filters leave,
	// edges or not (a downgrade included).
	PolicySelfCertified = "SelfCertified"
)

// CatalogNameLabel is the label catalogd puts on every ClusterCatalog,
// its name as value: the one label a selector can rely on.
const CatalogNameLabel = "olm.operatorframework.io/metadata.name"

// ClusterExtension is what operator-controller's resolver reads of a
// ClusterExtension: spec.source.catalog and status.install.bundle.
type ClusterExtension struct {
	// Name is metadata.name; it only names the extension in messages.
	Name string `json:"name,omitempty"`
	// PackageName is spec.source.catalog.packageName.
	PackageName string `json:"packageName"`
	// Version is spec.source.catalog.version: a version range in the
	// Masterminds syntax ("1.2.x", ">=1.0.0, <2.0.0 || 3.x", "~1.2",
	// "1.0.0 - 1.4.0"); "" for any version.
	Version string `json:"version,omitempty"`
	// Channels is spec.source.catalog.channels; none means every channel
	// (and bundles in no channel).
	Channels []string `json:"channels,omitempty"`
	// UpgradeConstraintPolicy is PolicyCatalogProvided ("" means it) or
	// PolicySelfCertified.
	UpgradeConstraintPolicy string `json:"upgradeConstraintPolicy,omitempty"`
	// Selector is spec.source.catalog.selector: which ClusterCatalogs to
	// use, by label; nil (or empty) for all of them. A Catalog carries one
	// label, CatalogNameLabel.
	Selector *LabelSelector `json:"selector,omitempty"`
	// Installed is status.install.bundle: the bundle installed now; nil
	// for a fresh install.
	Installed *InstalledBundle `json:"installed,omitempty"`
}

// LabelSelector is a Kubernetes label selector (metav1.LabelSelector's
// fields): every matchLabels pair and every expression must hold.
type LabelSelector struct {
	MatchLabels      map[string]string          `json:"matchLabels,omitempty"`
	MatchExpressions []LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// LabelSelectorRequirement is one expression of a LabelSelector: Operator
// In, NotIn (with Values), Exists or DoesNotExist (without).
type LabelSelectorRequirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// InstalledBundle is a ClusterExtension's status.install.bundle.
type InstalledBundle struct {
	Name string `json:"name"`
	// Version is the bundle's version as operator-controller recorded it
	// (a registry+v1 release in the build metadata: 1.0.0+2).
	Version string `json:"version"`
}

// ExtensionAnswer is the bundle operator-controller resolves a
// ClusterExtension to, or why none, and why every other bundle of the
// package in the catalogs selected was passed over.
type ExtensionAnswer struct {
	Package string `json:"package"`
	// Bundle is the bundle's name; nil when resolution fails.
	Bundle *string `json:"bundle"`
	// Version is the bundle's version as its olm.package property says.
	Version string `json:"version,omitempty"`
	// Catalog is the name of the ClusterCatalog it comes from.
	Catalog string `json:"catalog,omitempty"`
	// Deprecated is what operator-controller reports of the bundle (its
	// BundleDeprecated condition). It picks a deprecated bundle only when
	// every catalog's best is; it then reads the deprecations of the last
	// catalog (by name) that offered one, which may not be the bundle's own
	// (a Reason says so when the two disagree).
	Deprecated bool `json:"deprecated,omitempty"`
	// Error, when Bundle is nil, is operator-controller's resolution
	// error in its own words (as a ClusterExtension's Progressing
	// condition reports it): no bundle found, found in several catalogs of
	// the same priority, a range or selector that does not parse, the
	// bundle resolved declares dependencies (and, for an extension without
	// a package, which the API server refuses, that).
	Error string `json:"error,omitempty"`
	// Reasons say why this bundle, or why none, in words; they also name
	// what refuses the bundle at install (the alpha list --olmv1 checks).
	Reasons []string `json:"reasons"`
	// PassedOver lists the package's other bundles in the catalogs
	// selected, each with the first rule that dropped it, by catalog in
	// the order given, then by version, highest first.
	PassedOver []PassedOver `json:"passedOver"`
}

// Why a bundle was passed over (PassedOver.Rule).
const (
	// PassedChannel: in none of the channels the extension names.
	PassedChannel = "channel"
	// PassedVersionRange: its version is outside the extension's range
	// (or does not parse).
	PassedVersionRange = "version-range"
	// PassedNotSuccessor: not an upgrade edge's target from the installed
	// bundle, nor the installed version (CatalogProvided).
	PassedNotSuccessor = "not-successor"
	// PassedDeprecated: deprecated, ranked after the bundles that are not.
	PassedDeprecated = "deprecated"
	// PassedLowerVersion: a higher version of the same catalog won.
	PassedLowerVersion = "lower-version"
	// PassedCatalogPriority: its catalog's best lost to a catalog of
	// higher priority (or a non-deprecated candidate elsewhere).
	PassedCatalogPriority = "catalog-priority"
	// PassedAmbiguous: its catalog ties with another at the top priority,
	// so operator-controller picks neither.
	PassedAmbiguous = "ambiguous"
	// PassedNotInstallable: what operator-controller resolved to but
	// refuses: it declares a dependency.
	PassedNotInstallable = "not-installable"
)

// PassedOver is one bundle operator-controller did not pick.
type PassedOver struct {
	Bundle  string `json:"bundle"`
	Version string `json:"version,omitempty"`
	Catalog string `json:"catalog"`
	// Rule is one of the Passed* constants.
	Rule string `json:"rule"`
	// Reason says it in words.
	Reason string `json:"reason"`
}

// ResolveExtension answers which bundle operator-controller's catalog
// resolver installs for ext from catalogs (ClusterCatalogs, Priority as
// their spec.priority), and why the others were passed over. Failures of
// resolution (nothing found, a tie between catalogs) are answers, with
// Error and Reasons set; the error is for a context cancelled.
//
// The rules, as operator-controller applies them: the catalogs the
// selector picks are walked by name; in each, the package's bundles are
// filtered by channel (when the extension names channels), by version
// range, and, under CatalogProvided with a bundle installed, to the
// installed version itself and the bundles whose entry, in a channel
// considered, replaces or skips the installed bundle or whose skipRange
// covers its version. The catalog's best is its highest version among
// those not deprecated (deprecated ones only when all are). A catalog
// whose best is not deprecated beats every catalog whose best is; among
// the rest the highest priority wins, and a tie there is an error. The
// bundle picked must not declare a dependency.
func ResolveExtension(ctx context.Context, catalogs []Catalog, ext ClusterExtension) (ExtensionAnswer, error) {
	return resolveExtension(ctx, catalogs, ext, extOptions{})
}

// extOptions are what a caller resolving many times over the same
// catalogs (ExtensionSteps) asks of resolveExtension.
type extOptions struct {
	// views holds, by index into the catalogs, the package's view prepared
	// once (newExtPackageView); a nil entry (or none) is built per call.
	views []*extPackageView
	// pathOnly answers what an upgrade path reads (ExtensionSteps): the
	// bundle picked, or the error and its reasons, and PassedOver only
	// when the installed bundle is kept (the path says why it stays). A
	// step that moves stops at the best bundle left instead of reading
	// them all, so its Reasons leave out a tie with the next candidate;
	// no answer carries the alpha list --olmv1 checks of the bundle picked.
	pathOnly bool
}

func resolveExtension(ctx context.Context, catalogs []Catalog, ext ClusterExtension, opts extOptions) (ExtensionAnswer, error) {
	ans := ExtensionAnswer{Package: ext.PackageName, Reasons: []string{}, PassedOver: []PassedOver{}}
	fail := func(msg string, why ...string) (ExtensionAnswer, error) {
		ans.Error = msg
		ans.Reasons = append(ans.Reasons, why...)
		return ans, nil
	}
	if ext.PackageName == "" {
		// The API server refuses such an extension before any resolution.
		return fail("spec.source.catalog.packageName is required", "the ClusterExtension names no package (spec.source.catalog.packageName)")
	}
	sel, err := newExtCatalogSelector(ext.Selector)
	if err != nil {
		return fail("desired catalog selector is invalid: "+err.Error(),
			"spec.source.catalog.selector is not a valid label selector: "+err.Error())
	}
	var rng *extRange
	if ext.Version != "" {
		if rng, err = parseExtRange(ext.Version); err != nil {
			return fail(fmt.Sprintf("desired version range %q is invalid: %v", ext.Version, err),
				fmt.Sprintf("spec.source.catalog.version %q is not a version range operator-controller reads (%v)", ext.Version, err))
		}
	}
	upgrade := ext.Installed != nil && ext.UpgradeConstraintPolicy != PolicySelfCertified

	// The API server lists ClusterCatalogs by name.
	order := make([]int, len(catalogs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return catalogs[order[a]].Name < catalogs[order[b]].Name })

	type found struct {
		cand       extCandidate
		catalog    string
		priority   int
		deprecated bool
		view       *extPackageView
	}
	var picked []found
	var views []*extPackageView
	// lastView is the last catalog walked whose best was kept: whose
	// deprecations operator-controller reports for the bundle it picks.
	var lastView *extPackageView
	for _, i := range order {
		if err := ctx.Err(); err != nil {
			return ans, err
		}
		cat := catalogs[i]
		if !sel.matches(cat.Name) {
			ans.Reasons = append(ans.Reasons, fmt.Sprintf("catalog %s is not selected by spec.source.catalog.selector", cat.Name))
			continue
		}
		var pv *extPackageView
		if i < len(opts.views) && opts.views[i] != nil {
			pv = opts.views[i].fresh()
		} else {
			pv = newExtPackageView(cat, ext.PackageName)
		}
		if pv.empty {
			ans.Reasons = append(ans.Reasons, fmt.Sprintf("catalog %s does not have package %s", cat.Name, ext.PackageName))
			continue
		}
		if pv.depErr != nil {
			// operator-controller fails to load the package, and with it
			// the whole resolution.
			return fail(fmt.Sprintf("error walking catalogs: error getting package %q from catalog %q: error loading package %q: parse deprecation: %v", ext.PackageName, cat.Name, ext.PackageName, pv.depErr),
				fmt.Sprintf("catalog %s: the olm.deprecations blob of package %s does not parse (%v); operator-controller cannot load the package", cat.Name, ext.PackageName, pv.depErr))
		}
		views = append(views, pv)
		var succ *extSuccessorRule
		if upgrade {
			if succ, err = newExtSuccessorRule(*ext.Installed, pv.channelsConsidered(ext.Channels), pv.idx); err != nil {
				return fail("error walking catalogs: error finding upgrade edges: "+err.Error(),
					fmt.Sprintf("the installed bundle's version %q (status.install.bundle.version) is not semver: %v", ext.Installed.Version, err))
			}
		}
		pv.filter(ext, rng, succ, opts.pathOnly)
		if opts.pathOnly && len(pv.cands) > 0 && ext.Installed != nil && pv.cands[0].bundle.Name == ext.Installed.Name {
			// The installed bundle is kept: the path says why from what
			// was passed over, so every candidate is wanted.
			pv.filter(ext, rng, succ, false)
		}
		if len(pv.cands) == 0 {
			continue
		}
		top := *pv.cands[0]
		_, dep := pv.deprecated[top.bundle.Name]
		if len(picked) > 0 {
			prior := picked[len(picked)-1].deprecated
			if dep && !prior {
				pv.lostTo = "deprecated"
				continue
			}
			if !dep && prior {
				for _, f := range picked {
					f.view.lostTo = "deprecated"
				}
				picked = nil
			}
		}
		picked = append(picked, found{cand: top, catalog: cat.Name, priority: cat.Priority, deprecated: dep, view: pv})
		lastView = pv
	}

	if len(picked) > 1 {
		sort.SliceStable(picked, func(a, b int) bool { return picked[a].priority > picked[b].priority })
		if picked[0].priority != picked[1].priority {
			for _, f := range picked[1:] {
				f.view.lostTo = fmt.Sprintf("priority:%s:%d", picked[0].catalog, picked[0].priority)
			}
			picked = picked[:1]
		}
	}
	var winner *found
	if len(picked) == 1 {
		winner = &picked[0]
	} else {
		// operator-controller names every catalog left in its message,
		// those below the shared top priority too; their bundles lost on
		// priority.
		for _, f := range picked {
			f.view.lostTo = "ambiguous"
			if f.priority < picked[0].priority {
				f.view.lostTo = fmt.Sprintf("priority:%s:%d", picked[0].catalog, picked[0].priority)
			}
		}
	}
	// A path reads what was passed over only to say why it stays.
	stays := winner != nil && ext.Installed != nil && winner.cand.bundle.Name == ext.Installed.Name
	for _, pv := range views {
		if opts.pathOnly && !stays {
			break
		}
		ans.PassedOver = append(ans.PassedOver, pv.passedOver(winner != nil && winner.view == pv)...)
	}

	if winner == nil {
		names := make([]string, 0, len(picked))
		for _, f := range picked {
			names = append(names, f.catalog)
		}
		sort.Strings(names)
		var b strings.Builder
		if ext.Installed != nil {
			fmt.Fprintf(&b, "error upgrading from currently installed version %q: ", ext.Installed.Version)
		}
		if len(picked) > 1 {
			fmt.Fprintf(&b, "found bundles for package %q ", ext.PackageName)
		} else {
			fmt.Fprintf(&b, "no bundles found for package %q ", ext.PackageName)
		}
		if ext.Version != "" {
			fmt.Fprintf(&b, "matching version %q ", ext.Version)
		}
		if len(ext.Channels) > 0 {
			fmt.Fprintf(&b, "in channels %v ", ext.Channels)
		}
		if len(names) > 1 {
			fmt.Fprintf(&b, "in multiple catalogs with the same priority %v ", names)
		}
		if len(picked) > 1 {
			return fail(strings.TrimSpace(b.String()), fmt.Sprintf("catalogs %s all offer a bundle of %s and the highest priority among them (%d) is shared, so operator-controller picks none: give one catalog a higher spec.priority or narrow spec.source.catalog.selector",
				strings.Join(names, ", "), ext.PackageName, picked[0].priority))
		}
		return fail(strings.TrimSpace(b.String()), extNoneWhy(ext, views)...)
	}

	b := winner.cand.bundle
	if winner.cand.vrErr != nil {
		return fail(fmt.Sprintf("error getting resolved bundle version for bundle %q: %v", b.Name, winner.cand.vrErr),
			fmt.Sprintf("bundle %s has no version operator-controller can read: %v", b.Name, winner.cand.vrErr))
	}
	for _, p := range b.Properties {
		switch p.Type {
		case fbc.PropertyPackageRequired, fbc.PropertyGVKRequired, fbc.PropertyConstraint:
			ans.PassedOver = append([]PassedOver{{Bundle: b.Name, Version: winner.cand.version, Catalog: winner.catalog, Rule: PassedNotInstallable,
				Reason: fmt.Sprintf("picked, then refused: it declares a dependency (%s), which operator-controller does not resolve", p.Type)}}, ans.PassedOver...)
			return fail(fmt.Sprintf("validating bundle %q: bundle %q has a dependency declared via property %q which is currently not supported", b.Name, b.Name, p.Type),
				fmt.Sprintf("%s %s from catalog %s is the bundle operator-controller resolves to, and it declares a dependency (%s): operator-controller does not resolve dependencies and refuses it rather than try the next bundle; narrow spec.source.catalog.version to leave it out", b.Name, winner.cand.version, winner.catalog, p.Type))
		}
	}
	name := b.Name
	ans.Bundle = &name
	if cs := winner.view.cands; len(cs) > 1 && winner.view.rankBefore(cs[0], cs[1]) == winner.view.rankBefore(cs[1], cs[0]) {
		ans.Reasons = append(ans.Reasons, fmt.Sprintf("%s and %s of catalog %s rank the same (same version and release): operator-controller loads a package's bundles concurrently and may take either; opm takes the first by name", cs[0].bundle.Name, cs[1].bundle.Name, winner.catalog))
	}
	ans.Version = winner.cand.version
	ans.Catalog = winner.catalog
	_, ans.Deprecated = lastView.deprecated[b.Name]
	if ans.Deprecated != winner.deprecated {
		if winner.deprecated {
			ans.Reasons = append(ans.Reasons, fmt.Sprintf("%s is deprecated in catalog %s, but operator-controller reads the deprecations of catalog %s (the last catalog it walked that offered a bundle) and reports it as not deprecated", b.Name, winner.catalog, lastView.catalog))
		} else {
			ans.Reasons = append(ans.Reasons, fmt.Sprintf("%s is not deprecated in catalog %s, but operator-controller reads the deprecations of catalog %s (the last catalog it walked that offered a bundle), which name it, and reports it as deprecated", b.Name, winner.catalog, lastView.catalog))
		}
	}
	ans.Reasons = append(ans.Reasons, extPickWhy(ext, &winner.cand, winner.catalog, winner.deprecated, len(views), winner.view)...)
	if opts.pathOnly {
		return ans, nil
	}
	// What refuses the bundle once resolved: the alpha list --olmv1 checks.
	vs, err := olmv1.Judge(ctx, &fbc.Catalog{Bundles: []fbc.Bundle{*b}}, olmv1.Options{})
	if err != nil {
		if ctx.Err() != nil {
			return ans, ctx.Err()
		}
		ans.Reasons = append(ans.Reasons, fmt.Sprintf("whether operator-controller installs it is not known: %v", err))
	}
	for _, v := range vs {
		for _, r := range v.Reasons {
			switch r.Severity {
			case "error":
				ans.Reasons = append(ans.Reasons, fmt.Sprintf("operator-controller will refuse to install it: %s (%s)", r.Message, r.Rule))
			default:
				ans.Reasons = append(ans.Reasons, fmt.Sprintf("at install (%s): %s (%s)", r.Severity, r.Message, r.Rule))
			}
		}
	}
	return ans, nil
}

// extVersionRelease is a bundle's version as operator-controller orders
// them: the semver version, then the release a registry+v1 bundle keeps
// in its build metadata (1.0.0+2: release 2), any release above none.
type extVersionRelease struct {
	version semver.Version
	release []semver.PRVersion
}

// extMaxReleaseLen is the longest release operator-controller reads.
const extMaxReleaseLen = 20

// extLegacyVersionRelease reads a registry+v1 version: build metadata that
// reads as a release (dot-separated pre-release identifiers, at most 20
// characters) is the release and leaves the version; other build metadata
// stays in the version.
func extLegacyVersionRelease(s string) (extVersionRelease, error) {
	v, err := semver.Parse(s)
	if err != nil {
		return extVersionRelease{}, err
	}
	vr := extVersionRelease{version: v}
	build := strings.Join(v.Build, ".")
	if build == "" || len(build) > extMaxReleaseLen {
		return vr, nil
	}
	var rel []semver.PRVersion
	for _, seg := range strings.Split(build, ".") {
		p, err := semver.NewPRVersion(seg)
		if err != nil {
			return vr, nil
		}
		rel = append(rel, p)
	}
	vr.release = rel
	vr.version.Build = nil
	return vr, nil
}

func (a extVersionRelease) compare(b extVersionRelease) int {
	if c := a.version.Compare(b.version); c != 0 {
		return c
	}
	switch {
	case len(a.release) == 0 && len(b.release) == 0:
		return 0
	case len(a.release) == 0:
		return -1
	case len(b.release) == 0:
		return 1
	}
	return semver.Version{Pre: a.release}.Compare(semver.Version{Pre: b.release})
}

// extBundleVersion reads a bundle's version the way operator-controller
// does: from its first olm.package property.
func extBundleVersion(b *fbc.Bundle) (string, extVersionRelease, error) {
	for _, p := range b.Properties {
		if p.Type != fbc.PropertyPackage {
			continue
		}
		// Named and shaped as the property type operator-controller reads
		// it into, so that a value of the wrong type is reported alike.
		type Package struct {
			PackageName string `json:"packageName"`
			Version     string `json:"version"`
			Release     string `json:"release"`
		}
		var v Package
		if err := json.Unmarshal(p.Value, &v); err != nil {
			return "", extVersionRelease{}, fmt.Errorf("error unmarshalling package property: %w", err)
		}
		vr, err := extLegacyVersionRelease(v.Version)
		return v.Version, vr, err
	}
	return "", extVersionRelease{}, fmt.Errorf("no package property found in bundle %q", b.Name)
}
