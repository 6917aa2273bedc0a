package validate

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/bundle"
)

// Community rules: the static tests the community operator pipelines
// (operator-pipelines, for k8s-operatorhub/community-operators and
// redhat-openshift-ecosystem/community-operators-prod) run on every pull
// request, as far as they need no network. Opt-in: --select community.
var (
	RuleCommunityRequiredFields = register(&Rule{ID: "community-required-fields", Severity: Error, Scope: ScopeCSV, Set: SetCommunity,
		What: "The CSV has the fields the community catalogs require, with usable values: displayName (3 to 50 characters), description (20 or more), icon (base64 data of a png, jpeg, gif or svg), a semver version, maintainers and links (name and email, name and url), provider.name (3 or more) are errors; the capabilities, categories, containerImage (a pull spec with a tag), createdAt (a timestamp), repository (an http(s) URL), support (3 or more characters) and description (10 or more) annotations and spec.keywords (a list of strings) are warnings.",
		Why:  "The community pipelines' check_required_fields fails a pull request without the first group and warns about the second; OperatorHub.io and the console show these fields on the operator's page. (The pipeline matches displayName's length from the start only, so it lets a name longer than 50 characters through; opm does not.)",
		Fix:  "Fill the field named; operator-sdk generate kustomize manifests asks for most of them."})
	RuleCommunityOperatorName = register(&Rule{ID: "community-operator-name", Severity: Warning, Scope: ScopeBundle, Set: SetCommunity,
		What: "The operator name is one: the package annotation (an error when missing), the CSV name's prefix (metadata.name up to its first dot) and, for a bundle laid out as operators/<name>/<version>/, the directory <name>.",
		Why:  "The community catalogs build a package from operators/<name>/ and take its bundles by CSV name; the pipelines' check_operator_name fails the first bundle of an operator whose names disagree and warns on later ones (opm sees one bundle, and warns; the aqua operator, package aqua with CSVs aqua-operator.v*, is one such).",
		Fix:  "For a new operator, name the CSV <package>.v<version> and put the bundle in operators/<package>/<version>/; a published operator keeps its CSV names (renaming breaks upgrades from them)."})
	RuleCommunityVersionDir = register(&Rule{ID: "community-version-directory", Severity: Error, Scope: ScopeCSV, Set: SetCommunity,
		What: "A bundle laid out as operators/<name>/<version>/ sits in the directory named for its spec.version.",
		Why:  "The pipelines' check_operator_version_directory_name fails a bundle whose directory and version differ: the directory is how reviewers, and later pull requests, find a version.",
		Fix:  "Rename the directory to the CSV's spec.version, or fix spec.version."})
	RuleCommunityNetworkPolicy = register(&Rule{ID: "community-network-policy", Severity: Error, Scope: ScopeBundle, Set: SetCommunity,
		What: "The bundle ships no NetworkPolicy (networking.k8s.io).",
		Why:  "OLM does not install or manage NetworkPolicies from a bundle, and the pipelines' check_network_policy_presence refuses a bundle with one.",
		Fix:  "Have the operator create the NetworkPolicies its operands need at run time, and remove the manifest from the bundle."})
)

// CommunityCategories are the categories the community pipelines accept
// (their list differs from operator-framework/api's: "Drivers and
// plugins", no "Observability").
var CommunityCategories = []string{
	"AI/Machine Learning", "Application Runtime", "Big Data", "Cloud Provider", "Developer Tools",
	"Database", "Drivers and plugins", "Integration & Delivery", "Logging & Tracing",
	"Modernization & Migration", "Monitoring", "Networking", "OpenShift Optional", "Security",
	"Storage", "Streaming & Messaging",
}

var (
	communityImageRE = regexp.MustCompile(`^([^/]+/)+[^/:]+:.+`)
	communityURLRE   = regexp.MustCompile(`^https?://.+`)
)

// requiredField is one row of the community required-fields table.
type requiredField struct {
	path  []string // keys from the CSV's root
	field string   // the finding's field
	fatal bool
	valid func(v any) bool
}

func minLen(n int) func(any) bool {
	return func(v any) bool { s, ok := v.(string); return ok && len([]rune(s)) >= n }
}

func strMatch(re *regexp.Regexp) func(any) bool {
	return func(v any) bool { s, ok := v.(string); return ok && re.MatchString(s) }
}

// listOf says whether v is a non-empty list of maps, each with the string
// fields named.
func listOf(fields ...string) func(any) bool {
	return func(v any) bool {
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return false
		}
		for _, it := range list {
			for _, f := range fields {
				if _, ok := bundle.Lookup(it, f); !ok || bundle.Str(it, f) == "" && !isString(it, f) {
					return false
				}
			}
		}
		return true
	}
}

