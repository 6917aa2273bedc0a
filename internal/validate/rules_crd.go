package validate

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/bundle"
)

func bundleRule(id string, sev Severity, what, why, fix string, check func(*Context)) {
	register(&Rule{ID: id, Severity: sev, Scope: ScopeBundle, What: what, Why: why, Fix: fix, check: check})
}

// crdRule registers a rule over each CRD on its own; it runs without a CSV.
func crdRule(id string, sev Severity, what, why, fix string, check func(*Context, *bundle.CRD)) {
	register(&Rule{ID: id, Severity: sev, Scope: ScopeBundle, NoCSV: true, What: what, Why: why, Fix: fix,
		check: func(c *Context) {
			for _, crd := range c.Bundle.CRDs {
				check(c, crd)
			}
		}})
}

// Owned and required CRDs in the CSV.
func init() {
	csvRule("csv-owned-crds", Error,
		"Each spec.customresourcedefinitions.owned entry has name <plural>.<group>, a version and a kind, and is listed once.",
		"OLM finds the CRD by this name and the API by group, version and kind; a malformed entry makes upstream fail with \"couldn't parse plural.group from crd name\".",
		"Write name: <plural>.<group> (e.g. widgets.example.com), version and kind.",
		func(c *Context) {
			seen := map[string]int{}
			for i, o := range c.CSV.Spec.CustomResourceDefinitions.Owned {
				f := fmt.Sprintf("spec.customresourcedefinitions.owned[%d]", i)
				checkCRDDescription(c, f, o)
				key := o.Name + "/" + o.Version
				if prev, dup := seen[key]; dup {
					c.Report(c.csvObj(), f, fmt.Sprintf("owned CRD %s version %s is listed twice (also owned[%d])", o.Name, o.Version, prev), "keep one entry per CRD version")
				}
				seen[key] = i
			}
		})

	csvRule("csv-required-crds", Error,
		"Each spec.customresourcedefinitions.required entry has name <plural>.<group>, a version and a kind, and is not also owned.",
		"OLM resolves required APIs from other operators by group, version and kind; a malformed entry can never be satisfied, so the install waits forever.",
		"Write name: <plural>.<group>, version and kind of the API needed.",
		func(c *Context) {
			owned := map[string]bool{}
			for _, o := range c.CSV.Spec.CustomResourceDefinitions.Owned {
				owned[o.Name] = true
			}
			for i, r := range c.CSV.Spec.CustomResourceDefinitions.Required {
				f := fmt.Sprintf("spec.customresourcedefinitions.required[%d]", i)
				checkCRDDescription(c, f, r)
				if owned[r.Name] {
					c.ReportAs(Warning, c.csvObj(), f+".name", fmt.Sprintf("CRD %s is both owned and required", r.Name), "remove it from required: the operator provides it")
				}
			}
		})

	bundleRule("csv-owned-crd-present", Error,
		"Each owned CRD is in the bundle, with the group, kind and (served) version the CSV lists.",
		"OLM installs the owned CRDs from the bundle; a missing CRD or a version it does not serve leaves the operator's API absent and the install fails.",
		"Add the CRD manifest to manifests/, or fix the owned entry to match it.",
		func(c *Context) {
			byName := map[string]*bundle.CRD{}
			for _, crd := range c.Bundle.CRDs {
				byName[crd.Name] = crd
			}
			for i, o := range c.CSV.Spec.CustomResourceDefinitions.Owned {
				f := fmt.Sprintf("spec.customresourcedefinitions.owned[%d]", i)
				crd := byName[o.Name]
				if crd == nil {
					c.Report(c.csvObj(), f+".name", fmt.Sprintf("owned CRD %s is not in the bundle", o.Name), fmt.Sprintf("add the CustomResourceDefinition %s to manifests/", o.Name))
					continue
				}
				_, group, _ := strings.Cut(o.Name, ".")
				if crd.Group != group {
					c.Report(c.csvObj(), f+".name", fmt.Sprintf("owned CRD %s: the CRD's group is %q (in %s)", o.Name, crd.Group, crd.Object.File), "make the owned name <plural>.<group> of the CRD")
				}
				if o.Kind != "" && crd.Kind != o.Kind {
					c.Report(c.csvObj(), f+".kind", fmt.Sprintf("owned CRD %s lists kind %q but the CRD's kind is %q (%s)", o.Name, o.Kind, crd.Kind, crd.Object.File), fmt.Sprintf("set kind: %s", crd.Kind))
				}
				if o.Version != "" && !crd.ServedVersion(o.Version) {
					var served []string
					for _, v := range crd.Versions {
						if v.Served {
							served = append(served, v.Name)
						}
					}
					what := "does not have"
					if crd.HasVersion(o.Version) {
						what = "does not serve"
					}
					c.Report(c.csvObj(), f+".version", fmt.Sprintf("owned CRD %s lists version %s, which the CRD %s (%s)", o.Name, o.Version, what, crd.Object.File),
						fmt.Sprintf("list a served version: %s", strings.Join(served, ", ")))
				}
			}
		})

	register(&Rule{ID: "crd-not-owned", Severity: Error, Scope: ScopeBundle,
		What: "Every CRD in manifests/ is listed in spec.customresourcedefinitions.owned.",
		Why:  "OLM creates the CRD but does not tie it to the operator: its resolver knows only the APIs a CSV owns, so operators that require this API never find it provided, the console does not show it, and upgrades and uninstalls leave it behind. operator-sdk refuses such a bundle (since 2020).",
		Fix:  "Add an owned entry (name, version, kind) for the CRD, or remove the CRD from the bundle.",
		check: func(c *Context) {
			owned := map[string]bool{}
			for _, o := range c.CSV.Spec.CustomResourceDefinitions.Owned {
				owned[o.Name] = true
			}
			for _, crd := range c.Bundle.CRDs {
				if crd.Name != "" && !owned[crd.Name] {
					storage := ""
					for _, v := range crd.Versions {
						if v.Storage {
							storage = v.Name
						}
					}
					c.Report(crd.Object, "metadata.name", fmt.Sprintf("CRD %s is in the bundle but the CSV does not own it", crd.Name),
						fmt.Sprintf("add to spec.customresourcedefinitions.owned: {name: %s, version: %s, kind: %s}", crd.Name, storage, crd.Kind))
				}
			}
		}})

	register(&Rule{ID: "crd-duplicate", Severity: Error, Scope: ScopeBundle, NoCSV: true,
		What: "Each CRD is in the bundle once.",
		Why:  "Two manifests for one CRD overwrite each other when installed; which one wins depends on file order.",
		Fix:  "Keep one manifest per CRD (merge their versions).",
		check: func(c *Context) {
			seen := map[string]*bundle.CRD{}
			for _, crd := range c.Bundle.CRDs {
				if crd.Name == "" {
					continue
				}
				if prev, dup := seen[crd.Name]; dup {
					c.Report(crd.Object, "metadata.name", fmt.Sprintf("CRD %s is defined twice (also in %s)", crd.Name, prev.Object.File), "keep one manifest for it")
					continue
				}
				seen[crd.Name] = crd
			}
		}})
}

