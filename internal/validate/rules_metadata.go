package validate

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/yamldoc"
)

// Rules about metadata/dependencies.yaml, metadata/properties.yaml and the
// metadata of every object: what OLM and the API server parse and refuse.

// Dependency and property types OLM resolves.
const (
	typeGVK         = "olm.gvk"
	typePackage     = "olm.package"
	typeLabel       = "olm.label"
	typeConstraint  = "olm.constraint"
	typeGVKRequired = "olm.gvk.required"
	typePkgRequired = "olm.package.required"
)

// maxAnnotationBytes is the API server's limit on the keys and values of one
// object's annotations together (apimachinery's TotalAnnotationSizeLimitB).
const maxAnnotationBytes = 256 * 1024

func init() {
	register(&Rule{ID: "metadata-dependencies", Severity: Error, Scope: ScopeBundle, NoCSV: true,
		What: "Each entry of metadata/dependencies.yaml has a known type (olm.gvk, olm.package, olm.label, olm.constraint) and a value of its shape: olm.gvk with group, version and kind; olm.package with packageName and a valid semver range in version; olm.label with a label; olm.constraint with exactly one of cel (with a rule), gvk, package, all, any or not.",
		Why:  "OLM's resolver parses every dependency of every bundle in a catalog: an entry it cannot parse is an error, and a dependency that can never be satisfied blocks the install. operator-sdk (operator-registry's format check) refuses the same entries.",
		Fix:  "Correct the entry as the message says, e.g. {type: olm.package, value: {packageName: etcd, version: '>=0.9.0'}}.",
		check: func(c *Context) {
			f := c.Bundle.DependenciesFile
			if f == nil || len(f.Docs) == 0 {
				return
			}
			checkMetadataList(c, f, "dependencies", checkDependency)
		}})

	register(&Rule{ID: "metadata-properties", Severity: Error, Scope: ScopeBundle, NoCSV: true,
		What: "Each entry of metadata/properties.yaml has a type and a value; the types OLM reads (olm.package, olm.gvk, olm.gvk.required, olm.package.required, olm.label, olm.constraint) have values of their shape; an olm.package property declared there or in the CSV's olm.properties annotation names the package of the package annotation.",
		Why:  "opm render and index builds copy these properties into the catalog, where OLM and opm validate parse the well-known types: one malformed value makes the whole catalog unusable. A declared olm.package property naming another package ends up next to the one made from the annotation, and opm validate refuses that catalog (catalog-property). operator-sdk does not read this file at all.",
		Fix:  "Correct the entry as the message says, e.g. {type: olm.gvk, value: {group: example.com, version: v1, kind: Widget}}; remove a declared olm.package property (index tools add it from the annotations) or make it name the bundle's package.",
		check: func(c *Context) {
			if f := c.Bundle.PropertiesFile; f != nil && len(f.Docs) > 0 {
				checkMetadataList(c, f, "properties", checkProperty)
			}
			if c.Bundle.Annotations == nil {
				return
			}
			pkg, ok := c.Bundle.Annotations.Values[bundle.AnnotationPackage]
			if !ok || strings.TrimSpace(pkg) == "" {
				return // annotations-required and annotations-package say so
			}
			for _, d := range declaredPackages(c) {
				if d.name != pkg {
					c.ReportFile(d.file, d.line, d.field, fmt.Sprintf("olm.package property names package %q, but the bundle's package annotation is %q", d.name, pkg),
						fmt.Sprintf("set packageName to %q, or remove the property (index tools add it from the annotation)", pkg))
				}
			}
		}})

	register(&Rule{ID: "manifest-metadata", Severity: Error, Scope: ScopeBundle, NoCSV: true,
		What: "Every object's metadata is what the API server accepts: label keys are qualified names and label values valid label values, annotation keys and finalizers are qualified names, annotations together are at most 256 KiB; objects other than the CSV and CRDs carry no metadata.namespace (a warning).",
		Why:  "The API server refuses an object (the CSV and CRDs included) with an invalid label, annotation key or finalizer, or over 256 KiB of annotations (a large alm-examples is the usual cause), and OLM then fails the install at that step. A namespace is not refused but ignored: OLM creates namespaced objects in the operator's namespace, whatever the manifest says (operator-sdk refuses it).",
		Fix:  "Fix the key or value as the message says (keys are [prefix/]name, names at most 63 characters of letters, digits, '-', '_' and '.'), shorten the annotations, remove metadata.namespace.",
		check: func(c *Context) {
			for _, o := range c.Bundle.Objects {
				checkObjectMeta(c, o)
			}
		}})
}

