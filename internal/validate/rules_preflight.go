package validate

import (
	"encoding/json"
	"fmt"

	"strings"

	"github.com/opmkit/opm/internal/bundle"
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

// RulePreflightRestrictedNetwork is registered apart: it reads the
// feature annotations the rule above checks.
var RulePreflightRestrictedNetwork = register(&Rule{ID: "preflight-restricted-network", Severity: Warning, Scope: ScopeCSV, Set: SetPreflight,
	What: "A CSV that declares support for disconnected clusters (features.operators.openshift.io/disconnected: \"true\", or \"disconnected\" in the legacy operators.openshift.io/infrastructure-features list) lists its images in spec.relatedImages, each pinned by digest, and hands them to the operator in RELATED_IMAGE_* variables.",
	Why:  "A disconnected cluster pulls only what was mirrored, and mirrors copy relatedImages by digest; an operator that does not take its operand images from RELATED_IMAGE_* variables pulls what it was built with, which the mirror does not have. Preflight's FollowsRestrictedNetworkEnablementGuidelines checks the same (and, unlike opm, fails every bundle that does not claim disconnected support).",
	Fix:  "Pin every related image by digest, list them in spec.relatedImages, and pass each operand image to the operator in a RELATED_IMAGE_<NAME> variable; or set features.operators.openshift.io/disconnected: \"false\"."})

// RulePreflightSCC reports the security context constraints the CSV asks
// for.
var RulePreflightSCC = register(&Rule{ID: "preflight-scc", Severity: Info, Scope: ScopeCSV, Set: SetPreflight,
	What: "Which SecurityContextConstraints the CSV's cluster permissions let the operator use (security.openshift.io securitycontextconstraints): one named SCC is reported for information, several in one rule or none named (every SCC, privileged included) are warnings.",
	Why:  "An SCC other than restricted-v2 may need a cluster administrator's approval before the operator or its operands run, and certification reviews it; preflight's SecurityContextConstraintsInCSV reports the SCC a CSV requests and refuses more than one at a time (it takes a rule that names none for no request at all).",
	Fix:  "Ask for the least privileged SCC that works, by name (resourceNames: [my-scc], verbs: [use]), and document why in the operator's description."})

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
	RulePreflightRestrictedNetwork.check = checkRestrictedNetwork
	RulePreflightSCC.check = checkSCC
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

// declaresDisconnected says whether the CSV claims support for disconnected
// clusters, and by which annotation.
func declaresDisconnected(ann map[string]string) (string, bool) {
	if strings.EqualFold(strings.TrimSpace(ann[featurePrefix+"disconnected"]), "true") {
		return featurePrefix + "disconnected", true
	}
	const legacy = "operators.openshift.io/infrastructure-features"
	var list []string
	if err := json.Unmarshal([]byte(ann[legacy]), &list); err == nil {
		for _, f := range list {
			if strings.EqualFold(f, "disconnected") {
				return legacy, true
			}
		}
	}
	return "", false
}

func checkRestrictedNetwork(c *Context) {
	by, ok := declaresDisconnected(c.CSV.Metadata.Annotations)
	if !ok {
		return
	}
	spec := c.CSV.Spec
	if len(spec.RelatedImages) == 0 {
		c.Report(c.csvObj(), "spec", fmt.Sprintf("the CSV declares disconnected support (%s) but lists no spec.relatedImages: mirrors copy nothing", by),
			"list the operator and operand images in spec.relatedImages, pinned by digest")
	}
	for i, r := range spec.RelatedImages {
		if img := strings.TrimSpace(r.Image); img != "" && !Pinned(img) {
			c.Report(c.csvObj(), fmt.Sprintf("spec.relatedImages[%d].image", i),
				fmt.Sprintf("related image %q is %s, not pinned by digest, in a CSV that declares disconnected support (%s)", r.Name, img, by),
				"pin it: "+img+"@sha256:<digest>")
		}
	}
	for _, d := range spec.Install.Spec.Deployments {
		for _, list := range [][]bundle.Container{d.Spec.Template.Spec.Containers, d.Spec.Template.Spec.InitContainers} {
			for _, ct := range list {
				for _, e := range ct.Env {
					if strings.HasPrefix(e.Name, "RELATED_IMAGE_") {
						return
					}
				}
			}
		}
	}
	c.Report(c.csvObj(), "spec.install.spec.deployments", fmt.Sprintf("the CSV declares disconnected support (%s) but no container has a RELATED_IMAGE_* variable: the operator cannot learn the mirrored images", by),
		"pass each operand image to the operator as RELATED_IMAGE_<NAME>")
}

func checkSCC(c *Context) {
	for i, p := range c.CSV.Spec.Install.Spec.ClusterPermissions {
		for j, r := range p.Rules {
			if !ruleNames(r, "apiGroups", "security.openshift.io") || !ruleNames(r, "resources", "securitycontextconstraints") {
				continue
			}
			var names []string
			for _, n := range bundle.Slice(r, "resourceNames") {
				if s, ok := n.(string); ok {
					names = append(names, s)
				}
			}
			field := fmt.Sprintf("spec.install.spec.clusterPermissions[%d].rules[%d]", i, j)
			switch len(names) {
			case 0:
				c.ReportAs(Warning, c.csvObj(), field, fmt.Sprintf("service account %q may use every SecurityContextConstraints, privileged included: the rule names none", p.ServiceAccountName),
					"name the SCC the operator needs in resourceNames")
			case 1:
				c.Report(c.csvObj(), field, fmt.Sprintf("service account %q asks for the SecurityContextConstraints %q: a cluster administrator may need to allow it", p.ServiceAccountName, names[0]), "")
			default:
				c.ReportAs(Warning, c.csvObj(), field, fmt.Sprintf("service account %q asks for %d SecurityContextConstraints (%s); preflight accepts one at a time", p.ServiceAccountName, len(names), strings.Join(names, ", ")),
					"ask for one SCC")
			}
		}
	}
}
