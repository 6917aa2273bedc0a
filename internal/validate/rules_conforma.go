package validate

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/opmkit/opm/internal/bundle"
)

// Conforma rules: the checks of Conforma's olm release policy (Konflux
// runs it before releasing an operator bundle) that need no snapshot of
// the release and no registry. Opt-in: --select conforma.
var (
	RuleConformaSubscription = register(&Rule{ID: "conforma-valid-subscription", Severity: Error, Scope: ScopeCSV, Set: SetConforma,
		What: "The CSV's operators.openshift.io/valid-subscription annotation is a JSON list of one or more distinct strings, e.g. '[\"OpenShift Container Platform\"]'.",
		Why:  "The OpenShift console and Red Hat's catalogs show which subscriptions entitle a customer to the operator from it; Conforma's subscriptions_annotation_format refuses a bundle without it, or with a value that is not such a list.",
		Fix:  "Set operators.openshift.io/valid-subscription: '[\"<subscription>\", ...]'."})
	RuleConformaFeatures = register(&Rule{ID: "conforma-feature-annotations", Severity: Error, Scope: ScopeCSV, Set: SetConforma,
		What: "Each of the seven features.operators.openshift.io annotations preflight requires is on the CSV as \"true\" or \"false\" (one finding per bundle, listing those missing or wrong).",
		Why:  "Conforma's feature_annotations_format refuses a release without them (preflight-feature-annotations checks the same at preflight's level, a warning).",
		Fix:  "Add each annotation with the quoted value \"true\" or \"false\"."})
	RuleConformaUnpinned = register(&Rule{ID: "conforma-unpinned-references", Severity: Error, Scope: ScopeCSV, Set: SetConforma,
		What: "Every image the CSV names is pinned by digest: containerImage, container and init container images, RELATED_IMAGE_* variables, spec.relatedImages, and image references written in any annotation (of the CSV or a deployment's pod template).",
		Why:  "A tag can be moved to another image after the release is approved; Conforma's unpinned_references refuses a bundle with an unpinned reference. It takes every word of every annotation that parses as a reference for one, so prose (AI/Machine Learning, Developer Tools) and URLs can pass for images; opm takes a word for an image only when it parses as a reference and names a digest, or a registry (a host with a dot or a port, or localhost) and a tag (go.kubebuilder.io/v4 in project_layout is no image).",
		Fix:  "Pin the image: <image>@sha256:<digest> (skopeo inspect --format '{{.Digest}}' docker://<image>)."})
	RuleConformaKinds = register(&Rule{ID: "conforma-allowed-kinds", Severity: Error, Scope: ScopeBundle, Set: SetConforma,
		What: "Every manifest of the bundle is of a kind Conforma's olm policy allows: ClusterServiceVersion, CustomResourceDefinition, Secret, ConfigMap, ServiceAccount, Service, ClusterRole(Binding), Role(Binding), PrometheusRule, ServiceMonitor, PodDisruptionBudget, PriorityClass, VerticalPodAutoscaler and the console kinds (ConsoleYAMLSample, ConsoleQuickStart, ConsoleCLIDownload, ConsoleLink, ConsolePlugin).",
		Why:  "OLM installs only some kinds from a bundle, and Conforma's allowed_resource_kinds refuses the others (a NetworkPolicy among them, until OLM can install it on every release).",
		Fix:  "Remove the manifest from the bundle and have the operator create the object at run time."})
	RuleConformaNetworkPolicyRBAC = register(&Rule{ID: "conforma-network-policy-rbac", Severity: Error, Scope: ScopeCSV, Set: SetConforma,
		What: "The CSV's permissions or clusterPermissions let the operator create, delete and update or patch networking.k8s.io networkpolicies (or grant every verb, group or resource).",
		Why:  "Operators are to manage the network policies of their operands; Conforma's required_network_policy_rbac_for_operands refuses a bundle whose operator may not (its exception list, by operator and release, is Konflux configuration: skip the rule for an excepted operator).",
		Fix:  "Add a rule: apiGroups [networking.k8s.io], resources [networkpolicies], verbs [create, delete, get, list, patch, update, watch]."})
	RuleConformaImageIndex = register(&Rule{ID: "conforma-bundle-image-index", Severity: Error, Scope: ScopeBundle, Set: SetConforma,
		What: "A bundle given as an image reference is a single image, not a manifest list or OCI image index.",
		Why:  "A bundle holds only manifests, the same on every architecture; Conforma's olm_bundle_multi_arch refuses an index, which some tools fail to read as a bundle.",
		Fix:  "Build and push the bundle image for one platform (e.g. linux/amd64), without an index."})
)

