// Package resolve answers what OLM will install or upgrade to, dependencies
// included: OLM v0's rules for Subscriptions (this file's Resolve) and
// operator-controller's for ClusterExtensions (ResolveExtension).
package resolve

import (
	"github.com/opmkit/opm/internal/fbc"
)

// Catalog is one catalog as a cluster sees it: a CatalogSource (OLM v0) or
// a ClusterCatalog (OLM v1) with its priority.
type Catalog struct {
	// Name is the CatalogSource's (or ClusterCatalog's) name.
	Name string `json:"name"`
	// Namespace is the CatalogSource's namespace; "" is the global catalog
	// namespace (GlobalNamespace). OLM v1 ignores it.
	Namespace string `json:"namespace,omitempty"`
	// Priority is spec.priority: higher is preferred.
	Priority int `json:"priority,omitempty"`
	// Catalog is its content.
	Catalog *fbc.Catalog `json:"-"`
}

// GlobalNamespace is where CatalogSources every namespace may use live
// when a Catalog names none (OpenShift's openshift-marketplace; upstream
// OLM's is olm).
const GlobalNamespace = "openshift-marketplace"

// Subscription is an OLM v0 Subscription: spec.name, spec.channel (""
// for the package's default channel), spec.startingCSV and the
// CatalogSource it names (spec.source, spec.sourceNamespace; "" for the
// first catalog given that has the package).
type Subscription struct {
	Name             string `json:"name,omitempty"`
	Package          string `json:"package"`
	Channel          string `json:"channel,omitempty"`
	StartingCSV      string `json:"startingCSV,omitempty"`
	Catalog          string `json:"catalog,omitempty"`
	CatalogNamespace string `json:"catalogNamespace,omitempty"`
	// InstalledCSV is status.installedCSV: the CSV this Subscription
	// installed, "" for a fresh one.
	InstalledCSV string `json:"installedCSV,omitempty"`
}

// Installed is a ClusterServiceVersion present in the namespace. Package
// may be "" when only the CSV name is known (looked up in the catalogs).
// A CSV that a Subscription's InstalledCSV names is that Subscription's;
// others only provide their APIs.
type Installed struct {
	Package string `json:"package,omitempty"`
	CSV     string `json:"csv"`
	// Provided are the GVKs the CSV owns (group/version/kind), as read
	// from a CSV file; empty when the catalogs' bundle of that name says.
	Provided []GVK `json:"provided,omitempty"`
}

// GVK is an API group, version and kind.
type GVK struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// Question is one namespace's state: what OLM v0's resolver is asked.
type Question struct {
	// Namespace is the namespace of the Subscriptions and installed CSVs.
	Namespace string `json:"namespace,omitempty"`
	// GlobalNamespace is the global catalog namespace the cluster's OLM
	// runs with; "" means GlobalNamespace. Catalogs in neither Namespace
	// nor this one are invisible to the namespace, as on a cluster.
	GlobalNamespace string         `json:"globalNamespace,omitempty"`
	Catalogs        []Catalog      `json:"catalogs"`
	Subscriptions   []Subscription `json:"subscriptions"`
	Installed       []Installed    `json:"installed,omitempty"`
}

// Answer is what OLM does, operator by operator: each Subscription's
// package first, in the order given, then the dependencies it brings in.
type Answer struct {
	Operators []Operator `json:"operators"`
	// Unsatisfiable is set when OLM resolves nothing in the namespace
	// (its resolution failed): every Operator's Bundle is then nil and
	// Reasons say why in words.
	Unsatisfiable bool `json:"unsatisfiable,omitempty"`
}

// Operator is one package OLM installs, upgrades or leaves alone.
type Operator struct {
	Package string `json:"package"`
	// Bundle is the CSV name installed or upgraded to; nil when OLM does
	// nothing for it.
	Bundle  *string `json:"bundle"`
	Channel string  `json:"channel"`
	// Catalog is the name of the catalog the bundle comes from.
	Catalog string `json:"catalog"`
	// CatalogNamespace is that catalog's namespace.
	CatalogNamespace string `json:"catalogNamespace,omitempty"`
	// Dependency is set for operators no Subscription names: OLM adds them
	// (with a generated Subscription) for a bundle that requires them.
	Dependency bool `json:"dependency,omitempty"`
	// Reasons say why this bundle, or why none, in words.
	Reasons []string `json:"reasons"`
}
