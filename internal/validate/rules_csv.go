package validate

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/bundle"
)

// csvRule registers a rule that reads only the CSV.
func csvRule(id string, sev Severity, what, why, fix string, check func(*Context)) {
	register(&Rule{ID: id, Severity: sev, Scope: ScopeCSV, What: what, Why: why, Fix: fix, check: check})
}

// Identity: apiVersion, name, version.
func init() {
	csvRule("csv-api-version", Warning,
		"The CSV's apiVersion is operators.coreos.com/v1alpha1.",
		"OLM finds the CSV of a bundle by its kind and reads it as operators.coreos.com/v1alpha1 whatever apiVersion it gives, so such bundles install (upstream opm and operator-sdk accept them too); but v1alpha1 is the only version the API server serves, so kubectl and other tools reading the file see a kind that does not exist.",
		"Set apiVersion: operators.coreos.com/v1alpha1.",
		func(c *Context) {
			if c.CSV.APIVersion != bundle.CSVAPIVersion {
				c.Report(c.csvObj(), "apiVersion", fmt.Sprintf("apiVersion is %q; OLM reads this CSV as %s and installs it, but the cluster serves CSVs only in that version", c.CSV.APIVersion, bundle.CSVAPIVersion), "set apiVersion: "+bundle.CSVAPIVersion)
			}
		})

	csvRule("csv-field-type", Error,
		"Every CSV field has the type the schema gives it.",
		"The API server refuses a CSV whose fields have the wrong type (a number where a string belongs), so OLM never installs it.",
		"Quote strings, write lists as lists and mappings as mappings.",
		func(c *Context) {
			for _, te := range c.CSV.TypeErrors {
				if te.Field == "spec.release" || te.Field == "spec.minKubeVersion" {
					continue // their own rules say it better
				}
				c.Report(c.csvObj(), te.Field, typeMessage(c.CSV, te), typeHint(te.Want))
			}
		})

	csvRule("csv-name", Error,
		"metadata.name is a valid DNS-1123 subdomain of at most 63 characters.",
		"The API server refuses other names, and OLM copies the CSV name into labels (olm.owner), which hold at most 63 characters.",
		"Use lower case letters, digits, '-' and '.', starting and ending with a letter or digit, e.g. my-operator.v1.2.3.",
		func(c *Context) {
			name := c.CSV.Metadata.Name
			if hasTypeError(c.CSV, "metadata.name") {
				return // csv-field-type says what it is instead
			}
			if name == "" {
				c.Report(c.csvObj(), "metadata.name", "metadata.name is empty", "set it to <operator>.v<version>, e.g. my-operator.v1.2.3")
				return
			}
			if msgs := dns1123Subdomain(name); len(msgs) > 0 {
				c.Report(c.csvObj(), "metadata.name", fmt.Sprintf("name %q is not a DNS-1123 subdomain: %s", name, strings.Join(msgs, "; ")), "use lower case letters, digits, '-' and '.'")
				return
			}
			if msgs := labelValue(name); len(msgs) > 0 {
				c.Report(c.csvObj(), "metadata.name", fmt.Sprintf("name %q cannot be a label value, which OLM needs (olm.owner): %s", name, strings.Join(msgs, "; ")), "shorten it to at most 63 characters")
			}
		})

	csvRule("csv-version", Error,
		"spec.version is a strict semantic version (Major.Minor.Patch).",
		"OLM and index tools order bundles by spec.version; a version that does not parse breaks upgrade graphs and is refused by opm index add.",
		"Write the version as Major.Minor.Patch, without a leading v, e.g. 1.2.3.",
		func(c *Context) {
			v := c.CSV.Spec.Version
			if hasTypeError(c.CSV, "spec.version") {
				return // csv-field-type says what it is instead
			}
			switch {
			case v == "":
				c.Report(c.csvObj(), "spec.version", "spec.version is missing", "set spec.version, e.g. 0.1.0")
			case strings.HasPrefix(v, "v") || strings.HasPrefix(v, "V"):
				c.Report(c.csvObj(), "spec.version", fmt.Sprintf("spec.version %q has a leading v", v), fmt.Sprintf("write %q (the v belongs in metadata.name only)", v[1:]))
			default:
				if _, err := semver.Parse(v); err != nil {
					hint := "write it as Major.Minor.Patch, e.g. 1.2.3"
					if fixed, err := semver.ParseTolerant(v); err == nil {
						hint = fmt.Sprintf("write %q", fixed.String())
					}
					c.Report(c.csvObj(), "spec.version", fmt.Sprintf("spec.version %q is not semver: %v", v, err), hint)
				}
			}
		})

	csvRule("csv-name-convention", Warning,
		"metadata.name follows <operator>.v<spec.version> (or <package>-v<version>-<release> with a release).",
		"Upgrade edges (replaces, skips) and people find bundles by name; a name that hides the version invites mistakes such as replacing the wrong bundle.",
		"Rename the CSV to <operator>.v<version>.",
		func(c *Context) {
			name, v := c.CSV.Metadata.Name, c.CSV.Spec.Version
			if name == "" || v == "" || c.CSV.Spec.Release != "" || releaseIsSet(c.CSV) {
				return // csv-release-name owns the released form
			}
			if !strings.HasSuffix(name, ".v"+v) {
				base := name
				if i := strings.Index(name, ".v"); i > 0 {
					base = name[:i]
				}
				c.Report(c.csvObj(), "metadata.name", fmt.Sprintf("name %q does not end in .v%s (spec.version)", name, v), fmt.Sprintf("rename it to %s.v%s", base, v))
			}
		})
}