// checkMetadataList walks the list under key in the file's first document,
// checking each entry with check.
func checkMetadataList(c *Context, f *bundle.File, key string, check func(c *Context, f *bundle.File, field, typ string, value any)) {
	doc := f.Docs[0]
	report := func(field, msg, hint string) { c.ReportFile(f.Name, doc.LineOf(field), field, msg, hint) }
	top, ok := doc.Value.(map[string]any)
	if !ok {
		report("", fmt.Sprintf("%s is a %s, not a mapping with a %s list", f.Name, yamldoc.TypeName(doc.Value), key), fmt.Sprintf("write %s: [{type: ..., value: ...}]", key))
		return
	}
	raw, ok := top[key]
	if !ok {
		report("", fmt.Sprintf("%s has no %s list", f.Name, key), fmt.Sprintf("write %s: [{type: ..., value: ...}], or remove the file", key))
		return
	}
	list, ok := raw.([]any)
	if !ok && raw != nil {
		report(key, fmt.Sprintf("%s is a %s, not a list", key, yamldoc.TypeName(raw)), fmt.Sprintf("write %s: [{type: ..., value: ...}]", key))
		return
	}
	for i, e := range list {
		field := fmt.Sprintf("%s[%d]", key, i)
		m, ok := e.(map[string]any)
		if !ok {
			report(field, fmt.Sprintf("%s is a %s, not a mapping with type and value", field, yamldoc.TypeName(e)), "write {type: ..., value: ...}")
			continue
		}
		typ, ok := m["type"].(string)
		if !ok || typ == "" {
			report(field+".type", fmt.Sprintf("%s has no type", field), "give the entry a type such as "+typeGVK)
			continue
		}
		v, ok := m["value"]
		if !ok || v == nil {
			report(field+".value", fmt.Sprintf("%s (%s) has no value", field, typ), "give the entry a value")
			continue
		}
		check(c, f, field, typ, v)
	}
}

// shape checks a value against the fields it must have: each of fields is
// required and must be a string; field names match without regard to case,
// as Go's JSON decoding (which OLM uses) matches them. It returns the values
// found and the problems.
func shape(v any, fields ...string) (map[string]string, []string) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, []string{fmt.Sprintf("value is a %s, not a mapping", yamldoc.TypeName(v))}
	}
	got := map[string]string{}
	var probs []string
	for _, want := range fields {
		var val any
		found := false
		for k, x := range m {
			if strings.EqualFold(k, want) {
				val, found = x, true
				break
			}
		}
		if !found || val == nil {
			continue
		}
		s, ok := val.(string)
		if !ok {
			probs = append(probs, fmt.Sprintf("%s is a %s, not a string", want, yamldoc.TypeName(val)))
			continue
		}
		got[want] = s
	}
	return got, probs
}

func checkDependency(c *Context, f *bundle.File, field, typ string, v any) {
	report := func(sub, msg, hint string) {
		p := field + ".value"
		if sub != "" {
			p += "." + sub
		}
		c.ReportFile(f.Name, f.Docs[0].LineOf(p), p, fmt.Sprintf("%s (%s): %s", field, typ, msg), hint)
	}
	switch typ {
	case typeGVK:
		g, probs := shape(v, "group", "version", "kind")
		for _, p := range probs {
			report("", p, "write {group: example.com, version: v1, kind: Widget}")
		}
		if probs != nil {
			return
		}
		for _, k := range []string{"group", "version", "kind"} {
			if g[k] == "" {
				report(k, "no "+k, "olm.gvk needs group, version and kind: the API the bundle needs from another operator (core Kubernetes APIs are never provided by bundles)")
			}
		}
	case typePackage:
		p, probs := shape(v, "packageName", "version")
		for _, pr := range probs {
			report("", pr, "write {packageName: etcd, version: '>=0.9.0'}")
		}
		if probs != nil {
			return
		}
		if p["packageName"] == "" {
			report("packageName", "no packageName", "name the package the bundle needs")
		}
		if p["version"] == "" {
			report("version", "no version range", "give the versions accepted as a semver range, e.g. '>=0.9.0 <2.0.0'")
		} else if _, err := semver.ParseRange(p["version"]); err != nil {
			report("version", fmt.Sprintf("version %q is not a semver range: %v", p["version"], err), "write a range such as '>=0.9.0 <2.0.0' (comparisons of full versions, separated by spaces)")
		}
	case typeLabel:
		l, probs := shape(v, "label")
		for _, pr := range probs {
			report("", pr, "write {label: some-label}")
		}
		if probs == nil && l["label"] == "" {
			report("label", "no label", "write {label: some-label}")
		}
	case typeConstraint:
		checkConstraint(v, "", report)
	default:
		hint := "use olm.gvk, olm.package, olm.label or olm.constraint"
		if c := closest(typ, []string{typeGVK, typePackage, typeLabel, typeConstraint}); c != "" {
			hint = fmt.Sprintf("did you mean %s? (%s)", c, hint)
		}
		p := field + ".type"
		c.ReportFile(f.Name, f.Docs[0].LineOf(p), p, fmt.Sprintf("%s: unknown dependency type %s", field, typ), hint)
	}
}