func checkCRDDescription(c *Context, f string, d bundle.CRDDescription) {
	plural, group, ok := strings.Cut(d.Name, ".")
	switch {
	case d.Name == "":
		c.Report(c.csvObj(), f+".name", "CRD entry has no name", "write name: <plural>.<group>")
	case !ok || plural == "" || !strings.Contains(group, "."):
		c.Report(c.csvObj(), f+".name", fmt.Sprintf("CRD name %q is not <plural>.<group>", d.Name), "write it as e.g. widgets.example.com")
	case len(dns1123Subdomain(d.Name)) > 0:
		c.Report(c.csvObj(), f+".name", fmt.Sprintf("CRD name %q is not a valid name: %s", d.Name, strings.Join(dns1123Subdomain(d.Name), "; ")), "use lower case letters, digits, '-' and '.'")
	}
	if d.Version == "" {
		c.Report(c.csvObj(), f+".version", fmt.Sprintf("CRD entry %s has no version", d.Name), "set the API version, e.g. v1")
	}
	if d.Kind == "" {
		c.Report(c.csvObj(), f+".kind", fmt.Sprintf("CRD entry %s has no kind", d.Name), "set the kind, e.g. Widget")
	}
}

// CRDs as the API server checks them.
func init() {
	crdRule("crd-name", Error,
		"A CRD's metadata.name is <spec.names.plural>.<spec.group>, and it has a group, plural and kind.",
		"The API server refuses a CRD whose name does not match; OLM then fails the whole install.",
		"Set metadata.name to <plural>.<group>.",
		func(c *Context, crd *bundle.CRD) {
			var missing []string
			for _, kv := range [][2]string{{"spec.group", crd.Group}, {"spec.names.plural", crd.Plural}, {"spec.names.kind", crd.Kind}} {
				if kv[1] == "" {
					missing = append(missing, kv[0])
				}
			}
			if len(missing) > 0 {
				c.Report(crd.Object, missing[0], fmt.Sprintf("CRD %s has no %s", crd.Name, strings.Join(missing, ", ")), "fill them in")
				return
			}
			if want := crd.Plural + "." + crd.Group; crd.Name != want {
				c.Report(crd.Object, "metadata.name", fmt.Sprintf("CRD name %q is not <plural>.<group> (%s)", crd.Name, want), fmt.Sprintf("set metadata.name: %s", want))
			}
		})

	crdRule("crd-scope", Error,
		"A CRD's spec.scope is Namespaced or Cluster.",
		"The API server refuses any other scope.",
		"Set spec.scope: Namespaced (or Cluster).",
		func(c *Context, crd *bundle.CRD) {
			if crd.Scope != bundle.ScopeNamespaced && crd.Scope != bundle.ScopeClusterWide {
				hint := "set spec.scope: Namespaced or Cluster"
				if cl := closest(crd.Scope, []string{bundle.ScopeNamespaced, bundle.ScopeClusterWide}); cl != "" && crd.Scope != "" {
					hint = "did you mean " + cl + "?"
				}
				c.Report(crd.Object, "spec.scope", fmt.Sprintf("CRD %s has scope %q", crd.Name, crd.Scope), hint)
			}
		})

	crdRule("crd-versions", Error,
		"A CRD has at least one version, at least one served, and exactly one storage version, each listed once.",
		"The API server refuses a CRD without exactly one storage version or with no served version.",
		"Mark one version storage: true and at least one served: true.",
		func(c *Context, crd *bundle.CRD) {
			if len(crd.Versions) == 0 {
				c.Report(crd.Object, "spec.versions", fmt.Sprintf("CRD %s has no versions", crd.Name), "add spec.versions with one served and storage version")
				return
			}
			served, storage := 0, 0
			seen := map[string]bool{}
			for _, v := range crd.Versions {
				if v.Served {
					served++
				}
				if v.Storage {
					storage++
				}
				if seen[v.Name] {
					c.Report(crd.Object, v.Field+".name", fmt.Sprintf("CRD %s lists version %s twice", crd.Name, v.Name), "list each version once")
				}
				seen[v.Name] = true
			}
			if served == 0 {
				c.Report(crd.Object, "spec.versions", fmt.Sprintf("CRD %s serves no version", crd.Name), "set served: true on at least one version")
			}
			if storage != 1 {
				c.Report(crd.Object, "spec.versions", fmt.Sprintf("CRD %s has %d storage versions; it needs exactly one", crd.Name, storage), "set storage: true on exactly one version")
			}
		})

	crdRule("crd-preserve-unknown-fields", Error,
		"A CRD does not keep unknown fields wholesale: spec.preserveUnknownFields is not true (in apiextensions.k8s.io/v1beta1 it must be set to false, since it defaults to true).",
		"apiextensions.k8s.io/v1 refuses preserveUnknownFields: true. A v1beta1 CRD that leaves it unset gets true, so it cannot be served as v1 (the only CRD API since Kubernetes 1.22) and its objects are never pruned; operator-sdk reports the same error.",
		"Set spec.preserveUnknownFields: false (v1beta1) or remove it (v1), and put x-kubernetes-preserve-unknown-fields: true in the schema only where needed.",
		func(c *Context, crd *bundle.CRD) {
			p := crd.PreserveUnknownFields
			switch {
			case crd.IsV1() && p != nil && *p:
				c.Report(crd.Object, "spec.preserveUnknownFields", fmt.Sprintf("CRD %s sets preserveUnknownFields: true, which apiextensions.k8s.io/v1 refuses", crd.Name),
					"remove it and set x-kubernetes-preserve-unknown-fields: true in spec.versions[*].schema.openAPIV3Schema where needed")
			case !crd.IsV1() && p != nil && *p:
				c.Report(crd.Object, "spec.preserveUnknownFields", fmt.Sprintf("CRD %s sets preserveUnknownFields: true; it cannot be served as apiextensions.k8s.io/v1", crd.Name),
					"set spec.preserveUnknownFields: false (and move the CRD to apiextensions.k8s.io/v1)")
			case !crd.IsV1() && p == nil:
				c.Report(crd.Object, "spec", fmt.Sprintf("CRD %s does not set preserveUnknownFields, which defaults to true in %s; it cannot be served as apiextensions.k8s.io/v1", crd.Name, crd.Object.APIVersion),
					"set spec.preserveUnknownFields: false (and move the CRD to apiextensions.k8s.io/v1)")
			}
		})

	crdRule("crd-schema", Error,
		"Every version of an apiextensions.k8s.io/v1 CRD has a schema.openAPIV3Schema.",
		"The API server refuses a v1 CRD version without a structural schema.",
		"Add schema.openAPIV3Schema to each version (at least type: object with x-kubernetes-preserve-unknown-fields: true).",
		func(c *Context, crd *bundle.CRD) {
			if !crd.IsV1() {
				return
			}
			for _, v := range crd.Versions {
				if !v.HasSchema {
					c.Report(crd.Object, v.Field, fmt.Sprintf("CRD %s version %s has no schema.openAPIV3Schema", crd.Name, v.Name), "add schema.openAPIV3Schema (type: object, ...)")
				}
			}
		})
}

