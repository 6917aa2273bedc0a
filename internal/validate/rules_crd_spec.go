package validate

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/opmkit/opm/internal/bundle"
)

// The rest of the API server's CRD validation that bundles get wrong: the
// names beyond metadata.name, printer columns, the scale subresource and
// conversion. operator-sdk runs the API server's validation itself.

var (
	printerColumnTypes   = []string{"boolean", "date", "integer", "number", "string"}
	printerColumnFormats = []string{"int32", "int64", "float", "double", "byte", "date", "date-time", "password"}
)

func init() {
	crdRule("crd-spec", Error,
		"A CRD's names (plural, singular, short names, categories: DNS-1035 labels; kind and listKind: valid and different), version names, printer columns (name, a known type and format, a JSON path), scale subresource paths (under .spec and .status) and conversion (None, or Webhook with a client config and review versions) are what the API server accepts.",
		"The API server refuses such a CRD, so OLM's install fails at that step; operator-sdk runs the same validation and refuses the bundle.",
		"Correct the field as the message says: names are lower-case letters, digits and '-', starting with a letter; kind and listKind differ (listKind is usually <Kind>List).",
		func(c *Context, crd *bundle.CRD) {
			o := crd.Object
			spec := bundle.MapAt(o.Map(), "spec")
			names := bundle.MapAt(spec, "names")
			dns1035 := func(field, what, v string) {
				for _, msg := range validation.IsDNS1035Label(v) {
					c.Report(o, field, fmt.Sprintf("CRD %s: %s %q is not a DNS-1035 label: %s", crd.Name, what, v, msg), "use lower-case letters, digits and '-', starting with a letter")
				}
			}
			if crd.Plural != "" {
				dns1035("spec.names.plural", "plural", crd.Plural)
			}
			if crd.Singular != "" {
				dns1035("spec.names.singular", "singular", crd.Singular)
			}
			for _, key := range []string{"shortNames", "categories"} {
				for i, v := range bundle.Slice(names, key) {
					s, _ := v.(string)
					dns1035(fmt.Sprintf("spec.names.%s[%d]", key, i), key+" entry", s)
				}
			}
			if crd.Kind != "" && len(validation.IsDNS1035Label(strings.ToLower(crd.Kind))) > 0 {
				c.Report(o, "spec.names.kind", fmt.Sprintf("CRD %s: kind %q is not a valid kind", crd.Name, crd.Kind), "use letters and digits, starting with a letter, e.g. Widget")
			}
			if crd.ListKind != "" && crd.ListKind == crd.Kind {
				c.Report(o, "spec.names.listKind", fmt.Sprintf("CRD %s: listKind and kind are both %q", crd.Name, crd.Kind), fmt.Sprintf("set listKind: %sList", crd.Kind))
			}
			for i, v := range crd.Versions {
				if v.Name != "" {
					dns1035(v.Field+".name", "version name", v.Name)
				}
				ver, _ := mustLookup(o.Map(), "spec", "versions").([]any)
				if i < len(ver) {
					checkPrinterColumns(c, crd, fmt.Sprintf("spec.versions[%d]", i), bundle.Slice(ver[i], "additionalPrinterColumns"))
					checkScale(c, crd, fmt.Sprintf("spec.versions[%d].subresources.scale", i), bundle.MapAt(ver[i], "subresources", "scale"))
				}
			}
			if !crd.IsV1() {
				checkPrinterColumns(c, crd, "spec", bundle.Slice(spec, "additionalPrinterColumns"))
				checkScale(c, crd, "spec.subresources.scale", bundle.MapAt(spec, "subresources", "scale"))
			}
			conv := bundle.MapAt(spec, "conversion")
			switch strategy := bundle.Str(conv, "strategy"); strategy {
			case "", "None":
			case "Webhook":
				clientConfig, reviews := bundle.MapAt(conv, "webhook", "clientConfig"), bundle.Slice(conv, "webhook", "conversionReviewVersions")
				if !crd.IsV1() {
					clientConfig, reviews = bundle.MapAt(conv, "webhookClientConfig"), []any{"v1beta1"} // v1beta1 defaults the review versions
				}
				if clientConfig == nil {
					c.Report(o, "spec.conversion", fmt.Sprintf("CRD %s: conversion strategy Webhook without a webhook client config", crd.Name),
						"give the webhook's client config, or set strategy: None and let OLM wire the conversion webhook of the CSV's webhookdefinitions")
				}
				if len(reviews) == 0 {
					c.Report(o, "spec.conversion", fmt.Sprintf("CRD %s: conversion strategy Webhook without conversionReviewVersions", crd.Name), "set conversionReviewVersions: [v1]")
				}
			default:
				c.Report(o, "spec.conversion.strategy", fmt.Sprintf("CRD %s: unknown conversion strategy %q", crd.Name, strategy), "use None or Webhook")
			}
		})
}

func checkPrinterColumns(c *Context, crd *bundle.CRD, at string, cols []any) {
	for i, col := range cols {
		f := fmt.Sprintf("%s.additionalPrinterColumns[%d]", at, i)
		if bundle.Str(col, "name") == "" {
			c.Report(crd.Object, f, fmt.Sprintf("CRD %s: printer column %d has no name", crd.Name, i), "give it a name")
		}
		if t := bundle.Str(col, "type"); !contains(printerColumnTypes, t) {
			c.Report(crd.Object, f+".type", fmt.Sprintf("CRD %s: printer column type %q is not one of %s", crd.Name, t, strings.Join(printerColumnTypes, ", ")), "use one of "+strings.Join(printerColumnTypes, ", "))
		}
		if ft := bundle.Str(col, "format"); ft != "" && !contains(printerColumnFormats, ft) {
			c.Report(crd.Object, f+".format", fmt.Sprintf("CRD %s: printer column format %q is not one of %s", crd.Name, ft, strings.Join(printerColumnFormats, ", ")), "use one of "+strings.Join(printerColumnFormats, ", ")+", or none")
		}
		// v1 spells it jsonPath, v1beta1 JSONPath; v1 CRDs written with
		// JSONPath are common (aqua), and Go's JSON decoding, which matches
		// field names without regard to case (operator-sdk's), reads them:
		// either spelling counts.
		if bundle.Str(col, "jsonPath") == "" && bundle.Str(col, "JSONPath") == "" {
			c.Report(crd.Object, f, fmt.Sprintf("CRD %s: printer column %q has no JSON path", crd.Name, bundle.Str(col, "name")), "set jsonPath, e.g. .status.phase")
		}
	}
}

func checkScale(c *Context, crd *bundle.CRD, at string, scale map[string]any) {
	if scale == nil {
		return
	}
	for _, p := range []struct{ key, under string }{{"specReplicasPath", ".spec."}, {"statusReplicasPath", ".status."}} {
		v := bundle.Str(scale, p.key)
		if !strings.HasPrefix(v, p.under) || strings.ContainsAny(v, "[]") {
			c.Report(crd.Object, at+"."+p.key, fmt.Sprintf("CRD %s: scale %s %q is not a simple JSON path under %s", crd.Name, p.key, v, strings.TrimSuffix(p.under, ".")), fmt.Sprintf("write it as %sreplicas", p.under))
		}
	}
	if v := bundle.Str(scale, "labelSelectorPath"); v != "" && !strings.HasPrefix(v, ".spec.") && !strings.HasPrefix(v, ".status.") {
		c.Report(crd.Object, at+".labelSelectorPath", fmt.Sprintf("CRD %s: scale labelSelectorPath %q is not under .spec or .status", crd.Name, v), "write it as .status.selector")
	}
}
