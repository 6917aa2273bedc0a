package resolve

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/opmkit/opm/internal/yamldoc"
)

// clusterExtensionDoc is what ParseClusterExtension reads of an object;
// the rest of a ClusterExtension (namespace, service account, install
// and config) plays no part in resolution.
type clusterExtensionDoc struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Source *struct {
			SourceType string `json:"sourceType"`
			Catalog    *struct {
				PackageName             string         `json:"packageName"`
				Version                 string         `json:"version"`
				Channels                []string       `json:"channels"`
				Selector                *LabelSelector `json:"selector"`
				UpgradeConstraintPolicy string         `json:"upgradeConstraintPolicy"`
			} `json:"catalog"`
		} `json:"source"`
	} `json:"spec"`
	Status struct {
		Install *struct {
			Bundle *InstalledBundle `json:"bundle"`
		} `json:"install"`
	} `json:"status"`
}

// extensionAPIGroup is the API group of ClusterExtension.
const extensionAPIGroup = "olm.operatorframework.io"

// ParseClusterExtension reads ClusterExtensions from YAML or JSON: one
// object, a List (kind ClusterExtensionList or List, as kubectl get -o
// yaml writes them), or several YAML documents. An object that is not a
// ClusterExtension, or whose fields the API server would refuse (a
// missing packageName, an unknown upgradeConstraintPolicy, a channel that
// is not a DNS subdomain, a field of the wrong type), is an error naming
// the document and the field. The version range is not checked here:
// operator-controller reports a range it cannot read when it resolves,
// and so does ResolveExtension.
func ParseClusterExtension(data []byte) ([]ClusterExtension, error) {
	docs, err := yamldoc.Decode("clusterextension.yaml", data)
	if err != nil {
		return nil, err
	}
	var out []ClusterExtension
	for _, d := range docs {
		where := fmt.Sprintf("document %d (line %d)", d.Index+1, d.Line)
		m, ok := d.Value.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: want a ClusterExtension object, got %s", where, yamldoc.KindOf(d.Value))
		}
		kind, _ := m["kind"].(string)
		if items, isList := m["items"]; isList && (kind == "List" || strings.HasSuffix(kind, "List")) {
			list, ok := items.([]any)
			if !ok {
				return nil, fmt.Errorf("%s: items: want a list, got %s", where, yamldoc.KindOf(items))
			}
			for i, it := range list {
				ce, err := decodeClusterExtension(it)
				if err != nil {
					return nil, fmt.Errorf("%s: items[%d]: %w", where, i, err)
				}
				out = append(out, ce)
			}
			continue
		}
		ce, err := decodeClusterExtension(m)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		out = append(out, ce)
	}
	if len(out) == 0 {
		return nil, errors.New("no ClusterExtension found (the input holds no object)")
	}
	return out, nil
}

func decodeClusterExtension(v any) (ClusterExtension, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return ClusterExtension{}, fmt.Errorf("want a ClusterExtension object, got %s", yamldoc.KindOf(v))
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return ClusterExtension{}, err
	}
	var d clusterExtensionDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return ClusterExtension{}, fmt.Errorf("field %s: want %s, got a JSON %s", te.Field, extTypeWords(te.Type.String()), te.Value)
		}
		return ClusterExtension{}, err
	}
	name := d.Metadata.Name
	what := "ClusterExtension"
	if name != "" {
		what = fmt.Sprintf("ClusterExtension %q", name)
	}
	if d.Kind != "ClusterExtension" {
		if d.Kind == "" {
			return ClusterExtension{}, errors.New("kind is missing: want kind: ClusterExtension (apiVersion: olm.operatorframework.io/v1)")
		}
		return ClusterExtension{}, fmt.Errorf("kind is %q: want ClusterExtension (apiVersion: olm.operatorframework.io/v1)", d.Kind)
	}
	if g, _, _ := strings.Cut(d.APIVersion, "/"); d.APIVersion != "" && g != extensionAPIGroup {
		return ClusterExtension{}, fmt.Errorf("%s: apiVersion %q: want %s/v1", what, d.APIVersion, extensionAPIGroup)
	}
	src := d.Spec.Source
	if src == nil {
		return ClusterExtension{}, fmt.Errorf("%s: spec.source is missing: a ClusterExtension names its package under spec.source.catalog", what)
	}
	if src.SourceType != "Catalog" {
		return ClusterExtension{}, fmt.Errorf("%s: spec.source.sourceType is %q: the only source type is Catalog", what, src.SourceType)
	}
	c := src.Catalog
	if c == nil {
		return ClusterExtension{}, fmt.Errorf("%s: spec.source.catalog is missing (it is required when sourceType is Catalog)", what)
	}
	if c.PackageName == "" {
		return ClusterExtension{}, fmt.Errorf("%s: spec.source.catalog.packageName is missing", what)
	}
	if msgs := validation.IsDNS1123Subdomain(c.PackageName); len(msgs) > 0 {
		return ClusterExtension{}, fmt.Errorf("%s: spec.source.catalog.packageName %q: %s", what, c.PackageName, strings.Join(msgs, "; "))
	}
	if len(c.Channels) > 256 {
		return ClusterExtension{}, fmt.Errorf("%s: spec.source.catalog.channels has %d entries; at most 256 are allowed", what, len(c.Channels))
	}
	for i, ch := range c.Channels {
		if msgs := validation.IsDNS1123Subdomain(ch); len(msgs) > 0 {
			return ClusterExtension{}, fmt.Errorf("%s: spec.source.catalog.channels[%d] %q: %s", what, i, ch, strings.Join(msgs, "; "))
		}
	}
	if len(c.Version) > 64 {
		return ClusterExtension{}, fmt.Errorf("%s: spec.source.catalog.version is %d characters long; at most 64 are allowed", what, len(c.Version))
	}
	switch c.UpgradeConstraintPolicy {
	case "", PolicyCatalogProvided, PolicySelfCertified:
	default:
		return ClusterExtension{}, fmt.Errorf("%s: spec.source.catalog.upgradeConstraintPolicy %q: want %s (the default) or %s", what, c.UpgradeConstraintPolicy, PolicyCatalogProvided, PolicySelfCertified)
	}
	if c.Selector != nil {
		if _, err := newExtCatalogSelector(c.Selector); err != nil {
			return ClusterExtension{}, fmt.Errorf("%s: spec.source.catalog.selector: %w", what, err)
		}
	}
	ce := ClusterExtension{
		Name:                    name,
		PackageName:             c.PackageName,
		Version:                 c.Version,
		Channels:                c.Channels,
		UpgradeConstraintPolicy: c.UpgradeConstraintPolicy,
		Selector:                c.Selector,
	}
	if in := d.Status.Install; in != nil && in.Bundle != nil {
		b := *in.Bundle
		if b.Name == "" {
			return ClusterExtension{}, fmt.Errorf("%s: status.install.bundle.name is missing", what)
		}
		if b.Version == "" {
			return ClusterExtension{}, fmt.Errorf("%s: status.install.bundle.version is missing (the installed bundle's version, such as 1.2.3)", what)
		}
		ce.Installed = &b
	}
	return ce, nil
}

func extTypeWords(t string) string {
	switch {
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "[]"):
		return "a list of " + strings.TrimPrefix(t, "[]") + "s"
	case strings.HasPrefix(t, "map["):
		return "an object of strings"
	case strings.HasPrefix(t, "struct") || strings.Contains(t, "."):
		return "an object"
	}
	return t
}
