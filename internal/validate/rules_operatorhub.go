package validate

import (
	"fmt"
	"net/mail"
	"net/url"
	"sort"
	"strings"

	"github.com/opmkit/opm/internal/bundle"
)

// OperatorHub rules: what operator-sdk's OperatorHub validators
// (--select-optional suite=operatorframework and name=operatorhub, which
// the community catalogs' pipelines run on every pull request) check, with
// their severities. Opt-in: --select operatorhub. Default rules that those
// validators check too (csv-version, the minKubeVersion rules,
// csv-name-convention, k8s-removed-api) are part of the set as well.
var (
	RuleHubProvider = register(&Rule{ID: "operatorhub-provider", Severity: Error, Scope: ScopeCSV, Set: SetOperatorHub,
		What: "spec.provider.name is set.",
		Why:  "OperatorHub.io and the console's OperatorHub list each operator under its provider; operator-sdk's OperatorHub validators refuse a CSV without one.",
		Fix:  "Set spec.provider.name to the company or project that publishes the operator."})
	RuleHubMaintainers = register(&Rule{ID: "operatorhub-maintainers", Severity: Error, Scope: ScopeCSV, Set: SetOperatorHub,
		What: "Each spec.maintainers entry has a name and an email address that parses as an RFC 5322 address.",
		Why:  "OperatorHub shows maintainers as the operator's contact; operator-sdk's OperatorHub validators refuse an entry without a name or email, or with an email that does not parse.",
		Fix:  "Give every maintainer a name and an address such as team@example.com."})
	RuleHubLinks = register(&Rule{ID: "operatorhub-links", Severity: Error, Scope: ScopeCSV, Set: SetOperatorHub,
		What: "Each spec.links entry has a name and a URL that parses.",
		Why:  "OperatorHub renders the links on the operator's page; operator-sdk's OperatorHub validators refuse an entry without a name or URL, or a URL that does not parse.",
		Fix:  "Give every link a name and a URL such as https://example.com/docs."})
	RuleHubIcon = register(&Rule{ID: "operatorhub-icon", Severity: Error, Scope: ScopeCSV, Set: SetOperatorHub,
		What: "spec.icon holds exactly one icon, with base64data and a mediatype of image/png, image/jpeg, image/gif or image/svg+xml; a CSV without spec.icon is a warning.",
		Why:  "OperatorHub shows one icon per operator; operator-sdk's OperatorHub validators refuse none (an empty list), several, or one without data or with another media type, and warn when there is no icon at all. On `icon: []` they crash instead (index out of range).",
		Fix:  "Keep one icon: {base64data: <base64 of the image>, mediatype: image/png}."})
	RuleHubCapabilities = register(&Rule{ID: "operatorhub-capabilities", Severity: Error, Scope: ScopeCSV, Set: SetOperatorHub,
		What: "The capabilities annotation, when present, is one of Basic Install, Seamless Upgrades, Full Lifecycle, Deep Insights, Auto Pilot.",
		Why:  "OperatorHub shows and filters operators by capability level; operator-sdk's capabilities validator refuses any other value.",
		Fix:  "Set metadata.annotations.capabilities to one of the five levels, spelled exactly."})
	RuleHubCategories = register(&Rule{ID: "operatorhub-categories", Severity: Error, Scope: ScopeCSV, Set: SetOperatorHub,
		What: "Each comma-separated entry of the categories annotation is a standard OperatorHub category, or, when --categories FILE (or the OPERATOR_BUNDLE_CATEGORIES variable) names a JSON file {\"categories\": [...]}, one of that file's instead.",
		Why:  "OperatorHub files operators under these categories; operator-sdk's categories validator refuses others (and, like opm, takes a custom list from the file OPERATOR_BUNDLE_CATEGORIES names).",
		Fix:  "Use the categories as spelled in the standard list (`opm bundle validate --list-rules -o json` has the rule; docs/validation.md lists them), separated by commas."})
	RuleHubResourceRequests = register(&Rule{ID: "operatorhub-resource-requests", Severity: Warning, Scope: ScopeCSV, Set: SetOperatorHub,
		What: "Every container of every deployment in the CSV requests both cpu and memory.",
		Why:  "A namespace with a ResourceQuota refuses pods that request no cpu or memory, and the scheduler cannot place a pod it knows nothing about; operator-sdk's good-practices validator warns about containers with no requests at all (and misses a container that requests only one of the two).",
		Fix:  "Set resources.requests.cpu and resources.requests.memory on each container (e.g. cpu: 10m, memory: 64Mi)."})
	RuleHubCRDDescriptions = register(&Rule{ID: "operatorhub-crd-descriptions", Severity: Warning, Scope: ScopeCSV, Set: SetOperatorHub,
		What: "Each owned and required CRD listed in spec.customresourcedefinitions has a description.",
		Why:  "The console shows the description next to each API the operator provides or needs; operator-sdk's good-practices validator warns when it is empty.",
		Fix:  "Add a one-sentence description to each entry of spec.customresourcedefinitions.owned and .required."})
	RuleHubChannels = register(&Rule{ID: "operatorhub-channel-naming", Severity: Warning, Scope: ScopeBundle, Set: SetOperatorHub,
		What: "The bundle's channels and default channel start with candidate, fast or stable.",
		Why:  "OLM's channel naming convention (candidate, fast, stable, optionally with a version suffix such as stable-v2) tells users what each channel promises; operator-sdk's good-practices validator warns about other names.",
		Fix:  "Rename the channels (stable, fast, candidate, or stable-v1 and the like) in metadata/annotations.yaml, keeping the old ones until users have moved."})
	RuleHubCRDRBAC = register(&Rule{ID: "operatorhub-crd-rbac", Severity: Warning, Scope: ScopeCSV, Set: SetOperatorHub,
		What: "No permission or cluster permission in the CSV lets the operator create or patch CustomResourceDefinitions.",
		Why:  "OLM installs and upgrades the CRDs a bundle ships, checking that existing objects still validate; CRDs an operator creates itself escape those checks, and an operator that installs other operators' APIs is what OLM's dependency resolution is for. operator-sdk's good-practices validator warns about it.",
		Fix:  "Ship the CRDs in the bundle (or depend on the operator that owns them) and drop create/patch on customresourcedefinitions from the CSV's RBAC."})
)

