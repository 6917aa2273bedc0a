package validate

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/opmkit/opm/internal/bundle"
)

// OLM v1 (operator-controller) rules: what it refuses or limits when it
// installs a registry+v1 bundle. Opt-in: --select olmv1. The catalog side
// of the same rules (bundle properties in a file-based catalog) is checked
// by internal/fbc with these rule ids.
var (
	RuleOLMv1AllNamespaces = register(&Rule{ID: "olmv1-all-namespaces", Severity: Error, Scope: ScopeCSV, Set: SetOLMv1,
		What: "The CSV supports the AllNamespaces install mode (in a catalog: the olm.csv.metadata or olm.bundle.object CSV of each bundle).",
		Why:  "operator-controller installs a bundle cluster-wide, watching all namespaces; it refuses bundles without AllNamespaces unless its SingleOwnNamespaceInstallSupport feature gate (off by default) is on, and even then only SingleNamespace and OwnNamespace work.",
		Fix:  "Make the operator watch all namespaces and mark {type: AllNamespaces, supported: true} in spec.installModes."})
	RuleOLMv1Dependencies = register(&Rule{ID: "olmv1-dependencies", Severity: Error, Scope: ScopeBundle, Set: SetOLMv1,
		What: "The bundle declares no dependencies: no olm.gvk, olm.package or olm.constraint entry in metadata/dependencies.yaml, no olm.gvk.required, olm.package.required or olm.constraint property, no required CRDs or API services in the CSV (in a catalog: no such bundle property).",
		Why:  "operator-controller does not resolve dependencies: it refuses a bundle that declares olm.gvk.required, olm.package.required or olm.constraint (a CSV's required CRDs and API services become olm.gvk.required in a catalog).",
		Fix:  "Drop the dependency and document that the other operator must be installed first (OLM v1 installs each ClusterExtension on its own)."})
	RuleOLMv1Webhooks = register(&Rule{ID: "olmv1-webhooks", Severity: Warning, Scope: ScopeCSV, Set: SetOLMv1,
		What: "Webhooks are of a shape operator-controller installs: it needs a certificate provider in the cluster (warning); conversion webhooks only in bundles that support AllNamespaces alone, admission rules not on olm.operatorframework.io, * or webhook configurations, DNS-1123 names unique per type, an existing deployment, conversion CRDs owned and each converted by one webhook (errors).",
		Why:  "operator-controller installs webhookdefinitions only when a certificate provider (cert-manager, or OpenShift's service CA) is configured, and refuses bundles whose webhooks break these constraints.",
		Fix:  "Make sure the clusters have cert-manager (or OpenShift's service CA), and correct the webhook as the message says."})
	RuleOLMv1APIServices = register(&Rule{ID: "olmv1-apiservices", Severity: Error, Scope: ScopeCSV, Set: SetOLMv1,
		What: "The CSV owns no API services (spec.apiservicedefinitions.owned).",
		Why:  "operator-controller refuses bundles with owned apiservicedefinitions: it does not create APIService objects.",
		Fix:  "Serve the API with CRDs, or ship it in a separate install that OLM v1 does not manage."})
	RuleOLMv1Deployments = register(&Rule{ID: "olmv1-deployment-names", Severity: Error, Scope: ScopeCSV, Set: SetOLMv1,
		What: "The CSV's deployment names are unique DNS-1123 subdomains.",
		Why:  "operator-controller turns each deployment spec into a Deployment of that name and refuses duplicates and names Kubernetes would refuse.",
		Fix:  "Give each deployment a unique lower-case name of letters, digits, '-' and '.'."})
	RuleOLMv1OperatorConditions = register(&Rule{ID: "olmv1-operator-conditions", Severity: Warning, Scope: ScopeCSV, Set: SetOLMv1,
		What: "The operator does not use the OperatorConditions API (RBAC on operators.coreos.com operatorconditions, or the OPERATOR_CONDITION_NAME variable).",
		Why:  "OLM v1 creates no OperatorCondition and sets no OPERATOR_CONDITION_NAME; operators that rely on them fail at start or while reconciling, and nothing checks it at install time.",
		Fix:  "Make the operator work without an OperatorCondition (treat its absence as 'upgradeable'), then drop the RBAC and variable."})
	// Checked on an index image by internal/indeximage (opm validate IMAGE).
	RuleOLMv1CatalogImage = register(&Rule{ID: "olmv1-catalog-image", Severity: Error, Scope: ScopeCatalog, Set: SetOLMv1,
		What: "An index image given to opm validate carries the operators.operatorframework.io.index.configs.v1 label, naming the directory that holds its file-based catalog.",
		Why:  "OLM v1's catalogd unpacks only the directory that label names and serves the file-based catalog in it; it refuses an image without the label (a sqlite-only index image: \"catalog image is missing the required label\").",
		Fix:  "Build the index as a file-based catalog: opm index add --catalog-format fbc (or both, for OLM v0 and v1), or opm render IMAGE > catalog/catalog.json and opm generate dockerfile catalog."})
)