func isString(v any, key string) bool {
	x, _ := bundle.Lookup(v, key)
	_, ok := x.(string)
	return ok
}

var communityFields = []requiredField{
	{[]string{"metadata", "annotations", "capabilities"}, "metadata.annotations.capabilities", false, func(v any) bool { s, _ := v.(string); return contains(Capabilities, s) }},
	{[]string{"metadata", "annotations", "categories"}, "metadata.annotations.categories", false, func(v any) bool {
		s, _ := v.(string)
		for _, c := range strings.Split(s, ",") {
			if !contains(CommunityCategories, strings.TrimSpace(c)) {
				return false
			}
		}
		return true
	}},
	{[]string{"metadata", "annotations", "containerImage"}, "metadata.annotations.containerImage", false, strMatch(communityImageRE)},
	{[]string{"metadata", "annotations", "createdAt"}, "metadata.annotations.createdAt", false, func(v any) bool { s, _ := v.(string); return validTimestamp(s) }},
	{[]string{"metadata", "annotations", "repository"}, "metadata.annotations.repository", false, strMatch(communityURLRE)},
	{[]string{"metadata", "annotations", "support"}, "metadata.annotations.support", false, minLen(3)},
	{[]string{"metadata", "annotations", "description"}, "metadata.annotations.description", false, minLen(10)},
	{[]string{"spec", "displayName"}, "spec.displayName", true, func(v any) bool {
		s, ok := v.(string)
		n := len([]rune(s))
		return ok && n >= 3 && n <= 50 && !strings.ContainsAny(s, "\n")
	}},
	{[]string{"spec", "description"}, "spec.description", true, minLen(20)},
	{[]string{"spec", "icon"}, "spec.icon", true, validCommunityIcon},
	{[]string{"spec", "version"}, "spec.version", true, func(v any) bool { s, _ := v.(string); _, err := semver.Parse(s); return err == nil }},
	{[]string{"spec", "maintainers"}, "spec.maintainers", true, listOf("name", "email")},
	{[]string{"spec", "provider", "name"}, "spec.provider.name", true, minLen(3)},
	{[]string{"spec", "links"}, "spec.links", true, listOf("name", "url")},
	{[]string{"spec", "keywords"}, "spec.keywords", false, func(v any) bool {
		list, ok := v.([]any)
		for _, k := range list {
			if _, isStr := k.(string); !isStr {
				return false
			}
		}
		return ok && len(list) > 0
	}},
}

// validTimestamp accepts the ISO 8601 forms the pipelines' parser takes
// that matter in practice: a date, or a date and time with or without a
// zone, seconds and fractions.
func validTimestamp(s string) bool {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04:05Z0700", "2006-01-02 15:04:05Z07:00", "2006-01-02T15:04", "2006-01-02"} {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}

func validCommunityIcon(v any) bool {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return false
	}
	for _, it := range list {
		data, mt := bundle.Str(it, "base64data"), bundle.Str(it, "mediatype")
		data = strings.Map(func(r rune) rune {
			if unicode.IsSpace(r) {
				return -1
			}
			return r
		}, data)
		if len(data) < 4 || !contains(iconMediaTypesHub, mt) {
			return false
		}
		if _, err := base64.StdEncoding.DecodeString(data); err != nil {
			return false
		}
	}
	return true
}

// communityLayout returns the operator and version directory names of a
// bundle laid out as .../operators/<name>/<version>/, or ok false.
func (c *Context) communityLayout() (name, version string, ok bool) {
	if c.Path == "" {
		return "", "", false
	}
	dir := c.Path
	if c.Bundle != nil && c.Bundle.Root != "" && c.Bundle.Root != "." {
		dir = filepath.Join(dir, c.Bundle.Root)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", "", false
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", false
	}
	version, parent := filepath.Base(abs), filepath.Dir(abs)
	if filepath.Base(filepath.Dir(parent)) != "operators" {
		return "", "", false
	}
	return filepath.Base(parent), version, true
}

// csvOperatorName is a CSV name's operator part: up to its first dot.
func csvOperatorName(csvName string) string {
	name, _, _ := strings.Cut(csvName, ".")
	return name
}