// Removed Kubernetes APIs: group/version (and kinds; "" = every kind) and the
// release that removed them.
var removedAPIs = []struct {
	groupVersion string
	kinds        []string
	removedIn    string
	replacement  string
}{
	{"extensions/v1beta1", []string{"Deployment", "DaemonSet", "ReplicaSet", "NetworkPolicy", "PodSecurityPolicy"}, "1.16", "apps/v1 (networking.k8s.io/v1 for NetworkPolicy)"},
	{"apps/v1beta1", nil, "1.16", "apps/v1"},
	{"apps/v1beta2", nil, "1.16", "apps/v1"},
	{"apiextensions.k8s.io/v1beta1", nil, "1.22", "apiextensions.k8s.io/v1"},
	{"admissionregistration.k8s.io/v1beta1", nil, "1.22", "admissionregistration.k8s.io/v1"},
	{"apiregistration.k8s.io/v1beta1", nil, "1.22", "apiregistration.k8s.io/v1"},
	{"authentication.k8s.io/v1beta1", nil, "1.22", "authentication.k8s.io/v1"},
	{"authorization.k8s.io/v1beta1", nil, "1.22", "authorization.k8s.io/v1"},
	{"certificates.k8s.io/v1beta1", nil, "1.22", "certificates.k8s.io/v1"},
	{"coordination.k8s.io/v1beta1", nil, "1.22", "coordination.k8s.io/v1"},
	{"extensions/v1beta1", []string{"Ingress"}, "1.22", "networking.k8s.io/v1"},
	{"networking.k8s.io/v1beta1", nil, "1.22", "networking.k8s.io/v1"},
	{"rbac.authorization.k8s.io/v1beta1", nil, "1.22", "rbac.authorization.k8s.io/v1"},
	{"scheduling.k8s.io/v1beta1", nil, "1.22", "scheduling.k8s.io/v1"},
	{"storage.k8s.io/v1beta1", []string{"CSIDriver", "CSINode", "StorageClass", "VolumeAttachment"}, "1.22", "storage.k8s.io/v1"},
	{"batch/v1beta1", nil, "1.25", "batch/v1"},
	{"discovery.k8s.io/v1beta1", nil, "1.25", "discovery.k8s.io/v1"},
	{"events.k8s.io/v1beta1", nil, "1.25", "events.k8s.io/v1"},
	{"autoscaling/v2beta1", nil, "1.25", "autoscaling/v2"},
	{"policy/v1beta1", nil, "1.25", "policy/v1 (PodSecurityPolicy has no replacement)"},
	{"node.k8s.io/v1beta1", nil, "1.25", "node.k8s.io/v1"},
	{"autoscaling/v2beta2", nil, "1.26", "autoscaling/v2"},
	{"flowcontrol.apiserver.k8s.io/v1beta1", nil, "1.26", "flowcontrol.apiserver.k8s.io/v1"},
	{"storage.k8s.io/v1beta1", []string{"CSIStorageCapacity"}, "1.27", "storage.k8s.io/v1"},
	{"flowcontrol.apiserver.k8s.io/v1beta2", nil, "1.29", "flowcontrol.apiserver.k8s.io/v1"},
	{"flowcontrol.apiserver.k8s.io/v1beta3", nil, "1.32", "flowcontrol.apiserver.k8s.io/v1"},
}

