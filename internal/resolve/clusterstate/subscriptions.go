package clusterstate

import (
	"fmt"
	"strings"

	"github.com/opmkit/opm/internal/resolve"
)

// Subscription is a Subscription and the namespace it is in ("" when the
// object or flag names none).
type Subscription struct {
	Namespace string
	resolve.Subscription
	// From says where it was read: "file:line" or the flag's value.
	From string
}

// ReadSubscriptions reads Subscriptions (operators.coreos.com/v1alpha1)
// from a file as `oc get subscriptions -o yaml` writes it (a List), one
// object, or several YAML documents: spec.name (required), spec.channel,
// spec.startingCSV, spec.source, spec.sourceNamespace, status.installedCSV
// and metadata.namespace and name. Errors are *FieldError or
// *yamldoc.SyntaxError and name the file, line and field.
func ReadSubscriptions(file string, data []byte) ([]Subscription, error) {
	objs, err := objects(file, data)
	if err != nil {
		return nil, err
	}
	out := make([]Subscription, 0, len(objs))
	for _, o := range objs {
		s, err := readSubscription(o)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func readSubscription(o object) (Subscription, error) {
	if err := o.checkKind("Subscription"); err != nil {
		return Subscription{}, err
	}
	if _, err := o.mapAt("spec"); err != nil {
		return Subscription{}, err
	}
	s := Subscription{From: fmt.Sprintf("%s:%d", o.file, o.doc.LineOf(o.path))}
	for _, f := range []struct {
		path string
		to   *string
	}{
		{"metadata.namespace", &s.Namespace},
		{"metadata.name", &s.Name},
		{"spec.name", &s.Package},
		{"spec.channel", &s.Channel},
		{"spec.startingCSV", &s.StartingCSV},
		{"spec.source", &s.Catalog},
		{"spec.sourceNamespace", &s.CatalogNamespace},
		{"status.installedCSV", &s.InstalledCSV},
	} {
		v, err := o.str(f.path)
		if err != nil {
			return Subscription{}, err
		}
		*f.to = strings.TrimSpace(v)
	}
	if s.Package == "" {
		return Subscription{}, o.errorf("spec.name", "missing: a Subscription names its package in spec.name")
	}
	return s, nil
}

// ParseSubscription reads a Subscription spelled PKG[/CHANNEL][@STARTING-CSV]
// (package names have no "/" or "@").
func ParseSubscription(s string) (resolve.Subscription, error) {
	rest, csv, hasCSV := strings.Cut(s, "@")
	pkg, channel, hasChannel := strings.Cut(rest, "/")
	switch {
	case pkg == "":
		return resolve.Subscription{}, fmt.Errorf("subscription %q: no package: write PKG[/CHANNEL][@STARTING-CSV]", s)
	case hasChannel && channel == "":
		return resolve.Subscription{}, fmt.Errorf("subscription %q: empty channel after /: leave out /CHANNEL for the package's default channel", s)
	case hasCSV && csv == "":
		return resolve.Subscription{}, fmt.Errorf("subscription %q: empty starting CSV after @", s)
	case strings.Contains(channel, "/") || strings.Contains(csv, "@"):
		return resolve.Subscription{}, fmt.Errorf("subscription %q: write PKG[/CHANNEL][@STARTING-CSV]", s)
	}
	return resolve.Subscription{Package: pkg, Channel: channel, StartingCSV: csv}, nil
}

// ParseInstalled reads an installed operator spelled PKG=CSV.
func ParseInstalled(s string) (resolve.Installed, error) {
	pkg, csv, ok := strings.Cut(s, "=")
	if !ok || pkg == "" || csv == "" || strings.Contains(csv, "=") {
		return resolve.Installed{}, fmt.Errorf("installed %q: write PKG=CSV (the package and the name of its installed ClusterServiceVersion), or name a file of CSVs", s)
	}
	return resolve.Installed{Package: pkg, CSV: csv}, nil
}