func hasTypeError(csv *bundle.CSV, field string) bool {
	for _, te := range csv.TypeErrors {
		if te.Field == field {
			return true
		}
	}
	return false
}

func typeHint(want string) string {
	switch want {
	case "string":
		return "quote the value"
	case "list":
		return "write it as a YAML list (items starting with '- ')"
	case "mapping":
		return "write it as a YAML mapping (key: value)"
	}
	return "write it as a " + want
}

// The release field.
var releaseIdent = regexp.MustCompile(`^[0-9A-Za-z-]+$`)

func releaseIsSet(csv *bundle.CSV) bool {
	_, ok := bundle.Lookup(csv.Object.Map(), "spec", "release")
	return ok
}

// CheckRelease returns why r is not a valid release, or "".
func CheckRelease(r string) string {
	if r == "" {
		return "release is empty"
	}
	if len(r) > 20 {
		return fmt.Sprintf("release is %d characters long; at most 20 are allowed", len(r))
	}
	if strings.Contains(r, "+") {
		return "release must not carry build metadata ('+')"
	}
	for _, id := range strings.Split(r, ".") {
		switch {
		case id == "":
			return "release has an empty identifier (two dots, or a leading or trailing dot)"
		case !releaseIdent.MatchString(id):
			return fmt.Sprintf("identifier %q may hold only [0-9A-Za-z-]", id)
		case isNumeric(id) && len(id) > 1 && id[0] == '0':
			return fmt.Sprintf("numeric identifier %q has a leading zero", id)
		}
	}
	return ""
}

