package fbc

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/opmkit/opm/internal/validate"
)

// ValidateOLMv1 checks a catalog's bundles against the olmv1-* rules that
// can be read from a catalog: dependency properties, and, from the
// bundle's CSV (olm.bundle.object) or its olm.csv.metadata, install modes,
// owned API services and webhooks. Findings are sorted by file and line.
func ValidateOLMv1(c *Catalog) []validate.Finding {
	v := &checker{}
	for _, b := range c.Bundles {
		v.olmv1Bundle(b)
	}
	sort.SliceStable(v.out, func(i, j int) bool {
		a, b := v.out[i], v.out[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	return v.out
}

// olmv1CSV is the part of a CSV (or of olm.csv.metadata) these rules read.
type olmv1CSV struct {
	Kind         string `json:"kind"`
	InstallModes []struct {
		Type      string `json:"type"`
		Supported bool   `json:"supported"`
	} `json:"installModes"`
	APIServiceDefinitions struct {
		Owned []struct {
			Name string `json:"name"`
		} `json:"owned"`
	} `json:"apiServiceDefinitions"`
	Spec *struct {
		InstallModes []struct {
			Type      string `json:"type"`
			Supported bool   `json:"supported"`
		} `json:"installModes"`
		APIServiceDefinitions struct {
			Owned []struct {
				Name string `json:"name"`
			} `json:"owned"`
		} `json:"apiservicedefinitions"`
		WebhookDefinitions []struct {
			Type         string `json:"type"`
			GenerateName string `json:"generateName"`
		} `json:"webhookdefinitions"`
	} `json:"spec"`
}

func (v *checker) olmv1Bundle(b Bundle) {
	var csv, meta *olmv1CSV
	for i, p := range b.Properties {
		field := fmt.Sprintf("properties[%d]", i)
		for _, t := range validate.OLMv1DependencyTypes {
			if p.Type == t {
				v.report(validate.RuleOLMv1Dependencies, b.Pos, field, "",
					"bundle %s declares a dependency (%s %s): operator-controller refuses the bundle", b.Name, p.Type, p.Value)
			}
		}
		switch p.Type {
		case PropertyCSVMetadata:
			var m olmv1CSV
			if json.Unmarshal(p.Value, &m) == nil {
				meta = &m
			}
		case PropertyBundleObject:
			o, err := decodeBundleObject(p.Value)
			if err != nil {
				continue // catalog-property reports it
			}
			var m olmv1CSV
			if json.Unmarshal(o.Data, &m) == nil && m.Kind == "ClusterServiceVersion" && m.Spec != nil {
				csv = &m
			}
		}
	}
	type mode = struct {
		Type      string `json:"type"`
		Supported bool   `json:"supported"`
	}
	var modes []mode
	var owned []string
	switch {
	case csv != nil:
		modes = csv.Spec.InstallModes
		for _, o := range csv.Spec.APIServiceDefinitions.Owned {
			owned = append(owned, o.Name)
		}
		for _, w := range csv.Spec.WebhookDefinitions {
			v.report(validate.RuleOLMv1Webhooks, b.Pos, "properties", "",
				"bundle %s has webhook %q (%s): operator-controller installs webhooks only where a certificate provider (cert-manager or OpenShift's service CA) is configured", b.Name, w.GenerateName, w.Type)
		}
	case meta != nil:
		modes = meta.InstallModes
		for _, o := range meta.APIServiceDefinitions.Owned {
			owned = append(owned, o.Name)
		}
	default:
		return // no CSV to read: nothing more can be said
	}
	var supported []string
	all := false
	for _, m := range modes {
		if m.Supported {
			supported = append(supported, m.Type)
			all = all || m.Type == "AllNamespaces"
		}
	}
	if !all {
		v.report(validate.RuleOLMv1AllNamespaces, b.Pos, "properties", "", "bundle %s: %s", b.Name, validate.OLMv1InstallModesMessage(supported))
	}
	for _, name := range owned {
		v.report(validate.RuleOLMv1APIServices, b.Pos, "properties", "",
			"bundle %s owns API service %s: operator-controller does not install API services", b.Name, name)
	}
}
