package validate

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strings"

	"github.com/opmkit/opm/internal/bundle"
)

// Install strategy: deployments, service accounts, webhooks.
func init() {
	csvRule("csv-deployments", Error,
		"spec.install uses the deployment strategy with at least one named deployment, each with containers.",
		"OLM installs the operator by creating these deployments; with none nothing runs.",
		"Set spec.install.strategy: deployment and list the operator's deployment under spec.install.spec.deployments.",
		func(c *Context) {
			in := c.CSV.Spec.Install
			if in.Strategy != "deployment" {
				c.Report(c.csvObj(), "spec.install.strategy", fmt.Sprintf("install strategy is %q", in.Strategy), "set spec.install.strategy: deployment")
			}
			if len(in.Spec.Deployments) == 0 {
				c.Report(c.csvObj(), "spec.install.spec.deployments", "no deployment: OLM would install nothing that runs", "list the operator's deployment under spec.install.spec.deployments")
				return
			}
			seen := map[string]bool{}
			for i, d := range in.Spec.Deployments {
				f := fmt.Sprintf("spec.install.spec.deployments[%d]", i)
				if d.Name == "" {
					c.Report(c.csvObj(), f+".name", "deployment has no name", "name it")
				} else if seen[d.Name] {
					c.Report(c.csvObj(), f+".name", fmt.Sprintf("deployment %q is listed twice", d.Name), "give each deployment its own name")
				}
				seen[d.Name] = true
				if len(d.Spec.Template.Spec.Containers) == 0 {
					c.Report(c.csvObj(), f+".spec.template.spec.containers", fmt.Sprintf("deployment %q has no containers", d.Name), "add the operator's container")
				}
				for j, ct := range d.Spec.Template.Spec.Containers {
					if why := checkImageRef(ct.Image); why != "" {
						c.Report(c.csvObj(), fmt.Sprintf("%s.spec.template.spec.containers[%d].image", f, j), fmt.Sprintf("container %q image %q: %s", ct.Name, ct.Image, why), "write a pullable image reference")
					}
				}
			}
		})

	csvRule("csv-service-accounts", Error,
		"Each deployment's service account has permissions in the CSV (or ships in the bundle), and each permission's service account is used by a deployment.",
		"OLM creates the service accounts named in permissions and clusterPermissions; a deployment using another one fails to start (the account does not exist), and permissions for an unused account are granted to nobody.",
		"Name the deployment's serviceAccountName in spec.install.spec.permissions or clusterPermissions.",
		func(c *Context) {
			in := c.CSV.Spec.Install.Spec
			granted := map[string]bool{}
			for _, p := range append(append([]bundle.StrategyPermission{}, in.Permissions...), in.ClusterPermissions...) {
				granted[p.ServiceAccountName] = true
			}
			shipped := map[string]bool{}
			if c.Bundle != nil {
				for _, o := range c.Bundle.Objects {
					if o.Kind == "ServiceAccount" {
						shipped[o.Name] = true
					}
				}
			}
			used := map[string]bool{}
			for i, d := range in.Deployments {
				sa := d.Spec.Template.Spec.ServiceAccountName
				if sa == "" {
					sa = "default"
				}
				used[sa] = true
				if sa != "default" && !granted[sa] && !shipped[sa] {
					c.Report(c.csvObj(), fmt.Sprintf("spec.install.spec.deployments[%d].spec.template.spec.serviceAccountName", i),
						fmt.Sprintf("deployment %q runs as service account %q, which no permission or clusterPermission names: OLM will not create it", d.Name, sa),
						fmt.Sprintf("add a permissions entry with serviceAccountName: %s", sa))
				}
			}
			for _, kind := range []string{"permissions", "clusterPermissions"} {
				list := in.Permissions
				if kind == "clusterPermissions" {
					list = in.ClusterPermissions
				}
				for i, p := range list {
					if p.ServiceAccountName == "" {
						c.Report(c.csvObj(), fmt.Sprintf("spec.install.spec.%s[%d].serviceAccountName", kind, i), "permission entry has no serviceAccountName", "name the service account the rules are for")
						continue
					}
					if len(in.Deployments) > 0 && !used[p.ServiceAccountName] {
						c.ReportAs(Warning, c.csvObj(), fmt.Sprintf("spec.install.spec.%s[%d].serviceAccountName", kind, i),
							fmt.Sprintf("service account %q gets %s but no deployment runs as it", p.ServiceAccountName, kind),
							"set it as a deployment's serviceAccountName, or fix the name")
					}
				}
			}
		})

	register(&Rule{ID: "bundle-service-account-conflict", Severity: Error, Scope: ScopeBundle,
		What: "No ServiceAccount object in manifests/ has the name of a service account the CSV's permissions define.",
		Why:  "OLM creates and owns the service accounts named in the CSV's permissions; a ServiceAccount manifest of the same name conflicts with it (operator-sdk reports the same error).",
		Fix:  "Remove the ServiceAccount manifest from the bundle (OLM creates it), or rename one of them.",
		check: func(c *Context) {
			in := c.CSV.Spec.Install.Spec
			names := map[string]bool{}
			for _, p := range append(append([]bundle.StrategyPermission{}, in.Permissions...), in.ClusterPermissions...) {
				names[p.ServiceAccountName] = true
			}
			for _, o := range c.Bundle.Objects {
				if o.Kind == "ServiceAccount" && o.APIVersion == "v1" && names[o.Name] {
					c.Report(o, "metadata.name", fmt.Sprintf("ServiceAccount %q is also defined by the CSV's permissions", o.Name), "remove this manifest: OLM creates the account from the CSV")
				}
			}
		}})

	csvRule("csv-webhooks", Error,
		"Each spec.webhookdefinitions entry names a deployment of the CSV, a known type and a generateName; conversion webhooks name owned CRDs.",
		"OLM wires each webhook to the named deployment's pods; a missing deployment means the webhook has no backend and every request it guards fails.",
		"Set deploymentName to a deployment in spec.install.spec.deployments; list conversionCRDs from the owned CRDs.",
		func(c *Context) {
			deps := map[string]bool{}
			for _, d := range c.CSV.Spec.Install.Spec.Deployments {
				deps[d.Name] = true
			}
			owned := map[string]bool{}
			for _, o := range c.CSV.Spec.CustomResourceDefinitions.Owned {
				owned[o.Name] = true
			}
			types := []string{"ValidatingAdmissionWebhook", "MutatingAdmissionWebhook", "ConversionWebhook"}
			for i, w := range c.CSV.Spec.WebhookDefinitions {
				f := fmt.Sprintf("spec.webhookdefinitions[%d]", i)
				if !contains(types, w.Type) {
					hint := "use one of " + strings.Join(types, ", ")
					if cl := closest(w.Type, types); cl != "" {
						hint = "did you mean " + cl + "?"
					}
					c.Report(c.csvObj(), f+".type", fmt.Sprintf("unknown webhook type %q", w.Type), hint)
				}
				if w.GenerateName == "" {
					c.Report(c.csvObj(), f+".generateName", "webhook has no generateName", "set generateName, e.g. vwidget.example.com")
				}
				if !deps[w.DeploymentName] {
					c.Report(c.csvObj(), f+".deploymentName", fmt.Sprintf("webhook %q names deployment %q, which the CSV does not define", w.GenerateName, w.DeploymentName), "name one of the deployments in spec.install.spec.deployments")
				}
				for j, crd := range w.ConversionCRDs {
					if !owned[crd] {
						c.Report(c.csvObj(), fmt.Sprintf("%s.conversionCRDs[%d]", f, j), fmt.Sprintf("conversion CRD %q is not an owned CRD", crd), "list it in spec.customresourcedefinitions.owned")
					}
				}
			}
		})

	csvRule("csv-unknown-field", Warning,
		"spec holds only fields the CSV schema knows.",
		"The API server drops unknown fields without a word: a typo such as miniKubeVersion means the setting silently does not exist.",
		"Fix the field name (the finding names the closest known field) or remove it.",
		func(c *Context) {
			spec := bundle.MapAt(c.CSV.Object.Map(), "spec")
			var keys []string
			for k := range spec {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			known := knownSpecFields()
			for _, k := range keys {
				if contains(known, k) {
					continue
				}
				hint := "remove it, or check the CSV reference for the field you meant"
				if cl := closest(k, known); cl != "" {
					hint = fmt.Sprintf("did you mean %s?", cl)
				}
				f := childPath("spec", k)
				c.Report(c.csvObj(), f, fmt.Sprintf("unknown field %s", f), hint)
			}
		})
}

// knownSpecFields lists the CSV spec fields: those of the typed model plus a
// few the model does not need to read.
func knownSpecFields() []string {
	out := []string{"cleanup", "nativeAPIs", "annotations"}
	t := reflect.TypeOf(bundle.CSVSpec{})
	for i := range t.NumField() {
		name := strings.Split(t.Field(i).Tag.Get("json"), ",")[0]
		if name != "" && !contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

func parseExamples(s string) ([]map[string]any, error) {
	var items []map[string]any
	if err := json.Unmarshal([]byte(s), &items); err != nil {
		var one map[string]any
		if json.Unmarshal([]byte(s), &one) == nil {
			return nil, fmt.Errorf("it is a single object, not a list")
		}
		return nil, err
	}
	return items, nil
}

// ownedGVKs returns the owned APIs as "group/version, Kind=kind".
func ownedGVKs(csv *bundle.CSV) map[string]bool {
	out := map[string]bool{}
	for _, o := range csv.Spec.CustomResourceDefinitions.Owned {
		_, group, _ := strings.Cut(o.Name, ".")
		out[group+"/"+o.Version+", Kind="+o.Kind] = true
	}
	for _, o := range csv.Spec.APIServiceDefinitions.Owned {
		out[o.Group+"/"+o.Version+", Kind="+o.Kind] = true
	}
	return out
}

func validBase64(s string) bool {
	s = strings.Join(strings.Fields(s), "")
	if _, err := base64.StdEncoding.DecodeString(s); err == nil {
		return true
	}
	_, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
	return err == nil
}

func checkURL(s string) string {
	if strings.TrimSpace(s) == "" {
		return "URL is empty"
	}
	u, err := url.Parse(s)
	if err != nil {
		return "URL does not parse: " + err.Error()
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Sprintf("URL %q is not an absolute http(s) URL", s)
	}
	if u.Host == "" {
		return fmt.Sprintf("URL %q has no host", s)
	}
	return ""
}