// checkConstraint checks an olm.constraint value: a failureMessage and
// exactly one of cel, gvk, package, all, any, not (compound constraints
// nest further constraints under constraints).
func checkConstraint(v any, at string, report func(sub, msg, hint string)) {
	sub := func(s string) string {
		if at == "" {
			return s
		}
		return at + "." + s
	}
	m, ok := v.(map[string]any)
	if !ok {
		report(at, fmt.Sprintf("constraint is a %s, not a mapping", yamldoc.TypeName(v)), "write {failureMessage: ..., cel: {rule: ...}}")
		return
	}
	var kinds []string
	for k := range m {
		switch strings.ToLower(k) {
		case "cel", "gvk", "package", "all", "any", "not":
			kinds = append(kinds, k)
		}
	}
	sort.Strings(kinds)
	if len(kinds) != 1 {
		msg := "constraint has none of cel, gvk, package, all, any, not"
		if len(kinds) > 1 {
			msg = "constraint has more than one of cel, gvk, package, all, any, not: " + strings.Join(kinds, ", ")
		}
		report(at, msg, "give exactly one, e.g. cel: {rule: 'properties.exists(p, p.type == \"certified\")'}")
		return
	}
	k := kinds[0]
	switch strings.ToLower(k) {
	case "cel":
		r, probs := shape(m[k], "rule")
		for _, p := range probs {
			report(sub(k), p, "write cel: {rule: '...'}")
		}
		if probs == nil && strings.TrimSpace(r["rule"]) == "" {
			report(sub(k), "cel has no rule", "write the CEL expression the other bundle's properties must satisfy, e.g. rule: 'properties.exists(p, p.type == \"certified\")'")
		} else if probs == nil {
			if why := celShape(r["rule"]); why != "" {
				report(sub(k+".rule"), "CEL rule does not parse: "+why, "fix the expression (quotes and brackets must balance)")
			}
		}
	case "gvk":
		g, probs := shape(m[k], "group", "version", "kind")
		for _, p := range probs {
			report(sub(k), p, "write gvk: {group: ..., version: ..., kind: ...}")
		}
		if probs == nil && (g["group"] == "" || g["version"] == "" || g["kind"] == "") {
			report(sub(k), "gvk needs group, version and kind", "write gvk: {group: example.com, version: v1, kind: Widget}")
		}
	case "package":
		p, probs := shape(m[k], "packageName", "versionRange")
		for _, pr := range probs {
			report(sub(k), pr, "write package: {packageName: ..., versionRange: ...}")
		}
		if probs != nil {
			return
		}
		if p["packageName"] == "" {
			report(sub(k), "package has no packageName", "name the package")
		}
		if _, err := semver.ParseRange(p["versionRange"]); err != nil {
			report(sub(k), fmt.Sprintf("versionRange %q is not a semver range", p["versionRange"]), "write a range such as '>=1.0.0 <2.0.0'")
		}
	case "all", "any", "not":
		inner, ok := m[k].(map[string]any)
		list, _ := inner["constraints"].([]any)
		if !ok || len(list) == 0 {
			report(sub(k), k+" has no constraints list", "write "+k+": {constraints: [{gvk: ...}, ...]}")
			return
		}
		for i, e := range list {
			checkConstraint(e, sub(fmt.Sprintf("%s.constraints[%d]", k, i)), report)
		}
	}
}