// OLMv1DependencyTypes are the property types operator-controller refuses.
var OLMv1DependencyTypes = []string{"olm.gvk.required", "olm.package.required", "olm.constraint"}

func init() {
	RuleOLMv1AllNamespaces.check = func(c *Context) {
		var modes []string
		for _, m := range c.CSV.Spec.InstallModes {
			if m.Supported {
				if m.Type == bundle.InstallModeAllNamespaces {
					return
				}
				modes = append(modes, m.Type)
			}
		}
		c.Report(c.csvObj(), "spec.installModes", OLMv1InstallModesMessage(modes), RuleOLMv1AllNamespaces.Fix)
	}
	RuleOLMv1Dependencies.check = checkOLMv1Dependencies
	RuleOLMv1Webhooks.check = checkOLMv1Webhooks
	RuleOLMv1APIServices.check = func(c *Context) {
		for i, a := range c.CSV.Spec.APIServiceDefinitions.Owned {
			c.Report(c.csvObj(), fmt.Sprintf("spec.apiservicedefinitions.owned[%d]", i),
				fmt.Sprintf("owned API service %s (%s/%s %s): operator-controller does not install API services", a.Name, a.Group, a.Version, a.Kind), "")
		}
	}
	RuleOLMv1Deployments.check = func(c *Context) {
		seen := map[string]bool{}
		for i, d := range c.CSV.Spec.Install.Spec.Deployments {
			f := fmt.Sprintf("spec.install.spec.deployments[%d].name", i)
			if errs := validation.IsDNS1123Subdomain(d.Name); len(errs) > 0 {
				c.Report(c.csvObj(), f, fmt.Sprintf("deployment name %q: %s", d.Name, strings.Join(errs, "; ")), "")
			} else if seen[d.Name] {
				c.Report(c.csvObj(), f, fmt.Sprintf("deployment %q is listed twice", d.Name), "")
			}
			seen[d.Name] = true
		}
	}
	RuleOLMv1OperatorConditions.check = checkOLMv1OperatorConditions
}

// OLMv1InstallModesMessage says why a bundle with these supported install
// modes is refused.
func OLMv1InstallModesMessage(supported []string) string {
	if len(supported) == 0 {
		return "the bundle supports no install mode; operator-controller needs AllNamespaces"
	}
	return fmt.Sprintf("the bundle supports %s but not AllNamespaces: operator-controller refuses it (unless its SingleOwnNamespaceInstallSupport gate is on)", strings.Join(supported, ", "))
}

