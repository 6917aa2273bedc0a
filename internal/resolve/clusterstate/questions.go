package clusterstate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/opmkit/opm/internal/resolve"
)

// DefaultNamespace is the namespace of flags' Subscriptions and CSVs when
// neither --namespace nor the files name one: kubectl's.
const DefaultNamespace = "default"

// State is what a cluster holds: Subscriptions and installed CSVs, read
// from files or flags.
type State struct {
	Subscriptions []Subscription
	Installed     []CSV
}

// Namespace is the namespace of objects that name none: namespace when
// given, else the one namespace the objects name, else DefaultNamespace.
func (st State) Namespace(namespace string) string {
	if namespace != "" {
		return namespace
	}
	seen := map[string]bool{}
	for _, s := range st.Subscriptions {
		if s.Namespace != "" {
			seen[s.Namespace] = true
		}
	}
	for _, c := range st.Installed {
		if c.Namespace != "" {
			seen[c.Namespace] = true
		}
	}
	if len(seen) == 1 {
		for ns := range seen {
			return ns
		}
	}
	return DefaultNamespace
}

// Questions are the state's questions to OLM v0's resolver, one per
// namespace holding a Subscription, sorted by namespace. Objects that name
// no namespace are in State.Namespace(namespace); when namespace is given,
// objects of other namespaces are left out. Each Subscription's catalog
// (spec.source) must be one of catalogs: a global one (Namespace "") of
// that name answers whatever spec.sourceNamespace says, as the cluster's
// global catalog namespace differs between OLM's installs. The package of
// a CSV that names none is looked up in the catalogs by CSV name. A
// Subscription that names no catalog (from a flag) takes the catalog of
// highest priority holding its package, the first given among equals. A
// Subscription with no installedCSV takes the installed CSV of its
// package, and a Subscription's installedCSV is an installed CSV.
func (st State) Questions(catalogs []resolve.Catalog, namespace string) ([]resolve.Question, error) {
	def := st.Namespace(namespace)
	qs := map[string]*resolve.Question{}
	q := func(ns string) *resolve.Question {
		if ns == "" {
			ns = def
		}
		if namespace != "" && ns != namespace {
			return nil
		}
		if qs[ns] == nil {
			qs[ns] = &resolve.Question{Namespace: ns, Catalogs: catalogs}
		}
		return qs[ns]
	}
	pkgOf := packagesByCSV(catalogs)
	for _, c := range st.Installed {
		if qq := q(c.Namespace); qq != nil {
			in := c.Installed
			if in.Package == "" {
				in.Package = pkgOf[in.CSV]
			}
			qq.Installed = append(qq.Installed, in)
		}
	}
	for _, s := range st.Subscriptions {
		qq := q(s.Namespace)
		if qq == nil {
			continue
		}
		sub := s.Subscription
		if sub.Catalog == "" {
			// A Subscription names its CatalogSource; one from a flag
			// takes the preferred catalog holding the package.
			sub.Catalog, sub.CatalogNamespace = preferred(catalogs, sub.Package, qq.Namespace)
		} else {
			ns, err := catalogOf(catalogs, sub, qq.Namespace)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.From, err)
			}
			switch {
			case ns == "" && sub.CatalogNamespace != "" && sub.CatalogNamespace != qq.Namespace:
				// The namespace a global catalog is named in is the
				// cluster's global catalog namespace (olm upstream,
				// openshift-marketplace on OpenShift).
				qq.GlobalNamespace = sub.CatalogNamespace
			case ns != "" && ns != qq.Namespace:
				// A catalog given in another namespace than the
				// Subscription's, and named so by it: that is the global
				// catalog namespace, or OLM would not see it.
				qq.GlobalNamespace = ns
			}
			sub.CatalogNamespace = ns
		}
		if sub.InstalledCSV == "" {
			sub.InstalledCSV = installedOf(qq.Installed, sub.Package)
		} else if !hasCSV(qq.Installed, sub.InstalledCSV) {
			qq.Installed = append(qq.Installed, resolve.Installed{Package: sub.Package, CSV: sub.InstalledCSV})
		}
		qq.Subscriptions = append(qq.Subscriptions, sub)
	}
	var out []resolve.Question
	for _, qq := range qs {
		if len(qq.Subscriptions) > 0 {
			out = append(out, *qq)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace < out[j].Namespace })
	return out, nil
}

// catalogOf is the namespace of the catalog sub names: its own when a
// catalog of that name and namespace is given, else "" (global).
func catalogOf(catalogs []resolve.Catalog, sub resolve.Subscription, ns string) (string, error) {
	want := sub.CatalogNamespace
	if want == "" {
		want = ns
	}
	global := false
	var names []string
	for _, c := range catalogs {
		names = append(names, c.Name)
		if c.Name != sub.Catalog {
			continue
		}
		if c.Namespace != "" && c.Namespace == want {
			return c.Namespace, nil
		}
		global = global || c.Namespace == ""
	}
	if global {
		return "", nil
	}
	return "", fmt.Errorf("subscription to %s names catalog %q (spec.source) in namespace %q, and no catalog of that name is given there or globally (the catalogs given are %s): name one so, e.g. --catalog name=%s,source=SOURCE",
		sub.Package, sub.Catalog, want, strings.Join(names, ", "), sub.Catalog)
}

// preferred is the catalog of highest priority (the first given of equal
// ones) that has a bundle of pkg and is visible from namespace ns: a
// global one or one in ns. "" when none has.
func preferred(catalogs []resolve.Catalog, pkg, ns string) (name, namespace string) {
	best := -1
	for i, c := range catalogs {
		if c.Catalog == nil || (c.Namespace != "" && c.Namespace != ns) || (best >= 0 && c.Priority <= catalogs[best].Priority) {
			continue
		}
		for _, b := range c.Catalog.Bundles {
			if b.Package == pkg {
				best = i
				break
			}
		}
	}
	if best < 0 {
		return "", ""
	}
	return catalogs[best].Name, catalogs[best].Namespace
}

func packagesByCSV(catalogs []resolve.Catalog) map[string]string {
	out := map[string]string{}
	for _, c := range catalogs {
		if c.Catalog == nil {
			continue
		}
		for _, b := range c.Catalog.Bundles {
			if _, ok := out[b.Name]; !ok {
				out[b.Name] = b.Package
			}
		}
	}
	return out
}

// installedOf is the one installed CSV of pkg, or "".
func installedOf(in []resolve.Installed, pkg string) string {
	found := ""
	for _, i := range in {
		if i.Package == pkg {
			if found != "" {
				return ""
			}
			found = i.CSV
		}
	}
	return found
}

func hasCSV(in []resolve.Installed, csv string) bool {
	for _, i := range in {
		if i.CSV == csv {
			return true
		}
	}
	return false
}