// celShape returns why a CEL rule cannot parse, for the mistakes a shape
// check can see (opm does not compile CEL): unbalanced brackets or quotes.
func celShape(rule string) string {
	var stack []rune
	pairs := map[rune]rune{')': '(', ']': '[', '}': '{'}
	var quote rune
	for i, r := range rule {
		if quote != 0 {
			if r == '\\' {
				continue
			}
			if r == quote && (i == 0 || rule[i-1] != '\\') {
				quote = 0
			}
			continue
		}
		switch r {
		case '"', '\'':
			quote = r
		case '(', '[', '{':
			stack = append(stack, r)
		case ')', ']', '}':
			if len(stack) == 0 || stack[len(stack)-1] != pairs[r] {
				return fmt.Sprintf("unexpected %q", r)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if quote != 0 {
		return "unterminated string"
	}
	if len(stack) > 0 {
		return fmt.Sprintf("unclosed %q", stack[len(stack)-1])
	}
	return ""
}

func checkProperty(c *Context, f *bundle.File, field, typ string, v any) {
	report := func(msg, hint string) {
		p := field + ".value"
		c.ReportFile(f.Name, f.Docs[0].LineOf(p), p, fmt.Sprintf("%s (%s): %s", field, typ, msg), hint)
	}
	need := func(hint string, fields ...string) map[string]string {
		got, probs := shape(v, fields...)
		for _, p := range probs {
			report(p, hint)
		}
		if probs != nil {
			return nil
		}
		return got
	}
	switch typ {
	case typePackage:
		if p := need("write {packageName: ..., version: 1.2.3}", "packageName", "version"); p != nil {
			if p["packageName"] == "" {
				report("no packageName", "name the bundle's package")
			}
			if _, err := semver.Parse(p["version"]); err != nil {
				report(fmt.Sprintf("version %q is not a semantic version", p["version"]), "give the bundle's version, e.g. 1.2.3")
			}
		}
	case typeGVK, typeGVKRequired:
		if g := need("write {group: ..., version: ..., kind: ...}", "group", "version", "kind"); g != nil && (g["version"] == "" || g["kind"] == "") {
			report("needs version and kind", "write {group: example.com, version: v1, kind: Widget}")
		}
	case typePkgRequired:
		if p := need("write {packageName: ..., versionRange: '>=1.0.0'}", "packageName", "versionRange"); p != nil {
			if p["packageName"] == "" {
				report("no packageName", "name the package the bundle needs")
			}
			if _, err := semver.ParseRange(p["versionRange"]); err != nil {
				report(fmt.Sprintf("versionRange %q is not a semver range", p["versionRange"]), "write a range such as '>=1.0.0 <2.0.0'")
			}
		}
	case typeLabel:
		if l := need("write {label: ...}", "label"); l != nil && l["label"] == "" {
			report("no label", "write {label: some-label}")
		}
	case typeConstraint:
		checkConstraint(v, "", func(_, msg, hint string) { report(msg, hint) })
	}
}

// checkObjectMeta checks an object's labels, annotations and namespace as
// the API server's metadata validation does.
func checkObjectMeta(c *Context, o *bundle.Object) {
	meta := bundle.MapAt(o.Map(), "metadata")
	if meta == nil {
		return
	}
	if labels, ok := meta["labels"].(map[string]any); ok {
		for _, k := range sortedKeys(labels) {
			f := childPath("metadata.labels", k)
			for _, msg := range validation.IsQualifiedName(k) {
				c.Report(o, f, fmt.Sprintf("label key %q is invalid: %s", k, msg), "use [prefix/]name: a DNS subdomain prefix, and a name of at most 63 letters, digits, '-', '_' or '.'")
			}
			s, isStr := labels[k].(string)
			if !isStr {
				c.Report(o, f, fmt.Sprintf("label %q is a %s, not a string", k, yamldoc.TypeName(labels[k])), "quote the value")
				continue
			}
			for _, msg := range validation.IsValidLabelValue(s) {
				c.Report(o, f, fmt.Sprintf("label %q has an invalid value %q: %s", k, s, msg), "use at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit")
			}
		}
	}
	if anns, ok := meta["annotations"].(map[string]any); ok {
		total := 0
		for _, k := range sortedKeys(anns) {
			for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
				c.Report(o, childPath("metadata.annotations", k), fmt.Sprintf("annotation key %q is invalid: %s", k, msg), "use [prefix/]name: a DNS subdomain prefix, and a name of at most 63 letters, digits, '-', '_' or '.'")
			}
			total += len(k)
			switch v := anns[k].(type) {
			case string:
				total += len(v)
			case nil:
			default:
				b, _ := json.Marshal(v)
				total += len(b)
			}
		}
		if total > maxAnnotationBytes {
			c.Report(o, "metadata.annotations", fmt.Sprintf("annotations take %d bytes, over the API server's limit of %d (256 KiB)", total, maxAnnotationBytes),
				"shorten the largest annotations (alm-examples: one small example per API)")
		}
	}
	for i, v := range bundle.Slice(meta, "finalizers") {
		s, _ := v.(string)
		for _, msg := range validation.IsQualifiedName(s) {
			c.Report(o, fmt.Sprintf("metadata.finalizers[%d]", i), fmt.Sprintf("finalizer %q is invalid: %s", s, msg), "use a qualified name such as example.com/cleanup")
		}
	}
	if ns, _ := meta["namespace"].(string); ns != "" && o.Kind != bundle.CSVKind && o.Kind != bundle.CRDKind {
		c.ReportAs(Warning, o, "metadata.namespace", fmt.Sprintf("%s %s sets metadata.namespace %q, which OLM ignores (it creates the object in the operator's namespace)", o.Kind, o.Name, ns),
			"remove metadata.namespace")
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