func checkOLMv1Dependencies(c *Context) {
	b := c.Bundle
	fileLine := func(f *bundle.File, field string) int {
		if f != nil && len(f.Docs) > 0 {
			return f.Docs[0].LineOf(field)
		}
		return 0
	}
	for _, d := range b.Dependencies {
		switch d.Type {
		case "olm.gvk", "olm.package", "olm.constraint":
			c.ReportFile(bundle.DependenciesFile, fileLine(b.DependenciesFile, d.Field), d.Field,
				fmt.Sprintf("dependency of type %s: operator-controller does not resolve dependencies and refuses the bundle", d.Type), "")
		}
	}
	for _, p := range b.Properties {
		for _, t := range OLMv1DependencyTypes {
			if p.Type == t {
				c.ReportFile(bundle.PropertiesFile, fileLine(b.PropertiesFile, p.Field), p.Field,
					fmt.Sprintf("property %s declares a dependency: operator-controller refuses the bundle", p.Type), "")
			}
		}
	}
	if c.CSV == nil {
		return
	}
	for i, r := range c.CSV.Spec.CustomResourceDefinitions.Required {
		c.Report(c.csvObj(), fmt.Sprintf("spec.customresourcedefinitions.required[%d]", i),
			fmt.Sprintf("required CRD %s (%s %s) becomes an olm.gvk.required dependency: operator-controller refuses the bundle", r.Name, r.Version, r.Kind), "")
	}
	for i, r := range c.CSV.Spec.APIServiceDefinitions.Required {
		c.Report(c.csvObj(), fmt.Sprintf("spec.apiservicedefinitions.required[%d]", i),
			fmt.Sprintf("required API service %s.%s (%s %s) becomes an olm.gvk.required dependency: operator-controller refuses the bundle", r.Version, r.Group, r.Name, r.Kind), "")
	}
}

// Admission webhook rules operator-controller refuses.
var (
	olmv1ForbiddenWebhookGroups    = map[string]bool{"olm.operatorframework.io": true, "*": true}
	olmv1ForbiddenWebhookResources = map[string]bool{"*": true, "mutatingwebhookconfiguration": true, "mutatingwebhookconfigurations": true,
		"validatingwebhookconfiguration": true, "validatingwebhookconfigurations": true}
)