// StandardCategories are the categories OperatorHub accepts, as
// operator-framework/api v0.45.0 lists them.
var StandardCategories = []string{
	"AI/Machine Learning", "Application Runtime", "Big Data", "Cloud Provider", "Database",
	"Developer Tools", "Integration & Delivery", "Logging & Tracing", "Modernization & Migration",
	"Monitoring", "Networking", "Observability", "OpenShift Optional", "Security", "Storage",
	"Streaming & Messaging",
}

// Capabilities are the capability levels of the Operator Capability Model.
var Capabilities = []string{"Basic Install", "Seamless Upgrades", "Full Lifecycle", "Deep Insights", "Auto Pilot"}

// iconMediaTypesHub are the icon media types OperatorHub shows.
var iconMediaTypesHub = []string{"image/gif", "image/jpeg", "image/png", "image/svg+xml"}

// channelPrefixes are the prefixes of OLM's channel naming convention.
var channelPrefixes = []string{"candidate", "fast", "stable"}

func init() {
	// Default rules that operator-sdk's OperatorHub validators check too
	// (its good-practices validator refuses a CSV without deployments).
	alsoIn(SetOperatorHub, "csv-version", "csv-min-kube-version-missing", "csv-min-kube-version-format", "csv-name-convention", "csv-deployments", "k8s-removed-api")
	// Conforma's csv_semver_format (here, where csv-version is registered).
	alsoIn(SetConforma, "csv-version")
	// A gate cannot pass a bundle it could not read: the rules that say so
	// run with any gate.
	for _, set := range GateSets {
		alsoIn(set, ruleYAMLSyntax.ID, ruleLoad.ID, ruleNoCSV.ID, ruleMultipleCSVs.ID)
	}

	RuleHubProvider.check = func(c *Context) {
		if strings.TrimSpace(c.CSV.Spec.Provider.Name) == "" {
			c.Report(c.csvObj(), "spec.provider.name", "spec.provider.name is not set", "set spec.provider.name to who publishes the operator")
		}
	}
	RuleHubMaintainers.check = func(c *Context) {
		for i, m := range c.CSV.Spec.Maintainers {
			f := fmt.Sprintf("spec.maintainers[%d]", i)
			switch {
			case strings.TrimSpace(m.Name) == "":
				c.Report(c.csvObj(), f+".name", fmt.Sprintf("maintainer %d (%q) has no name", i+1, m.Email), "give the maintainer a name")
			case strings.TrimSpace(m.Email) == "":
				c.Report(c.csvObj(), f+".email", fmt.Sprintf("maintainer %q has no email", m.Name), "add an email address")
			}
			if m.Email != "" {
				if _, err := mail.ParseAddress(m.Email); err != nil {
					c.Report(c.csvObj(), f+".email", fmt.Sprintf("maintainer email %q is not an address: %v", m.Email, err), "write it as name@example.com")
				}
			}
		}
	}
	RuleHubLinks.check = func(c *Context) {
		for i, l := range c.CSV.Spec.Links {
			f := fmt.Sprintf("spec.links[%d]", i)
			switch {
			case strings.TrimSpace(l.Name) == "":
				c.Report(c.csvObj(), f+".name", fmt.Sprintf("link %q has no name", l.URL), "give the link a name")
			case strings.TrimSpace(l.URL) == "":
				c.Report(c.csvObj(), f+".url", fmt.Sprintf("link %q has no url", l.Name), "add the URL")
			}
			if l.URL != "" {
				if _, err := url.ParseRequestURI(l.URL); err != nil {
					c.Report(c.csvObj(), f+".url", fmt.Sprintf("link %q: url %q does not parse: %v", l.Name, l.URL, err), "write an absolute URL such as https://example.com/docs")
				}
			}
		}
	}
	RuleHubIcon.check = checkHubIcon
	RuleHubCapabilities.check = func(c *Context) {
		v, ok := c.CSV.Metadata.Annotations["capabilities"]
		if ok && !contains(Capabilities, v) {
			hint := "use one of: " + strings.Join(Capabilities, ", ")
			if s := closest(v, Capabilities); s != "" {
				hint = fmt.Sprintf("did you mean %q?", s)
			}
			c.Report(c.csvObj(), "metadata.annotations.capabilities", fmt.Sprintf("capabilities %q is not a capability level", v), hint)
		}
	}
	RuleHubCategories.check = func(c *Context) {
		v, ok := c.CSV.Metadata.Annotations["categories"]
		if !ok {
			return
		}
		known, which := StandardCategories, "standard"
		if c.Opts.Categories != nil {
			known, which = c.Opts.Categories, "custom (--categories)"
		}
		for _, cat := range strings.Split(v, ",") {
			cat = strings.TrimSpace(cat)
			if contains(known, cat) {
				continue
			}
			msg := fmt.Sprintf("category %q is not one of the %s categories", cat, which)
			if cat == "" {
				msg = fmt.Sprintf("categories %q has an empty entry", v)
			}
			hint := "use categories from: " + strings.Join(known, ", ")
			if s := closest(cat, known); s != "" && cat != "" {
				hint = fmt.Sprintf("did you mean %q?", s)
			}
			c.Report(c.csvObj(), "metadata.annotations.categories", msg, hint)
		}
	}
	RuleHubResourceRequests.check = checkHubResourceRequests
	RuleHubCRDDescriptions.check = func(c *Context) {
		for _, list := range []struct {
			key  string
			crds []bundle.CRDDescription
		}{{"owned", c.CSV.Spec.CustomResourceDefinitions.Owned}, {"required", c.CSV.Spec.CustomResourceDefinitions.Required}} {
			for i, d := range list.crds {
				if strings.TrimSpace(d.Description) == "" {
					c.Report(c.csvObj(), fmt.Sprintf("spec.customresourcedefinitions.%s[%d].description", list.key, i),
						fmt.Sprintf("%s CRD %s has no description", list.key, d.Name), "describe what the API is for in one sentence")
				}
			}
		}
	}
	RuleHubChannels.check = func(c *Context) {
		a := c.Bundle.Annotations
		if a == nil {
			return
		}
		var odd []string
		seen := map[string]bool{}
		for _, ch := range append(a.Channels(), a.DefaultChannel()) {
			if ch == "" || seen[ch] {
				continue
			}
			seen[ch] = true
			if !hasAnyPrefix(ch, channelPrefixes) {
				odd = append(odd, ch)
			}
		}
		if len(odd) == 0 {
			return
		}
		sort.Strings(odd)
		f := annotationPath(bundle.AnnotationChannels)
		reportAnnotation(c, a, f, fmt.Sprintf("channel(s) %s do not follow the naming convention (candidate, fast, stable, with an optional suffix)", quoteAll(odd)),
			"name channels stable, fast or candidate (stable-v2 and the like for a version line)")
	}
	RuleHubCRDRBAC.check = func(c *Context) {
		in := c.CSV.Spec.Install.Spec
		for _, list := range []struct {
			field string
			perms []bundle.StrategyPermission
		}{{"spec.install.spec.permissions", in.Permissions}, {"spec.install.spec.clusterPermissions", in.ClusterPermissions}} {
			for i, p := range list.perms {
				for j, r := range p.Rules {
					if ruleGrants(r, "apiGroups", "apiextensions.k8s.io") && ruleGrants(r, "resources", "customresourcedefinitions") &&
						(ruleGrants(r, "verbs", "create") || ruleGrants(r, "verbs", "patch")) {
						c.Report(c.csvObj(), fmt.Sprintf("%s[%d].rules[%d]", list.field, i, j),
							fmt.Sprintf("service account %q may create or patch CustomResourceDefinitions", p.ServiceAccountName),
							"ship the CRDs in the bundle and drop create/patch on customresourcedefinitions")
					}
				}
			}
		}
	}
}