func isNumeric(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// fixRelease proposes a valid release close to r, or "".
func fixRelease(r string) string {
	var ids []string
	for _, id := range strings.Split(strings.SplitN(r, "+", 2)[0], ".") {
		if id == "" {
			continue
		}
		if isNumeric(id) {
			id = strings.TrimLeft(id, "0")
			if id == "" {
				id = "0"
			}
		}
		ids = append(ids, id)
	}
	f := strings.Join(ids, ".")
	if CheckRelease(f) != "" {
		return ""
	}
	return f
}

func init() {
	csvRule("csv-release-type", Error,
		"spec.release, when present, is a string.",
		"The CSV schema types release as a string; an unquoted 1 or 1.10 is a YAML number, which the API server refuses (and 1.10 would silently become 1.1).",
		"Quote it: release: \"1\".",
		func(c *Context) {
			v, ok := bundle.Lookup(c.CSV.Object.Map(), "spec", "release")
			if !ok {
				return
			}
			if _, isStr := v.(string); !isStr && v != nil {
				c.Report(c.csvObj(), "spec.release", fmt.Sprintf("spec.release is a YAML %s (%v), not a string", yamlKind(v), v), fmt.Sprintf("quote it: release: %q", fmt.Sprint(v)))
			}
		})

	csvRule("csv-release-format", Error,
		"spec.release is dot-separated identifiers of [0-9A-Za-z-], no empty identifier, no leading zero in a numeric identifier, at most 20 characters, no '+'.",
		"OLM orders bundles of the same version by release; a malformed release cannot be ordered and is refused.",
		"Use a release such as 1, 2 or 1.alpha.",
		func(c *Context) {
			r, ok := bundle.Lookup(c.CSV.Object.Map(), "spec", "release")
			s, isStr := r.(string)
			if !ok || !isStr {
				return
			}
			if why := CheckRelease(s); why != "" {
				hint := "use dot-separated identifiers such as 1 or 1.alpha"
				if f := fixRelease(s); f != "" {
					hint = fmt.Sprintf("write %q", f)
				}
				c.Report(c.csvObj(), "spec.release", fmt.Sprintf("release %q is invalid: %s", s, why), hint)
			}
		})

	csvRule("csv-release-name", Error,
		"With a release, metadata.name is <package>-v<version>-<release>.",
		"OLM derives the bundle's identity from the name when a release is set; a name in another form collides with or hides other releases.",
		"Rename the CSV to <package>-v<version>-<release>.",
		func(c *Context) {
			rel := c.CSV.Spec.Release
			if rel == "" {
				return
			}
			pkg := ""
			if c.Bundle.Annotations != nil {
				pkg = c.Bundle.Annotations.Package()
			}
			name := c.CSV.Metadata.Name
			suffix := fmt.Sprintf("-v%s-%s", c.CSV.Spec.Version, rel)
			switch {
			case pkg != "" && name != pkg+suffix:
				c.Report(c.csvObj(), "metadata.name", fmt.Sprintf("name %q does not match <package>-v<version>-<release>", name), fmt.Sprintf("rename it to %q", pkg+suffix))
			case pkg == "" && (!strings.HasSuffix(name, suffix) || len(name) == len(suffix)):
				guess := strings.SplitN(name, ".v", 2)[0]
				c.Report(c.csvObj(), "metadata.name", fmt.Sprintf("name %q does not match <package>-v<version>-<release>", name), fmt.Sprintf("rename it to %q", guess+suffix))
			}
		})

	csvRule("csv-release-build-metadata", Error,
		"With a release, spec.version carries no build metadata.",
		"Build metadata (+...) is ignored when ordering versions; with a release set, the release is the only packaging suffix, so the two would fight.",
		"Drop the +... part of spec.version and put it in the release.",
		func(c *Context) {
			v := c.CSV.Spec.Version
			if c.CSV.Spec.Release == "" || !strings.Contains(v, "+") {
				return
			}
			c.Report(c.csvObj(), "spec.version", fmt.Sprintf("spec.version %q carries build metadata while spec.release is set", v), fmt.Sprintf("write version %q", strings.SplitN(v, "+", 2)[0]))
		})
}

func yamlKind(v any) string {
	switch v.(type) {
	case int64, float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "list"
	case map[string]any:
		return "mapping"
	}
	return fmt.Sprintf("%T", v)
}

// minKubeVersion.
var majorMinorPatch = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

func init() {
	csvRule("csv-min-kube-version-missing", Warning,
		"spec.minKubeVersion is set.",
		"Without it OLM offers the operator on every cluster version, including ones whose APIs it does not support.",
		"Set spec.minKubeVersion to the oldest Kubernetes version you test on, e.g. 1.25.0.",
		func(c *Context) {
			if raw, ok := bundle.Lookup(c.CSV.Object.Map(), "spec", "minKubeVersion"); ok && raw != nil && raw != "" {
				if _, isStr := raw.(string); !isStr {
					return // set, but not as a string: csv-min-kube-version-format
				}
			}
			if strings.TrimSpace(c.CSV.Spec.MinKubeVersion) == "" {
				c.Report(c.csvObj(), "spec.minKubeVersion", "spec.minKubeVersion is not set: OLM will offer the operator on any cluster version", "set it to the oldest Kubernetes version you support, e.g. minKubeVersion: 1.25.0")
			}
		})

	csvRule("csv-min-kube-version-format", Error,
		"spec.minKubeVersion is exactly Major.Minor.Patch.",
		"OLM parses minKubeVersion as a semantic version and refuses to install the operator when it does not parse (\"1.21\" fails); a pre-release suffix parses but changes which clusters match.",
		"Write all three parts, e.g. 1.21.0.",
		func(c *Context) {
			raw, _ := bundle.Lookup(c.CSV.Object.Map(), "spec", "minKubeVersion")
			if raw != nil {
				if _, isStr := raw.(string); !isStr {
					// minKubeVersion: 1.21 is the YAML number 1.21.
					text := fmt.Sprint(raw)
					hint := "write it as a quoted Major.Minor.Patch string, e.g. \"1.25.0\""
					if sv, err := semver.ParseTolerant(text); err == nil {
						hint = fmt.Sprintf("write minKubeVersion: %q", fmt.Sprintf("%d.%d.%d", sv.Major, sv.Minor, sv.Patch))
					}
					c.Report(c.csvObj(), "spec.minKubeVersion", fmt.Sprintf("minKubeVersion %s is a YAML %s, not a Major.Minor.Patch string", text, yamlKind(raw)), hint)
					return
				}
			}
			v := strings.TrimSpace(c.CSV.Spec.MinKubeVersion)
			if v == "" || majorMinorPatch.MatchString(v) {
				return
			}
			fixed := ""
			if sv, err := semver.ParseTolerant(v); err == nil {
				fixed = fmt.Sprintf("%d.%d.%d", sv.Major, sv.Minor, sv.Patch)
			}
			if sv, err := semver.Parse(v); err == nil && (len(sv.Pre) > 0 || len(sv.Build) > 0) {
				c.ReportAs(Warning, c.csvObj(), "spec.minKubeVersion", fmt.Sprintf("minKubeVersion %q has a pre-release or build suffix; it parses, but compares below %s", v, fixed),
					fmt.Sprintf("write %q unless you mean to match pre-release clusters", fixed))
				return
			}
			hint := "write Major.Minor.Patch, e.g. 1.25.0"
			if fixed != "" {
				hint = fmt.Sprintf("write %q", fixed)
			}
			c.Report(c.csvObj(), "spec.minKubeVersion", fmt.Sprintf("minKubeVersion %q is not Major.Minor.Patch", v), hint)
		})
}

// installModes.
func init() {
	csvRule("csv-install-modes", Error,
		"spec.installModes lists only the four known types, each once, and supports at least one.",
		"OLM picks an OperatorGroup mode from installModes; an unknown type (a typo) is refused by the API server, and with none supported the operator cannot be installed anywhere.",
		"List OwnNamespace, SingleNamespace, MultiNamespace and AllNamespaces, each with supported: true or false.",
		func(c *Context) {
			modes := c.CSV.Spec.InstallModes
			if _, ok := bundle.Lookup(c.CSV.Object.Map(), "spec", "installModes"); !ok || len(modes) == 0 {
				c.Report(c.csvObj(), "spec.installModes", "spec.installModes is missing or empty", "list the four install modes with supported: true/false")
				return
			}
			seen := map[string]int{}
			supported := 0
			for i, m := range modes {
				f := fmt.Sprintf("spec.installModes[%d].type", i)
				if !contains(bundle.InstallModeTypes, m.Type) {
					hint := "use one of " + strings.Join(bundle.InstallModeTypes, ", ")
					if cl := closest(m.Type, bundle.InstallModeTypes); cl != "" {
						hint = fmt.Sprintf("did you mean %s? (valid: %s)", cl, strings.Join(bundle.InstallModeTypes, ", "))
					}
					c.Report(c.csvObj(), f, fmt.Sprintf("unknown install mode type %q", m.Type), hint)
					continue
				}
				if prev, dup := seen[m.Type]; dup {
					c.Report(c.csvObj(), f, fmt.Sprintf("install mode %s is listed twice (also spec.installModes[%d])", m.Type, prev), "keep one entry per type")
					continue
				}
				seen[m.Type] = i
				if m.Supported {
					supported++
				}
			}
			if supported == 0 {
				c.Report(c.csvObj(), "spec.installModes", "no install mode is supported: the operator cannot be installed", "set supported: true on at least one install mode")
			}
		})

	csvRule("csv-conversion-webhook-install-modes", Error,
		"A CSV with a conversion webhook supports AllNamespaces and no other install mode.",
		"A conversion webhook serves every namespace's objects of the CRD; OLM refuses to install such a CSV in any mode but AllNamespaces.",
		"Support only AllNamespaces, or drop the conversion webhook.",
		func(c *Context) {
			hasConversion := false
			for _, w := range c.CSV.Spec.WebhookDefinitions {
				if w.Type == "ConversionWebhook" {
					hasConversion = true
				}
			}
			if !hasConversion {
				return
			}
			var others []string
			all := false
			for _, m := range c.CSV.Spec.InstallModes {
				switch {
				case m.Type == bundle.InstallModeAllNamespaces:
					all = m.Supported
				case m.Supported:
					others = append(others, m.Type)
				}
			}
			if !all || len(others) > 0 {
				msg := "the CSV defines a conversion webhook but does not support AllNamespaces"
				if all {
					msg = "the CSV defines a conversion webhook but also supports " + strings.Join(others, ", ")
				}
				c.Report(c.csvObj(), "spec.installModes", msg, "support AllNamespaces only (set the other modes to supported: false)")
			}
		})
}

// Upgrade edges: replaces, skips, skipRange.
func init() {
	csvRule("csv-replaces", Error,
		"spec.replaces and spec.skips name CSVs (e.g. my-operator.v1.2.1), not bare versions, and not the CSV itself.",
		"OLM matches these against CSV names; a bare version such as 1.2.1 never matches, so the upgrade edge is silently lost (and opm index add refuses it).",
		"Write the full CSV name of the bundle replaced, e.g. my-operator.v1.2.1.",
		func(c *Context) {
			check := func(field, v string) {
				if v == "" {
					c.Report(c.csvObj(), field, "empty CSV name", "remove the entry or write the CSV name")
					return
				}
				if v == c.CSV.Metadata.Name {
					c.Report(c.csvObj(), field, fmt.Sprintf("%q is this CSV's own name", v), "name the previous version's CSV")
					return
				}
				if _, err := semver.ParseTolerant(v); err == nil && !strings.Contains(v, ".v") {
					c.Report(c.csvObj(), field, fmt.Sprintf("%q is a bare version, not a CSV name", v), fmt.Sprintf("write %q", guessCSVName(c.CSV, v)))
					return
				}
				if msgs := dns1123Subdomain(v); len(msgs) > 0 {
					c.Report(c.csvObj(), field, fmt.Sprintf("%q is not a valid CSV name: %s", v, strings.Join(msgs, "; ")), "write the CSV name, e.g. my-operator.v1.2.1")
				}
			}
			if _, ok := bundle.Lookup(c.CSV.Object.Map(), "spec", "replaces"); ok && c.CSV.Spec.Replaces != "" {
				check("spec.replaces", c.CSV.Spec.Replaces)
			}
			for i, s := range c.CSV.Spec.Skips {
				check(fmt.Sprintf("spec.skips[%d]", i), s)
			}
		})

	csvRule("csv-skip-range", Error,
		"The olm.skipRange annotation parses as a semver range.",
		"OLM parses skipRange to decide which installed versions may upgrade straight to this one; a range that does not parse is ignored, so those upgrades never happen. Wildcards parse but expand in surprising ways (<1.2.x means <1.2.0).",
		"Write comparisons of full versions separated by spaces, e.g. '>=1.0.0 <1.3.0'.",
		func(c *Context) {
			r, ok := c.CSV.Metadata.Annotations[bundle.AnnotationSkipRange]
			if !ok {
				return
			}
			f := `metadata.annotations["` + bundle.AnnotationSkipRange + `"]`
			if why, hint := checkSkipRange(r); why != "" {
				c.Report(c.csvObj(), f, fmt.Sprintf("olm.skipRange %q does not parse: %s", r, why), hint)
				return
			}
			if wildcard.MatchString(r) {
				c.ReportAs(Warning, c.csvObj(), f, fmt.Sprintf("olm.skipRange %q uses a wildcard; OLM expands it (%s)", r, expandWildcards(r)),
					"write full versions to say exactly which versions are skipped")
			}
			if v, err := semver.Parse(c.CSV.Spec.Version); err == nil {
				if rng, err := semver.ParseRange(r); err == nil && rng(v) {
					c.ReportAs(Warning, c.csvObj(), f, fmt.Sprintf("olm.skipRange %q includes this bundle's own version %s", r, v), "end the range below this version, e.g. <"+v.String())
				}
			}
		})
}

var wildcard = regexp.MustCompile(`\d+\.(?:\d+\.)?[xX*]|\d+\.[xX*]`)

// checkSkipRange says why r does not parse as OLM parses it, with a hint.
func checkSkipRange(r string) (string, string) {
	if strings.TrimSpace(r) == "" {
		return "it is empty", "write a range such as '>=1.0.0 <1.3.0' or remove the annotation"
	}
	_, err := semver.ParseRange(r)
	if err == nil {
		return "", ""
	}
	hint := "write comparisons of full versions separated by spaces, e.g. '>=1.0.0 <1.3.0'"
	switch {
	case strings.Contains(r, ","):
		hint = fmt.Sprintf("separate comparisons with a space, not a comma: %q", strings.Join(strings.Fields(strings.ReplaceAll(r, ",", " ")), " "))
	case regexp.MustCompile(`[<>=]\s*v\d`).MatchString(r):
		hint = fmt.Sprintf("drop the v prefix: %q", regexp.MustCompile(`([<>=]\s*)v(\d)`).ReplaceAllString(r, "$1$2"))
	case regexp.MustCompile(`(^|[^.\d])\d+\.\d+($|[^.\d])`).MatchString(r):
		hint = fmt.Sprintf("give every version three parts: %q", regexp.MustCompile(`(^|[^.\d])(\d+\.\d+)($|[^.\d])`).ReplaceAllString(r, "${1}${2}.0${3}"))
	}
	return err.Error(), hint
}

// expandWildcards describes how blang/semver (and so OLM) reads wildcards.
func expandWildcards(r string) string {
	var out []string
	for _, part := range strings.Fields(r) {
		m := regexp.MustCompile(`^([<>=!]*)(\d+)\.(?:(\d+)\.)?[xX*]$`).FindStringSubmatch(part)
		if m == nil {
			out = append(out, part)
			continue
		}
		op, major, minor := m[1], m[2], m[3]
		lo := major + "." + minor + ".0"
		if minor == "" {
			lo = major + ".0.0"
		}
		hi := ""
		if minor == "" {
			n, _ := strconv.Atoi(major)
			hi = fmt.Sprintf("%d.0.0", n+1)
		} else {
			n, _ := strconv.Atoi(minor)
			hi = fmt.Sprintf("%s.%d.0", major, n+1)
		}
		switch op {
		case ">=", "<":
			out = append(out, op+lo)
		case ">", "<=":
			if op == ">" {
				out = append(out, ">="+hi)
			} else {
				out = append(out, "<"+hi)
			}
		default:
			out = append(out, ">="+lo+" <"+hi)
		}
	}
	return "as '" + strings.Join(out, " ") + "'"
}

func guessCSVName(csv *bundle.CSV, version string) string {
	base := csv.Metadata.Name
	if i := strings.Index(base, ".v"); i > 0 {
		base = base[:i]
	}
	return base + ".v" + strings.TrimPrefix(version, "v")
}

// Metadata fields: examples, images, icon, maintainers, links.
var emailRe = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)
var iconMediaTypes = []string{"image/gif", "image/jpeg", "image/png", "image/svg+xml"}