func checkOLMv1Webhooks(c *Context) {
	spec := c.CSV.Spec
	if len(spec.WebhookDefinitions) == 0 {
		return
	}
	obj := c.csvObj()
	var modes []string
	for _, m := range spec.InstallModes {
		if m.Supported {
			modes = append(modes, m.Type)
		}
	}
	allOnly := len(modes) == 1 && modes[0] == bundle.InstallModeAllNamespaces
	deployments := map[string]bool{}
	for _, d := range spec.Install.Spec.Deployments {
		deployments[d.Name] = true
	}
	owned := map[string]bool{}
	for _, o := range spec.CustomResourceDefinitions.Owned {
		owned[o.Name] = true
	}
	names := map[string]bool{}
	converters := map[string][]string{}
	for i, wh := range spec.WebhookDefinitions {
		f := fmt.Sprintf("spec.webhookdefinitions[%d]", i)
		c.Report(obj, f, fmt.Sprintf("webhook %q (%s): operator-controller installs webhooks only where a certificate provider (cert-manager or OpenShift's service CA) is configured", wh.GenerateName, wh.Type), "")
		if errs := validation.IsDNS1123Subdomain(wh.GenerateName); len(errs) > 0 {
			c.ReportAs(Error, obj, f+".generateName", fmt.Sprintf("webhook name %q: %s", wh.GenerateName, strings.Join(errs, "; ")), "")
		}
		if key := wh.Type + "/" + wh.GenerateName; names[key] {
			c.ReportAs(Error, obj, f+".generateName", fmt.Sprintf("webhook %q of type %s is defined twice", wh.GenerateName, wh.Type), "give each webhook of a type its own generateName")
		} else {
			names[key] = true
		}
		if !deployments[wh.DeploymentName] {
			c.ReportAs(Error, obj, f+".deploymentName", fmt.Sprintf("webhook %q names deployment %q, which the CSV does not define", wh.GenerateName, wh.DeploymentName), "name one of spec.install.spec.deployments")
		}
		if wh.Type == "ConversionWebhook" {
			if !allOnly {
				c.ReportAs(Error, obj, f, fmt.Sprintf("conversion webhook %q in a bundle that supports %v: operator-controller takes conversion webhooks only from bundles that support AllNamespaces alone", wh.GenerateName, modes),
					"support only AllNamespaces in spec.installModes")
			}
			for j, crd := range wh.ConversionCRDs {
				if !owned[crd] {
					c.ReportAs(Error, obj, fmt.Sprintf("%s.conversionCRDs[%d]", f, j), fmt.Sprintf("conversion webhook %q converts %s, which the CSV does not own", wh.GenerateName, crd), "list the CRD under spec.customresourcedefinitions.owned")
				}
				converters[crd] = append(converters[crd], wh.GenerateName)
			}
			continue
		}
		for j, r := range wh.Rules {
			for _, g := range r.APIGroups {
				if olmv1ForbiddenWebhookGroups[g] {
					c.ReportAs(Error, obj, fmt.Sprintf("%s.rules[%d].apiGroups", f, j), fmt.Sprintf("webhook %q intercepts API group %q: operator-controller refuses admission webhooks on it", wh.GenerateName, g), "name the API groups the operator serves")
				}
				if g == "admissionregistration.k8s.io" {
					for _, res := range r.Resources {
						if olmv1ForbiddenWebhookResources[strings.ToLower(res)] {
							c.ReportAs(Error, obj, fmt.Sprintf("%s.rules[%d].resources", f, j), fmt.Sprintf("webhook %q intercepts %s %q: operator-controller refuses admission webhooks on webhook configurations", wh.GenerateName, g, res), "drop the rule")
						}
					}
				}
			}
		}
	}
	crds := make([]string, 0, len(converters))
	for crd, whs := range converters {
		if len(whs) > 1 {
			crds = append(crds, crd)
		}
	}
	sort.Strings(crds)
	for _, crd := range crds {
		c.ReportAs(Error, obj, "spec.webhookdefinitions", fmt.Sprintf("conversion webhooks %s all convert %s: operator-controller takes one per CRD", strings.Join(converters[crd], ", "), crd), "keep one conversion webhook per CRD")
	}
}

func checkOLMv1OperatorConditions(c *Context) {
	in := c.CSV.Spec.Install.Spec
	obj := c.csvObj()
	for _, list := range []struct {
		field string
		perms []bundle.StrategyPermission
	}{{"spec.install.spec.permissions", in.Permissions}, {"spec.install.spec.clusterPermissions", in.ClusterPermissions}} {
		for i, p := range list.perms {
			for j, r := range p.Rules {
				if ruleNames(r, "apiGroups", "operators.coreos.com") && ruleNames(r, "resources", "operatorconditions") {
					c.Report(obj, fmt.Sprintf("%s[%d].rules[%d]", list.field, i, j),
						fmt.Sprintf("service account %q is granted operatorconditions: OLM v1 creates no OperatorCondition", p.ServiceAccountName), "")
				}
			}
		}
	}
	for i, d := range in.Deployments {
		for j, ct := range d.Spec.Template.Spec.Containers {
			for k, e := range ct.Env {
				if e.Name == "OPERATOR_CONDITION_NAME" {
					c.Report(obj, fmt.Sprintf("spec.install.spec.deployments[%d].spec.template.spec.containers[%d].env[%d]", i, j, k),
						fmt.Sprintf("container %q of deployment %q reads OPERATOR_CONDITION_NAME: OLM v1 does not set it", ct.Name, d.Name), "")
				}
			}
		}
	}
}

// ruleNames reports whether an RBAC rule's list field names want (a
// wildcard does not count: granting everything is not using the API).
func ruleNames(rule any, field, want string) bool {
	for _, v := range bundle.Slice(rule, field) {
		if s, _ := v.(string); s == want {
			return true
		}
	}
	return false
}
