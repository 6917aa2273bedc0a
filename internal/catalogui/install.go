package catalogui

import (
	"context"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/olmv1"
)

// install is an Install panel: the manifests that install a package from
// a channel, or one bundle of it, with OLM v0 and with OLM v1, and what
// OLM v1 thinks of that bundle.
type install struct {
	Package, Channel, Bundle, Version string
	// Pinned says the panel installs Bundle itself, not whatever heads
	// the channel.
	Pinned bool
	// Namespace is where the OLM v0 Subscription goes; Global says it is
	// the namespace of the cluster's all-namespaces OperatorGroup.
	Namespace string
	Global    bool
	// Modes are the install modes the bundle supports ("" when the
	// catalog does not say).
	Modes      string
	OLMv0      string
	OLMv1      string
	CatalogRef string
	Verdict    *olmv1.Verdict
	// VerdictErr says why OLM v1's checks could not run.
	VerdictErr string
}

// newInstall makes the panel for bundle b (with its CSV, nil when the
// catalog has none) of channel ch; pinned installs b rather than the
// channel's head.
func (u *ui) newInstall(ctx context.Context, c *fbc.Catalog, b *fbc.Bundle, csv *csvInfo, ch, version string, pinned bool) *install {
	in := &install{Package: b.Package, Channel: ch, Bundle: b.Name, Version: version, Pinned: pinned, CatalogRef: u.opts.CatalogName}
	global := "operators"
	if u.opts.CatalogNamespace == "openshift-marketplace" {
		global = "openshift-operators"
	}
	in.Namespace, in.Global = global, true
	if csv != nil {
		var modes []string
		for _, m := range csv.InstallModes {
			if m.Supported {
				modes = append(modes, m.Type)
			}
		}
		in.Modes = strings.Join(modes, ", ")
		if !csv.supports(bundle.InstallModeAllNamespaces) {
			in.Namespace, in.Global = namespaceFor(b.Package), false
		}
	}
	in.OLMv0 = u.subscription(in)
	in.OLMv1 = u.clusterExtension(in)

	one := &fbc.Catalog{Packages: c.Packages, Channels: c.Channels, Bundles: []fbc.Bundle{*b}}
	vs, err := olmv1.Judge(ctx, one, olmv1.Options{Package: b.Package})
	switch {
	case err != nil:
		in.VerdictErr = err.Error()
	case len(vs) == 1:
		in.Verdict = &vs[0]
	}
	return in
}

// subscription is OLM v0's YAML: a Subscription to the CatalogSource, and
// when the bundle cannot watch all namespaces, the namespace and an
// OperatorGroup for it to watch its own.
func (u *ui) subscription(in *install) string {
	var docs []any
	if !in.Global {
		docs = append(docs,
			obj("v1", "Namespace", in.Namespace, "", nil),
			obj("operators.coreos.com/v1", "OperatorGroup", in.Namespace, in.Namespace, map[string]any{"targetNamespaces": []string{in.Namespace}}))
	}
	spec := map[string]any{
		"name":            in.Package,
		"channel":         in.Channel,
		"source":          u.opts.CatalogName,
		"sourceNamespace": u.opts.CatalogNamespace,
	}
	if in.Pinned {
		// Manual approval keeps the cluster on this bundle until an
		// InstallPlan to a newer one is approved.
		spec["startingCSV"] = in.Bundle
		spec["installPlanApproval"] = "Manual"
	}
	docs = append(docs, obj("operators.coreos.com/v1alpha1", "Subscription", dnsLabel(in.Package), in.Namespace, spec))
	return yamlDocs(docs)
}

// clusterExtension is OLM v1's YAML: a ClusterExtension that takes the
// package from the ClusterCatalog of that name (catalogd labels each
// ClusterCatalog with its name).
func (u *ui) clusterExtension(in *install) string {
	cat := map[string]any{
		"packageName": in.Package,
		"channels":    []string{in.Channel},
		"selector": map[string]any{"matchLabels": map[string]string{
			"olm.operatorframework.io/metadata.name": u.opts.CatalogName}},
	}
	if in.Pinned && in.Version != "" {
		cat["version"] = in.Version
	}
	ns := namespaceFor(in.Package)
	spec := map[string]any{
		"namespace":      ns,
		"serviceAccount": map[string]any{"name": dnsLabel(in.Package + "-installer")},
		"source":         map[string]any{"sourceType": "Catalog", "catalog": cat},
	}
	return yamlDocs([]any{obj("olm.operatorframework.io/v1", "ClusterExtension", dnsLabel(in.Package), "", spec)})
}

func obj(apiVersion, kind, name, namespace string, spec map[string]any) map[string]any {
	meta := map[string]any{"name": name}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}
	if spec != nil {
		o["spec"] = spec
	}
	return o
}

func yamlDocs(docs []any) string {
	var parts []string
	for _, d := range docs {
		y, err := yaml.Marshal(d)
		if err != nil {
			// Maps of strings: cannot fail.
			panic(err)
		}
		parts = append(parts, string(y))
	}
	return strings.Join(parts, "---\n")
}

// namespaceFor is the namespace a package is installed into when it
// gets one of its own.
func namespaceFor(pkg string) string { return dnsLabel(pkg) }

// dnsLabel makes s a Kubernetes name (RFC 1123 label): lower case,
// letters, digits and dashes, at most 63 characters.
func dnsLabel(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	out := b.String()
	if len(out) > 63 {
		out = out[:63]
	}
	out = strings.Trim(out, "-")
	if out == "" {
		return "operator"
	}
	return out
}
