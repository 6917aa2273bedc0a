package clusterstate

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/opmkit/opm/internal/resolve"
	"github.com/opmkit/opm/internal/yamldoc"
)

// CSV is an installed ClusterServiceVersion and its namespace.
type CSV struct {
	Namespace string
	resolve.Installed
	From string // "file:line" or the flag's value
}

// propertiesAnnotation holds the bundle's properties OLM copies onto the
// CSVs it installs (olm.package among them).
const propertiesAnnotation = "operatorframework.io/properties"

// ReadCSVs reads ClusterServiceVersions from a file as `oc get csv -A -o
// yaml` writes it (a List), one object, or several documents. Copies OLM
// makes of a CSV in other namespaces (status.reason Copied, or the
// olm.copiedFrom label) are left out: they install nothing there. The
// package comes from the olm.package property of the
// operatorframework.io/properties annotation, else from the
// operators.coreos.com/PACKAGE.NAMESPACE label, else is left "" for the
// resolver to find by CSV name in the catalogs; the provided APIs from
// spec.customresourcedefinitions.owned and spec.apiservicedefinitions.owned.
func ReadCSVs(file string, data []byte) ([]CSV, error) {
	objs, err := objects(file, data)
	if err != nil {
		return nil, err
	}
	var out []CSV
	for _, o := range objs {
		c, copied, err := readCSV(o)
		if err != nil {
			return nil, err
		}
		if !copied {
			out = append(out, c)
		}
	}
	return out, nil
}

func readCSV(o object) (CSV, bool, error) {
	if err := o.checkKind("ClusterServiceVersion"); err != nil {
		return CSV{}, false, err
	}
	c := CSV{From: fmt.Sprintf("%s:%d", o.file, o.doc.LineOf(o.path))}
	var err error
	if c.CSV, err = o.str("metadata.name"); err != nil {
		return CSV{}, false, err
	}
	if c.CSV == "" {
		return CSV{}, false, o.errorf("metadata.name", "missing: a ClusterServiceVersion has a name")
	}
	if c.Namespace, err = o.str("metadata.namespace"); err != nil {
		return CSV{}, false, err
	}
	reason, err := o.str("status.reason")
	if err != nil {
		return CSV{}, false, err
	}
	labels, err := o.mapAt("metadata.labels")
	if err != nil {
		return CSV{}, false, err
	}
	if _, copiedFrom := labels["olm.copiedFrom"]; reason == "Copied" || copiedFrom {
		return CSV{}, true, nil
	}
	if c.Package, err = csvPackage(o, c.Namespace, labels); err != nil {
		return CSV{}, false, err
	}
	if c.Provided, err = ownedAPIs(o); err != nil {
		return CSV{}, false, err
	}
	return c, false, nil
}

// csvPackage is the package of the CSV o, as OLM marks it, or "".
func csvPackage(o object, ns string, labels map[string]any) (string, error) {
	ann, err := o.mapAt("metadata.annotations")
	if err != nil {
		return "", err
	}
	if raw, ok := ann[propertiesAnnotation].(string); ok && raw != "" {
		var props struct {
			Properties []struct {
				Type  string          `json:"type"`
				Value json.RawMessage `json:"value"`
			} `json:"properties"`
		}
		if err := json.Unmarshal([]byte(raw), &props); err != nil {
			return "", o.errorf(`metadata.annotations["`+propertiesAnnotation+`"]`, "not a JSON properties document: %v", err)
		}
		for _, p := range props.Properties {
			var v struct {
				PackageName string `json:"packageName"`
			}
			if p.Type == "olm.package" && json.Unmarshal(p.Value, &v) == nil && v.PackageName != "" {
				return v.PackageName, nil
			}
		}
	}
	// OLM labels the CSVs of a Subscription operators.coreos.com/PKG.NS.
	var found []string
	for k := range labels {
		rest, ok := strings.CutPrefix(k, "operators.coreos.com/")
		if !ok {
			continue
		}
		if ns != "" {
			if rest, ok = strings.CutSuffix(rest, "."+ns); !ok {
				continue
			}
		} else if i := strings.LastIndex(rest, "."); i > 0 {
			rest = rest[:i]
		}
		if rest != "" {
			found = append(found, rest)
		}
	}
	sort.Strings(found)
	if len(found) == 1 {
		return found[0], nil
	}
	return "", nil
}

// ownedAPIs are the GVKs the CSV o owns: its CRDs (name PLURAL.GROUP) and
// API services.
func ownedAPIs(o object) ([]resolve.GVK, error) {
	var out []resolve.GVK
	crds, err := o.listAt("spec.customresourcedefinitions.owned")
	if err != nil {
		return nil, err
	}
	for i, it := range crds {
		f := fmt.Sprintf("spec.customresourcedefinitions.owned[%d]", i)
		m, ok := it.(map[string]any)
		if !ok {
			return nil, o.errorf(f, "is a %s, want a mapping (name, version, kind)", yamldoc.TypeName(it))
		}
		name, _ := m["name"].(string)
		version, _ := m["version"].(string)
		kind, _ := m["kind"].(string)
		_, group, ok := strings.Cut(name, ".")
		if !ok || group == "" || version == "" || kind == "" {
			return nil, o.errorf(f, "want name (PLURAL.GROUP), version and kind as strings, got name %q, version %q, kind %q", name, version, kind)
		}
		out = append(out, resolve.GVK{Group: group, Version: version, Kind: kind})
	}
	svcs, err := o.listAt("spec.apiservicedefinitions.owned")
	if err != nil {
		return nil, err
	}
	for i, it := range svcs {
		f := fmt.Sprintf("spec.apiservicedefinitions.owned[%d]", i)
		m, ok := it.(map[string]any)
		if !ok {
			return nil, o.errorf(f, "is a %s, want a mapping (group, version, kind)", yamldoc.TypeName(it))
		}
		group, _ := m["group"].(string)
		version, _ := m["version"].(string)
		kind, _ := m["kind"].(string)
		if group == "" || version == "" || kind == "" {
			return nil, o.errorf(f, "want group, version and kind as strings, got %q, %q, %q", group, version, kind)
		}
		out = append(out, resolve.GVK{Group: group, Version: version, Kind: kind})
	}
	return out, nil
}