func init() {
	csvRule("csv-alm-examples", Error,
		"The alm-examples annotation (or olm.examples, read when alm-examples is absent) is a JSON list of objects, each with apiVersion and kind.",
		"The console parses alm-examples to offer example resources; invalid JSON breaks that page for the operator, and operator-sdk refuses it. When both annotations are given, tools read alm-examples only (a warning).",
		"Make alm-examples a JSON array of example objects.",
		func(c *Context) {
			key, ex, ok := examplesAnnotation(c.CSV)
			if !ok {
				return
			}
			f := csvAnnotationField(key)
			if _, both := c.CSV.Metadata.Annotations[bundle.AnnotationOLMExamples]; both && key == bundle.AnnotationALMExamples {
				c.ReportAs(Warning, c.csvObj(), csvAnnotationField(bundle.AnnotationOLMExamples), "both alm-examples and olm.examples are given; olm.examples is never read",
					"keep the examples in alm-examples only")
			}
			if strings.TrimSpace(ex) == "" {
				c.ReportAs(Warning, c.csvObj(), f, key+" is empty", "give at least one example per owned API, or remove the annotation")
				return
			}
			items, err := parseExamples(ex)
			if err != nil {
				c.Report(c.csvObj(), f, key+" is not a JSON list of objects: "+err.Error(), "write a JSON array: [{\"apiVersion\": ..., \"kind\": ..., ...}]")
				return
			}
			for i, it := range items {
				if bundle.Str(it, "apiVersion") == "" || bundle.Str(it, "kind") == "" {
					c.Report(c.csvObj(), f, fmt.Sprintf("example %d has no apiVersion or kind", i), "give every example apiVersion and kind")
				}
			}
		})

	csvRule("csv-alm-examples-api", Error,
		"Each alm-examples entry is of an API the CSV owns (group, version and kind); each owned API has an example (a warning).",
		"An example of an API the operator does not provide cannot be created from the console, and usually means a stale group, version or kind; operator-sdk refuses it. An owned API without an example only leaves users guessing its spec, so that is a warning.",
		"Add an example per owned CRD or API service; remove examples of kinds the operator does not own, or correct their apiVersion.",
		func(c *Context) {
			key, ex, ok := examplesAnnotation(c.CSV)
			if !ok {
				key, ex = bundle.AnnotationALMExamples, "[]"
			}
			items, err := parseExamples(ex)
			if err != nil {
				return
			}
			owned := ownedGVKs(c.CSV)
			if len(owned) == 0 && len(items) == 0 {
				return
			}
			f := csvAnnotationField(key)
			have := map[string]bool{}
			for _, it := range items {
				gvk := bundle.Str(it, "apiVersion") + ", Kind=" + bundle.Str(it, "kind")
				have[gvk] = true
				if bundle.Str(it, "kind") != "" && !owned[gvk] {
					c.Report(c.csvObj(), f, fmt.Sprintf("example of %s, which the CSV does not own", gvk), "remove the example, correct its apiVersion and kind, or add the API to spec.customresourcedefinitions.owned")
				}
			}
			var missing []string
			for gvk := range owned {
				if !have[gvk] {
					missing = append(missing, gvk)
				}
			}
			sort.Strings(missing)
			for _, gvk := range missing {
				c.ReportAs(Warning, c.csvObj(), f, fmt.Sprintf("owned API %s has no example in %s", gvk, key), "add an example object of that kind")
			}
		})

	csvRule("csv-related-images", Error,
		"spec.relatedImages entries have a name and a valid image reference, and names are unique.",
		"Disconnected installs mirror exactly these images; an invalid reference breaks mirroring, a duplicate name is refused.",
		"Give each entry a unique name and a pullable reference, ideally by digest (registry/repo@sha256:...).",
		func(c *Context) {
			seen := map[string]bool{}
			for i, ri := range c.CSV.Spec.RelatedImages {
				f := fmt.Sprintf("spec.relatedImages[%d]", i)
				if why := checkImageRef(ri.Image); why != "" {
					c.Report(c.csvObj(), f+".image", fmt.Sprintf("image %q is not a valid reference: %s", ri.Image, why), "write registry/repository:tag or registry/repository@sha256:<digest>")
				}
				if ri.Name != "" && seen[ri.Name] {
					c.Report(c.csvObj(), f+".name", fmt.Sprintf("related image name %q is used twice", ri.Name), "give each related image its own name")
				}
				seen[ri.Name] = true
			}
		})

	csvRule("csv-icon", Warning,
		"spec.icon entries have base64 data and a supported media type.",
		"The console and catalogs show this icon; an unsupported media type or broken data shows a blank.",
		"Use image/png, image/jpeg, image/gif or image/svg+xml with base64 data.",
		func(c *Context) {
			for i, ic := range c.CSV.Spec.Icon {
				f := fmt.Sprintf("spec.icon[%d]", i)
				if !contains(iconMediaTypes, ic.MediaType) {
					c.Report(c.csvObj(), f+".mediatype", fmt.Sprintf("icon media type %q is not supported", ic.MediaType), "use one of "+strings.Join(iconMediaTypes, ", "))
				}
				if strings.TrimSpace(ic.Data) == "" {
					c.Report(c.csvObj(), f+".base64data", "icon has no data", "put the base64 of the image in base64data")
				} else if !validBase64(ic.Data) {
					c.Report(c.csvObj(), f+".base64data", "icon data is not valid base64", "re-encode the image with `base64 -w0 icon.png`")
				}
			}
		})

	csvRule("csv-maintainers", Warning,
		"Each spec.maintainers entry has a name and a valid email address.",
		"Catalogs show maintainers as the operator's contact; a broken address leaves users with nobody to reach.",
		"Give every maintainer a name and an email like team@example.com.",
		func(c *Context) {
			for i, m := range c.CSV.Spec.Maintainers {
				f := fmt.Sprintf("spec.maintainers[%d]", i)
				if strings.TrimSpace(m.Email) == "" {
					c.Report(c.csvObj(), f+".email", fmt.Sprintf("maintainer %q has no email", m.Name), "add an email address")
				} else if !emailRe.MatchString(m.Email) {
					c.Report(c.csvObj(), f+".email", fmt.Sprintf("maintainer email %q is not a valid address", m.Email), "write it as name@example.com")
				}
			}
		})

	csvRule("csv-links", Warning,
		"Each spec.links entry has a name and an absolute http(s) URL.",
		"Catalogs render these as links; a relative or malformed URL goes nowhere.",
		"Write URLs as https://....",
		func(c *Context) {
			for i, l := range c.CSV.Spec.Links {
				f := fmt.Sprintf("spec.links[%d].url", i)
				if why := checkURL(l.URL); why != "" {
					c.Report(c.csvObj(), f, fmt.Sprintf("link %q: %s", l.Name, why), "write an absolute URL such as https://example.com/docs")
				}
			}
		})

	csvRule("csv-olm-properties-annotation", Warning,
		"The CSV does not declare properties in the olm.properties annotation.",
		"Properties belong in metadata/properties.yaml, where index tools read them; the annotation is a legacy form. Not reported when it holds only olm.maxOpenShiftVersion, which OLM reads from the installed CSV's annotation (openshift-max-version).",
		"Move the properties to metadata/properties.yaml.",
		func(c *Context) {
			if text, ok := c.CSV.Metadata.Annotations[bundle.AnnotationProperties]; ok && !onlyMaxOpenShiftVersion(text) {
				c.Report(c.csvObj(), `metadata.annotations["olm.properties"]`, "properties are declared in the olm.properties annotation", "move them to metadata/properties.yaml")
			}
		})
}

