package resolve

import (
	"context"
	"errors"
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
	// Deprecated says the bundle is deprecated (operator-controller picks
	// a deprecated bundle only when every candidate is).
	Deprecated bool `json:"deprecated,omitempty"`
	// Error, when Bundle is nil, is operator-controller's resolution
	// error in its own words (as a ClusterExtension's Progressing
	// condition reports it): no bundle found, found in several catalogs of
	// the same priority, a range or selector that does not parse, the
	// bundle resolved declares dependencies.
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

// ParseClusterExtension reads ClusterExtensions from YAML or JSON: one
// object, a List (kind ClusterExtensionList or List), or several YAML
// documents. An object that is not a ClusterExtension, or whose fields
// the API server would refuse, is an error naming the document and the
// field.
func ParseClusterExtension(data []byte) ([]ClusterExtension, error) {
	return nil, errors.New("not implemented")
}

// ResolveExtension answers which bundle operator-controller's catalog
// resolver installs for ext from catalogs (ClusterCatalogs, Priority as
// their spec.priority), and why the others were passed over. Failures of
// resolution (nothing found, a tie between catalogs) are answers, with
// Error and Reasons set; the error is for a context cancelled or catalog
// content that cannot be read.
func ResolveExtension(ctx context.Context, catalogs []Catalog, ext ClusterExtension) (ExtensionAnswer, error) {
	return ExtensionAnswer{}, errors.New("not implemented")
}
