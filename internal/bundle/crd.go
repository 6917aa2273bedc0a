package bundle

import "strings"

// CRD kinds and API versions.
const (
	CRDKind          = "CustomResourceDefinition"
	CRDGroup         = "apiextensions.k8s.io"
	CRDAPIV1         = "apiextensions.k8s.io/v1"
	CRDAPIV1beta1    = "apiextensions.k8s.io/v1beta1"
	ScopeNamespaced  = "Namespaced"
	ScopeClusterWide = "Cluster"
)

// CRD is a CustomResourceDefinition, apiextensions v1 or v1beta1, seen
// through one shape: v1beta1's top-level version/validation are folded into
// Versions so rules need not care which API version a file uses.
type CRD struct {
	Object                *Object
	Name                  string
	Group                 string
	Plural                string
	Singular              string
	Kind                  string
	ListKind              string
	Scope                 string
	Versions              []CRDVersion
	PreserveUnknownFields *bool
	HasConversionWebhook  bool
}

// CRDVersion is one version of a CRD.
type CRDVersion struct {
	Name    string
	Served  bool
	Storage bool
	// HasSchema is true when this version, or (v1beta1) the whole CRD, has an
	// openAPIV3Schema.
	HasSchema bool
	// Field is the path of this version in the file, for messages.
	Field string
}

// IsV1 says whether the CRD uses apiextensions.k8s.io/v1.
func (c *CRD) IsV1() bool { return c.Object.APIVersion == CRDAPIV1 }

// ServedVersion reports whether the CRD serves version v.
func (c *CRD) ServedVersion(v string) bool {
	for _, ver := range c.Versions {
		if ver.Name == v && ver.Served {
			return true
		}
	}
	return false
}

// HasVersion reports whether the CRD lists version v at all.
func (c *CRD) HasVersion(v string) bool {
	for _, ver := range c.Versions {
		if ver.Name == v {
			return true
		}
	}
	return false
}

func isCRD(o *Object) bool {
	return o.Kind == CRDKind && strings.HasPrefix(o.APIVersion, CRDGroup+"/")
}

func decodeCRD(o *Object) *CRD {
	m := o.Map()
	spec := MapAt(m, "spec")
	c := &CRD{
		Object:   o,
		Name:     o.Name,
		Group:    Str(spec, "group"),
		Plural:   Str(spec, "names", "plural"),
		Singular: Str(spec, "names", "singular"),
		Kind:     Str(spec, "names", "kind"),
		ListKind: Str(spec, "names", "listKind"),
		Scope:    Str(spec, "scope"),
	}
	if p, ok := spec["preserveUnknownFields"].(bool); ok {
		c.PreserveUnknownFields = &p
	}
	if Str(spec, "conversion", "strategy") == "Webhook" {
		c.HasConversionWebhook = true
	}
	_, topSchema := Lookup(spec, "validation", "openAPIV3Schema")
	for i, v := range Slice(spec, "versions") {
		vm, _ := v.(map[string]any)
		served, _ := vm["served"].(bool)
		storage, _ := vm["storage"].(bool)
		_, verSchema := Lookup(vm, "schema", "openAPIV3Schema")
		c.Versions = append(c.Versions, CRDVersion{
			Name:      Str(vm, "name"),
			Served:    served,
			Storage:   storage,
			HasSchema: verSchema || (!c.IsV1() && topSchema),
			Field:     "spec.versions[" + itoa(i) + "]",
		})
	}
	// v1beta1 allowed a single top-level version instead of a list; it is then
	// served and stored.
	if len(c.Versions) == 0 && !c.IsV1() {
		if v := Str(spec, "version"); v != "" {
			c.Versions = []CRDVersion{{Name: v, Served: true, Storage: true, HasSchema: topSchema, Field: "spec.version"}}
		}
	}
	return c
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
