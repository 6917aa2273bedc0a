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

// CSVInstall is what OLM v1's install checks read of a bundle's CSV, or of
// its olm.csv.metadata (which has no webhooks): one decoder for both, for
// opm validate --select olmv1 and alpha list --olmv1.
type CSVInstall struct {
	InstallModes []struct {
		Type      string `json:"type"`
		Supported bool   `json:"supported"`
	}
	OwnedAPIServices []string
	Webhooks         []struct {
		Type         string `json:"type"`
		GenerateName string `json:"generateName"`
	}
}

// Supported are the install modes supported, and whether AllNamespaces
// is one of them.
func (c *CSVInstall) Supported() (modes []string, all bool) {
	for _, m := range c.InstallModes {
		if m.Supported {
			modes = append(modes, m.Type)
			all = all || m.Type == "AllNamespaces"
		}
	}
	return modes, all
}

type apiServices struct {
	Owned []struct {
		Name string `json:"name"`
	} `json:"owned"`
}

func (a apiServices) names() []string {
	var out []string
	for _, o := range a.Owned {
		out = append(out, o.Name)
	}
	return out
}

// DecodeCSVMetadata reads an olm.csv.metadata property's value.
func DecodeCSVMetadata(value json.RawMessage) (*CSVInstall, error) {
	var m struct {
		InstallModes          json.RawMessage `json:"installModes"`
		APIServiceDefinitions apiServices     `json:"apiServiceDefinitions"`
	}
	if err := json.Unmarshal(value, &m); err != nil {
		return nil, err
	}
	out := &CSVInstall{OwnedAPIServices: m.APIServiceDefinitions.names()}
	if len(m.InstallModes) > 0 {
		if err := json.Unmarshal(m.InstallModes, &out.InstallModes); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DecodeCSVInstall reads a manifest (an olm.bundle.object's data): nil
// and no error when it is not a ClusterServiceVersion with a spec.
func DecodeCSVInstall(data []byte) (*CSVInstall, error) {
	var m struct {
		Kind string `json:"kind"`
		Spec *struct {
			InstallModes          json.RawMessage `json:"installModes"`
			APIServiceDefinitions apiServices     `json:"apiservicedefinitions"`
			WebhookDefinitions    json.RawMessage `json:"webhookdefinitions"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	if m.Kind != "ClusterServiceVersion" || m.Spec == nil {
		return nil, nil
	}
	out := &CSVInstall{OwnedAPIServices: m.Spec.APIServiceDefinitions.names()}
	if len(m.Spec.InstallModes) > 0 {
		if err := json.Unmarshal(m.Spec.InstallModes, &out.InstallModes); err != nil {
			return nil, err
		}
	}
	if len(m.Spec.WebhookDefinitions) > 0 {
		if err := json.Unmarshal(m.Spec.WebhookDefinitions, &out.Webhooks); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (v *checker) olmv1Bundle(b Bundle) {
	var csv, meta *CSVInstall
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
			if m, err := DecodeCSVMetadata(p.Value); err == nil {
				meta = m
			}
		case PropertyBundleObject:
			o, err := decodeBundleObject(p.Value)
			if err != nil {
				continue // catalog-property reports it
			}
			if m, err := DecodeCSVInstall(o.Data); err == nil && m != nil {
				csv = m
			}
		}
	}
	in := csv
	if in == nil {
		in = meta
	}
	if in == nil {
		return // no CSV to read: nothing more can be said
	}
	for _, w := range in.Webhooks {
		v.report(validate.RuleOLMv1Webhooks, b.Pos, "properties", "",
			"bundle %s has webhook %q (%s): operator-controller installs webhooks only where a certificate provider (cert-manager or OpenShift's service CA) is configured", b.Name, w.GenerateName, w.Type)
	}
	if supported, all := in.Supported(); !all {
		v.report(validate.RuleOLMv1AllNamespaces, b.Pos, "properties", "", "bundle %s: %s", b.Name, validate.OLMv1InstallModesMessage(supported))
	}
	for _, name := range in.OwnedAPIServices {
		v.report(validate.RuleOLMv1APIServices, b.Pos, "properties", "",
			"bundle %s owns API service %s: operator-controller does not install API services", b.Name, name)
	}
}