// ConformaKinds are the kinds Conforma's olm policy allows in a bundle (its
// default allowed_olm_resource_kinds rule data).
var ConformaKinds = []string{
	"ClusterServiceVersion", "CustomResourceDefinition", "Secret", "ClusterRole", "ClusterRoleBinding",
	"ConfigMap", "ServiceAccount", "Service", "Role", "RoleBinding", "PrometheusRule", "ServiceMonitor",
	"PodDisruptionBudget", "PriorityClass", "VerticalPodAutoscaler", "ConsoleYAMLSample",
	"ConsoleQuickStart", "ConsoleCLIDownload", "ConsoleLink", "ConsolePlugin",
}

const validSubscription = "operators.openshift.io/valid-subscription"

// imageRefRE is the grammar of an image reference: an optional registry,
// lower-case path components, an optional tag and an optional digest.
var imageRefRE = regexp.MustCompile(`^(?:((?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?)/)?` +
	`[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*` +
	`(?::[\w][\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$`)

// annotationImage says whether a word of an annotation is an image
// reference: it parses as one and names a digest, or a registry and a tag.
// A bare "a/b" (prose such as and/or), a URL or a host and path without
// a tag is not taken for an image.
func annotationImage(word string) bool {
	// Cheap tests first: most words of an annotation are no reference.
	if !strings.ContainsAny(word, ":@") || strings.Contains(word, "://") {
		return false
	}
	m := imageRefRE.FindStringSubmatch(word)
	if m == nil {
		return false
	}
	host := m[1]
	if strings.Contains(word, "@") {
		return true
	}
	// A tag is required too: go.kubebuilder.io/v4 (the project_layout
	// annotation) and example.com/docs are a registry and a path as much
	// as an image.
	last := word[strings.LastIndexByte(word, '/')+1:]
	return host != "" && (strings.ContainsAny(host, ".:") || host == "localhost") && strings.Contains(last, ":")
}

var annotationWordSep = regexp.MustCompile(`[,;\s]+`)

func init() {
	RuleConformaSubscription.check = func(c *Context) {
		meta, _ := c.CSV.Object.Map()["metadata"].(map[string]any)
		ann, _ := meta["annotations"].(map[string]any)
		field := fmt.Sprintf("metadata.annotations[%q]", validSubscription)
		raw, ok := ann[validSubscription]
		if !ok {
			c.Report(c.csvObj(), "metadata.annotations", validSubscription+" is not set", `set it to a JSON list of subscriptions, e.g. '["OpenShift Container Platform"]'`)
			return
		}
		s, isString := raw.(string)
		var list []any
		switch {
		case !isString:
			c.Report(c.csvObj(), field, fmt.Sprintf("%s is the YAML %v, not a string", validSubscription, raw), `quote it: '["OpenShift Container Platform"]'`)
			return
		case json.Unmarshal([]byte(s), &list) != nil:
			c.Report(c.csvObj(), field, fmt.Sprintf("%s is %q, not a JSON list", validSubscription, s), `write a JSON list of strings: '["OpenShift Container Platform"]'`)
			return
		case len(list) == 0:
			c.Report(c.csvObj(), field, validSubscription+" is an empty list", "name at least one subscription")
			return
		}
		seen := map[string]bool{}
		for i, v := range list {
			str, ok := v.(string)
			if !ok {
				c.Report(c.csvObj(), field, fmt.Sprintf("%s item %d is %v, not a string", validSubscription, i, v), "quote every subscription name")
				return
			}
			if seen[str] {
				c.Report(c.csvObj(), field, fmt.Sprintf("%s lists %q twice", validSubscription, str), "list each subscription once")
				return
			}
			seen[str] = true
		}
	}
	RuleConformaFeatures.check = func(c *Context) {
		meta, _ := c.CSV.Object.Map()["metadata"].(map[string]any)
		ann, _ := meta["annotations"].(map[string]any)
		// One finding for the bundle: the annotations go in together.
		var missing, wrong []string
		field := "metadata.annotations"
		for _, name := range FeatureAnnotations {
			key := featurePrefix + name
			raw, ok := ann[key]
			if v, _ := raw.(string); ok && (v == "true" || v == "false") {
				continue
			}
			if !ok {
				missing = append(missing, name)
				continue
			}
			wrong = append(wrong, fmt.Sprintf("%s is %#v", name, raw))
			if len(wrong) == 1 && len(missing) == 0 {
				field = fmt.Sprintf("metadata.annotations[%q]", key)
			}
		}
		if len(missing)+len(wrong) == 0 {
			return
		}
		if len(missing) > 0 || len(wrong) > 1 {
			field = "metadata.annotations"
		}
		var parts []string
		if len(missing) > 0 {
			parts = append(parts, "not set: "+strings.Join(missing, ", "))
		}
		if len(wrong) > 0 {
			parts = append(parts, "not the string \"true\" or \"false\": "+strings.Join(wrong, ", "))
		}
		c.Report(c.csvObj(), field, fmt.Sprintf("%d of the %d %s* annotations Konflux's Conforma policy requires (feature_annotations_format: the console filters operators by them) are wrong; %s",
			len(missing)+len(wrong), len(FeatureAnnotations), featurePrefix, strings.Join(parts, "; ")),
			`add each under metadata.annotations with the quoted value "true" or "false"`)
	}
	RuleConformaUnpinned.check = checkConformaUnpinned
	RuleConformaKinds.check = func(c *Context) {
		for _, o := range c.Bundle.Objects {
			if !contains(ConformaKinds, o.Kind) {
				c.Report(o, "kind", fmt.Sprintf("kind %q is not one Conforma's olm policy allows in a bundle", o.Kind), "remove it; the operator can create it at run time")
			}
		}
	}
	RuleConformaNetworkPolicyRBAC.check = func(c *Context) {
		inst := c.CSV.Spec.Install.Spec
		for _, perms := range [][]bundle.StrategyPermission{inst.ClusterPermissions, inst.Permissions} {
			for _, p := range perms {
				for _, r := range p.Rules {
					if grantsNetworkPolicies(r) {
						return
					}
				}
			}
		}
		c.Report(c.csvObj(), "spec.install.spec", fmt.Sprintf("%s may not manage NetworkPolicies: no permission grants create, delete and update or patch on networking.k8s.io networkpolicies. Konflux's Conforma policy (required_network_policy_rbac_for_operands) requires it, so that operators can restrict their operands' network traffic", c.CSV.Metadata.Name),
			"add a clusterPermissions or permissions rule for networking.k8s.io networkpolicies with create, delete, patch and update")
	}
	RuleConformaImageIndex.check = func(c *Context) {
		if c.Bundle.IndexDigest != "" {
			c.ReportFile("", 0, "", fmt.Sprintf("the bundle image %s is an image index (%s), not a single image", c.Path, c.Bundle.IndexDigest),
				"push the bundle for one platform, without an index")
		}
	}
}