func init() {
	bundleRule("k8s-removed-api", Warning,
		"No manifest uses a Kubernetes API version that has been removed.",
		"A cluster at or past the removal release refuses the object, so the install fails there (apiextensions.k8s.io/v1beta1 CRDs are gone since 1.22). It is an error when minKubeVersion or --k8s-version is at or past the removal, a warning otherwise.",
		"Move the manifest to the replacement API version.",
		func(c *Context) {
			target, hasTarget := c.kubeTarget()
			for _, o := range c.Bundle.Objects {
				for _, r := range removedAPIs {
					if o.APIVersion != r.groupVersion || (r.kinds != nil && !contains(r.kinds, o.Kind)) {
						continue
					}
					removed := semver.MustParse(r.removedIn + ".0")
					sev := Warning
					msg := fmt.Sprintf("%s %s uses %s, removed in Kubernetes %s", o.Kind, o.Name, o.APIVersion, r.removedIn)
					if hasTarget && target.GTE(removed) {
						sev = Error
						msg += fmt.Sprintf("; the bundle targets %d.%d", target.Major, target.Minor)
					}
					c.ReportAs(sev, o, "apiVersion", msg, "use "+r.replacement)
				}
			}
		})
}

// Bundle size. OLM unpacks a bundle into a ConfigMap, which etcd caps at
// 1 MiB; the content is stored gzip-compressed.
const (
	maxBundleSize     = 1 << 20
	bundleSizeWarning = 0.85
)