// alsoIn adds default rules to an opt-in set.
func alsoIn(set string, ids ...string) {
	for _, id := range ids {
		r, ok := registry[id]
		if !ok {
			panic("validate: set " + set + " names unknown rule " + id)
		}
		r.AlsoIn = append(r.AlsoIn, set)
	}
}

// ruleGrants reports whether an RBAC rule's list field names want or the
// wildcard.
func ruleGrants(rule any, field, want string) bool {
	for _, v := range bundle.Slice(rule, field) {
		if s, _ := v.(string); s == want || s == "*" {
			return true
		}
	}
	return false
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func quoteAll(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func checkHubIcon(c *Context) {
	raw, present := bundle.Lookup(c.CSV.Object.Map(), "spec", "icon")
	if !present || raw == nil {
		c.ReportAs(Warning, c.csvObj(), "spec", "spec.icon is not set: OperatorHub shows a placeholder", "add one icon: {base64data: ..., mediatype: image/png}")
		return
	}
	icons := c.CSV.Spec.Icon
	switch n := len(icons); {
	case n == 0:
		c.Report(c.csvObj(), "spec.icon", "spec.icon is an empty list; OperatorHub needs exactly one icon", "add one icon or drop the key")
		return
	case n > 1:
		c.Report(c.csvObj(), "spec.icon", fmt.Sprintf("spec.icon lists %d icons; OperatorHub takes exactly one", n), "keep one icon")
	}
	for i, ic := range icons {
		f := fmt.Sprintf("spec.icon[%d]", i)
		if strings.TrimSpace(ic.Data) == "" {
			c.Report(c.csvObj(), f+".base64data", "icon has no base64data", "put the base64 of the image in base64data")
		}
		switch {
		case ic.MediaType == "":
			c.Report(c.csvObj(), f+".mediatype", "icon has no mediatype", "set mediatype: image/png (or image/jpeg, image/gif, image/svg+xml)")
		case !contains(iconMediaTypesHub, ic.MediaType):
			c.Report(c.csvObj(), f+".mediatype", fmt.Sprintf("icon media type %q is not one OperatorHub shows", ic.MediaType), "use one of "+strings.Join(iconMediaTypesHub, ", "))
		}
	}
}

// checkHubResourceRequests reads the containers from the CSV document
// itself: the typed CSV does not keep resources.
func checkHubResourceRequests(c *Context) {
	for i, d := range bundle.Slice(c.CSV.Object.Map(), "spec", "install", "spec", "deployments") {
		depName := bundle.Str(d, "name")
		for j, ct := range bundle.Slice(d, "spec", "template", "spec", "containers") {
			name := bundle.Str(ct, "name")
			req, _ := bundle.Lookup(ct, "resources", "requests")
			m, _ := req.(map[string]any)
			var missing []string
			for _, k := range []string{"cpu", "memory"} {
				if v, ok := m[k]; !ok || v == nil || fmt.Sprint(v) == "" {
					missing = append(missing, k)
				}
			}
			if len(missing) == 0 {
				continue
			}
			f := fmt.Sprintf("spec.install.spec.deployments[%d].spec.template.spec.containers[%d]", i, j)
			what := "requests neither cpu nor memory"
			if len(missing) == 1 {
				what = "requests no " + missing[0]
				f += ".resources.requests"
			}
			c.Report(c.csvObj(), f, fmt.Sprintf("container %q of deployment %q %s", name, depName, what),
				fmt.Sprintf("set resources.requests.%s", strings.Join(missing, " and resources.requests.")))
		}
	}
}