// grantsNetworkPolicies says whether an RBAC rule lets its subject create,
// delete and update or patch networking.k8s.io networkpolicies.
func grantsNetworkPolicies(r any) bool {
	if !ruleGrants(r, "apiGroups", "networking.k8s.io") || !ruleGrants(r, "resources", "networkpolicies") {
		return false
	}
	verbs := map[string]bool{}
	for _, v := range bundle.Slice(r, "verbs") {
		if s, ok := v.(string); ok {
			verbs[s] = true
		}
	}
	return verbs["*"] || verbs["create"] && verbs["delete"] && (verbs["update"] || verbs["patch"])
}

func checkConformaUnpinned(c *Context) {
	reported := map[string]bool{}
	report := func(field, where, img string) {
		if reported[field+" "+img] {
			return
		}
		reported[field+" "+img] = true
		c.Report(c.csvObj(), field, fmt.Sprintf("%s is %s, not pinned by digest", where, img), "pin it: "+img+"@sha256:<digest>")
	}
	for _, p := range c.pullSpecs() {
		if img := strings.TrimSpace(p.image); img != "" && !Pinned(img) {
			report(p.field, p.where, img)
		}
	}
	scan := func(prefix, owner string, ann map[string]any) {
		keys := make([]string, 0, len(ann))
		for k := range ann {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			s, ok := ann[k].(string)
			if !ok || prefix == "metadata" && k == "containerImage" {
				continue // containerImage is a pull spec, above
			}
			for _, w := range annotationWordSep.Split(s, -1) {
				if w != "" && annotationImage(w) && !Pinned(w) {
					report(fmt.Sprintf("%s.annotations[%q]", prefix, k), fmt.Sprintf("the %s annotation of %s names the image", k, owner), w)
				}
			}
		}
	}
	// Every metadata.annotations in the CSV, as Conforma walks the whole
	// document: the CSV's own, pod templates', any other. The path is kept
	// as parts and joined only where annotations are found.
	var parts []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if meta, ok := v["metadata"].(map[string]any); ok {
				if ann, ok := meta["annotations"].(map[string]any); ok {
					path, owner := strings.Join(parts, ""), "the CSV"
					if path != "" {
						owner = path
					}
					scan(joinPath(path, "metadata"), owner, ann)
				}
			}
			keys := make([]string, 0, len(v))
			for k, x := range v {
				switch x.(type) {
				case map[string]any, []any:
					if k != "metadata" || len(parts) > 0 {
						keys = append(keys, k)
					}
				}
			}
			sort.Strings(keys)
			for _, k := range keys {
				sep := "."
				if len(parts) == 0 {
					sep = ""
				}
				parts = append(parts, sep+k)
				walk(v[k])
				parts = parts[:len(parts)-1]
			}
		case []any:
			for i, x := range v {
				switch x.(type) {
				case map[string]any, []any:
					parts = append(parts, "["+strconv.Itoa(i)+"]")
					walk(x)
					parts = parts[:len(parts)-1]
				}
			}
		}
	}
	walk(c.CSV.Object.Map())
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