func init() {
	bundleRule("bundle-size", Error,
		"The gzip-compressed manifests fit OLM's 1 MiB limit (warning above 85%).",
		"OLM unpacks a bundle into a ConfigMap, which etcd caps at 1 MiB (compressed); a larger bundle cannot be installed.",
		"Shrink the CRDs (drop descriptions from the schemas) or split the operator.",
		func(c *Context) {
			var raw int
			for _, f := range c.Bundle.Files {
				if strings.HasPrefix(f.Name, bundle.ManifestsDir+"/") {
					raw += len(f.Data)
				}
			}
			// gzip never grows data by more than a few bytes per block, so a
			// bundle well under the limit raw is under it compressed too.
			if float64(raw)*1.001+64 < bundleSizeWarning*maxBundleSize {
				return
			}
			if float64(gzipSizeFast(c.Bundle)) < 0.9*bundleSizeWarning*maxBundleSize {
				// gzip's default level, which OLM's measure uses, never
				// does much worse than its fastest: well under the
				// warning there is under it for OLM too, at a fifth of
				// the CPU on the megabyte CRDs real catalogs carry.
				return
			}
			size := gzipSize(c.Bundle)
			switch {
			case size > maxBundleSize:
				c.ReportFile(bundle.ManifestsDir+"/", 0, "", fmt.Sprintf("compressed manifests are %s, over OLM's 1 MiB limit", humanBytes(size)), c.rule.Fix)
			case float64(size) > bundleSizeWarning*maxBundleSize:
				c.ReportFileAs(Warning, bundle.ManifestsDir+"/", 0, "", fmt.Sprintf("compressed manifests are %s, %.0f%% of OLM's 1 MiB limit", humanBytes(size), 100*float64(size)/maxBundleSize), c.rule.Fix)
			}
		})
}

func gzipSize(b *bundle.Bundle) int {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for _, f := range b.Files {
		if strings.HasPrefix(f.Name, bundle.ManifestsDir+"/") {
			_, _ = io.Copy(zw, bytes.NewReader(f.Data))
		}
	}
	_ = zw.Close()
	return buf.Len()
}

// gzipSizeFast is the size of the manifests at gzip's fastest level (an
// upper estimate of gzipSize's).
func gzipSizeFast(b *bundle.Bundle) int {
	var n countWriter
	zw, _ := gzip.NewWriterLevel(&n, gzip.BestSpeed)
	for _, f := range b.Files {
		if strings.HasPrefix(f.Name, bundle.ManifestsDir+"/") {
			_, _ = zw.Write(f.Data)
		}
	}
	_ = zw.Close()
	return int(n)
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }

func humanBytes(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