func init() {
	RuleCommunityRequiredFields.check = func(c *Context) {
		root := c.CSV.Object.Map()
		for _, rf := range communityFields {
			v, ok := bundle.Lookup(root, rf.path...)
			sev := Warning
			if rf.fatal {
				sev = Error
			}
			field := rf.field
			switch {
			case !ok || v == nil:
				c.ReportAs(sev, c.csvObj(), field, fmt.Sprintf("the CSV does not set %s, which the community catalogs require", rf.field), "set "+rf.field)
			case !rf.valid(v):
				c.ReportAs(sev, c.csvObj(), field, fmt.Sprintf("%s is not valid for the community catalogs: %s", rf.field, communityFieldRule(rf.field)), "fix "+rf.field)
			}
		}
	}
	RuleCommunityOperatorName.check = func(c *Context) {
		if c.Bundle.Annotations == nil {
			return
		}
		pkg := c.Bundle.Annotations.Package()
		annField := fmt.Sprintf("annotations[%q]", bundle.AnnotationPackage)
		annLine := c.Bundle.Annotations.Doc.LineOf(annField)
		if pkg == "" {
			c.ReportFileAs(Error, c.Bundle.Annotations.File, annLine, annField, "annotations.yaml does not name the package (operator name)", "set "+bundle.AnnotationPackage)
			return
		}
		if n := csvOperatorName(c.CSV.Metadata.Name); n != pkg || !strings.Contains(c.CSV.Metadata.Name, ".") {
			hint := "a new operator: name the CSV " + pkg + ".v" + c.CSV.Spec.Version
			if c.CSV.Spec.Replaces != "" || len(c.CSV.Spec.Skips) > 0 || c.CSV.Metadata.Annotations[bundle.AnnotationSkipRange] != "" {
				// Earlier versions are out under this name: renaming now
				// would cut clusters running them off the upgrade graph.
				hint = "keep the name: earlier versions were published under it and clusters running them upgrade by it (the pipelines only warn once an operator is out); name a new operator's CSVs <package>.v<version>"
			}
			c.Report(c.csvObj(), "metadata.name", fmt.Sprintf("CSV name %q does not start with the operator name %q and a dot", c.CSV.Metadata.Name, pkg), hint)
		}
		if dir, _, ok := c.communityLayout(); ok && dir != pkg {
			c.ReportFile(c.Bundle.Annotations.File, annLine, annField, fmt.Sprintf("the package %q is not the operator's directory name %q", pkg, dir), "move the bundle to operators/"+pkg+"/, or rename the package")
		}
	}
	RuleCommunityVersionDir.check = func(c *Context) {
		if _, dir, ok := c.communityLayout(); ok && dir != c.CSV.Spec.Version {
			c.Report(c.csvObj(), "spec.version", fmt.Sprintf("the bundle's directory is %q but its spec.version is %q", dir, c.CSV.Spec.Version), "rename the directory to "+c.CSV.Spec.Version)
		}
	}
	RuleCommunityNetworkPolicy.check = func(c *Context) {
		for _, o := range c.Bundle.Objects {
			if o.Kind == "NetworkPolicy" && strings.HasPrefix(o.APIVersion, "networking.k8s.io/") {
				c.Report(o, "kind", fmt.Sprintf("the bundle ships a NetworkPolicy (%s): OLM does not install it and the community pipelines refuse it", bundle.Str(o.Map(), "metadata", "name")),
					"remove it; let the operator create the policies its operands need")
			}
		}
	}
}

func communityFieldRule(field string) string {
	switch field {
	case "metadata.annotations.capabilities":
		return "one of " + strings.Join(Capabilities, ", ")
	case "metadata.annotations.categories":
		return "a comma-separated list of " + quoteAll(CommunityCategories)
	case "metadata.annotations.containerImage":
		return "a pull spec with a repository and a tag, such as quay.io/org/operator:v1.2.0"
	case "metadata.annotations.createdAt":
		return "an ISO 8601 timestamp, such as 2024-05-01T12:00:00Z"
	case "metadata.annotations.repository":
		return "an http(s) URL"
	case "metadata.annotations.support", "spec.provider.name":
		return "at least 3 characters"
	case "metadata.annotations.description":
		return "at least 10 characters"
	case "spec.displayName":
		return "3 to 50 characters on one line"
	case "spec.description":
		return "at least 20 characters"
	case "spec.icon":
		return "a list of {base64data, mediatype}, base64 of a png, jpeg, gif or svg"
	case "spec.version":
		return "a semantic version"
	case "spec.maintainers":
		return "a non-empty list of {name, email}"
	case "spec.links":
		return "a non-empty list of {name, url}"
	case "spec.keywords":
		return "a non-empty list of strings"
	}
	return ""
}
