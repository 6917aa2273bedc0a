package validate

import (
	"fmt"

	"strings"
)

// Preflight rules: the static checks of Red Hat's preflight tool on an
// operator bundle (run on every certified operator submission), as far as
// they need no cluster or registry. Opt-in: --select preflight.
var (
	RulePreflightFeatures = register(&Rule{ID: "preflight-feature-annotations", Severity: Warning, Scope: ScopeCSV, Set: SetPreflight,
		What: "The CSV carries the seven features.operators.openshift.io annotations (disconnected, fips-compliant, proxy-aware, tls-profiles, token-auth-aws, token-auth-azure, token-auth-gcp), each exactly \"true\" or \"false\"; cnf, cni and csi, when present, too.",
		Why:  "The OpenShift console filters operators by these infrastructure features, and preflight's RequiredAnnotations check fails a bundle without them or with another value (True, yes); it is reported at preflight's level, a warning.",
		Fix:  "Add each annotation with the quoted value \"true\" or \"false\", e.g. features.operators.openshift.io/disconnected: \"false\"."})
	RulePreflightRelatedImages = register(&Rule{ID: "preflight-related-images", Severity: Warning, Scope: ScopeCSV, Set: SetPreflight,
		What: "Every pull spec the CSV makes the cluster pull (the containerImage annotation, each container and init container image, RELATED_IMAGE_* variables) is listed in spec.relatedImages.",
		Why:  "Mirroring for disconnected clusters copies the images relatedImages lists; an image missing there is not mirrored and fails to pull. Preflight's AllImageRefsInRelatedImages check warns about it (it looks for pull specs in every annotation too, so prose such as AI/Machine Learning can pass for an image; opm reads only the places images are pulled from).",
		Fix:  "List the image in spec.relatedImages with a name (operator-sdk generate bundle --use-image-digests fills it from RELATED_IMAGE_* variables)."})
)

// FeatureAnnotations are preflight's required infrastructure feature
// annotations, and OptionalFeatureAnnotations those it checks when present.
var (
	FeatureAnnotations         = []string{"disconnected", "fips-compliant", "proxy-aware", "tls-profiles", "token-auth-aws", "token-auth-azure", "token-auth-gcp"}
	OptionalFeatureAnnotations = []string{"cnf", "cni", "csi"}
)

const featurePrefix = "features.operators.openshift.io/"

func init() {
	RulePreflightFeatures.check = func(c *Context) {
		// The document's own annotations: the typed CSV drops them all
		// when one is not a string (csv-field-type says so).
		meta, _ := c.CSV.Object.Map()["metadata"].(map[string]any)
		ann, _ := meta["annotations"].(map[string]any)
		var missing []string
		for _, name := range FeatureAnnotations {
			if _, ok := ann[featurePrefix+name]; !ok {
				missing = append(missing, featurePrefix+name)
			}
		}
		if len(missing) > 0 {
			c.Report(c.csvObj(), "metadata.annotations", fmt.Sprintf("missing feature annotation(s): %s", strings.Join(missing, ", ")),
				`add each with "true" or "false"`)
		}
		for _, name := range append(append([]string{}, FeatureAnnotations...), OptionalFeatureAnnotations...) {
			key := featurePrefix + name
			raw, ok := ann[key]
			if !ok {
				continue
			}
			field := fmt.Sprintf("metadata.annotations[%q]", key)
			switch v, isString := raw.(string); {
			case !isString:
				c.Report(c.csvObj(), field, fmt.Sprintf("%s is the YAML %v, not a string: the API server refuses non-string annotations", key, raw), `quote it: "true" or "false"`)
			case v != "true" && v != "false":
				c.Report(c.csvObj(), field, fmt.Sprintf("%s is %q; preflight accepts only \"true\" or \"false\"", key, v), `write "true" or "false", in lower case`)
			}
		}
	}
	RulePreflightRelatedImages.check = func(c *Context) {
		listed := map[string]bool{}
		for _, r := range c.CSV.Spec.RelatedImages {
			listed[strings.TrimSpace(r.Image)] = true
		}
		reported := map[string]bool{}
		for _, p := range c.pullSpecs() {
			img := strings.TrimSpace(p.image)
			if img == "" || strings.HasPrefix(p.field, "spec.relatedImages") || listed[img] || reported[img] {
				continue
			}
			reported[img] = true
			c.Report(c.csvObj(), p.field, fmt.Sprintf("%s is %s, which spec.relatedImages does not list", p.where, img), "add {name: ..., image: "+img+"} to spec.relatedImages")
		}
	}
}