// typeMessage says what a mistyped field is and what it should be, with the
// value when it is a scalar: "metadata.name is a number (123), not a string".
func typeMessage(csv *bundle.CSV, te bundle.FieldTypeError) string {
	v, ok := bundle.Lookup(csv.Object.Map(), strings.Split(te.Field, ".")...)
	switch v.(type) {
	case string, bool, int64, float64:
		if ok {
			return fmt.Sprintf("%s is a %s (%v), not a %s", te.Field, te.Got, v, te.Want)
		}
	}
	return fmt.Sprintf("%s is a %s, not a %s", te.Field, te.Got, te.Want)
}

// wellKnownCSVAnnotations are CSV annotation keys OLM and its tools read by
// exact name: a key that differs only in case is silently never read.
var wellKnownCSVAnnotations = []string{
	bundle.AnnotationSkipRange, bundle.AnnotationSubstitutesFor, bundle.AnnotationProperties,
	bundle.AnnotationALMExamples, bundle.AnnotationOLMExamples, bundle.AnnotationInternalObjects,
	"olm.operatorGroup", "olm.operatorNamespace", "olm.targetNamespaces", "olm.providedAPIs",
	"operatorframework.io/suggested-namespace", "operatorframework.io/initialization-resource",
}

// Required fields and the spelling of well-known keys.
func init() {
	csvRule("csv-display-name", Error,
		"spec.displayName is set to a non-empty string.",
		"The CSV schema the API server serves requires spec.displayName: a CSV without it is refused, so OLM cannot install the bundle (operator-sdk refuses it too). An empty one is accepted by the API server but leaves the operator nameless in the console, and operator-sdk refuses it as missing.",
		"Set spec.displayName to the operator's human-readable name, e.g. Widget Operator.",
		func(c *Context) {
			if hasTypeError(c.CSV, "spec.displayName") {
				return // csv-field-type says what it is instead
			}
			if _, ok := bundle.Lookup(c.csvObj().Map(), "spec", "displayName"); !ok {
				c.Report(c.csvObj(), "spec", "spec.displayName is missing; the API server refuses a CSV without it", "add spec.displayName: the operator's name as users should see it")
				return
			}
			if strings.TrimSpace(c.CSV.Spec.DisplayName) == "" {
				c.Report(c.csvObj(), "spec.displayName", "spec.displayName is empty", "set it to the operator's name as users should see it")
			}
		})

	csvRule("csv-annotation-case", Error,
		"No CSV annotation key differs only in case from a key OLM reads ("+strings.Join(wellKnownCSVAnnotations, ", ")+").",
		"OLM and the console read these annotations by their exact name: a mis-cased key such as olm.skiprange is silently ignored, so the skip range, substitution or example it was written for does not exist. operator-sdk refuses the mis-cased OLM keys as well.",
		"Rename the key to the exact spelling the message gives.",
		func(c *Context) {
			keys := make([]string, 0, len(c.CSV.Metadata.Annotations))
			for k := range c.CSV.Metadata.Annotations {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				for _, known := range wellKnownCSVAnnotations {
					if k != known && strings.EqualFold(k, known) {
						c.Report(c.csvObj(), csvAnnotationField(k), fmt.Sprintf("annotation %q is read by no tool: the key OLM reads is %q", k, known), "rename it to "+known)
					}
				}
			}
		})
}

// examplesAnnotation returns the examples annotation tools read: alm-examples,
// else olm.examples.
func examplesAnnotation(csv *bundle.CSV) (key, value string, ok bool) {
	for _, k := range []string{bundle.AnnotationALMExamples, bundle.AnnotationOLMExamples} {
		if v, found := csv.Metadata.Annotations[k]; found {
			return k, v, true
		}
	}
	return "", "", false
}

// csvAnnotationField is the field path of a CSV annotation.
func csvAnnotationField(key string) string { return `metadata.annotations["` + key + `"]` }
