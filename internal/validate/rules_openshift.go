package validate

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/openshift"
	"github.com/opmkit/opm/internal/yamldoc"
)

// OpenShift rules: what a bundle shipped in OpenShift's catalogs declares
// about the OpenShift releases it supports, checked against the one table
// of OpenShift and Kubernetes releases (internal/openshift). Opt-in:
// --select openshift; --ocp-version judges one release instead of the
// bundle's range.
var (
	RuleOCPVersions = register(&Rule{ID: "openshift-versions", Severity: Error, Scope: ScopeBundle, NoCSV: true, Set: SetOpenShift,
		What: "metadata/annotations.yaml has com.redhat.openshift.versions in the form Red Hat's catalog builds read: v4.12 (that release and later), =v4.14 (only that one), v4.12-v4.16 (a range), or one of the legacy lists v4.5,v4.6 and v4.6,v4.5; a missing annotation, a release opm's table does not know, or an --ocp-version outside the range are warnings.",
		Why:  "The catalog builds decide from this value which OpenShift releases' catalogs get the bundle; a value they cannot read (a space, a missing v, another list) keeps the bundle out of every catalog, and a bundle without it goes into all of them, including releases it was never tested on.",
		Fix:  "Write the range without spaces, each release with its v: com.redhat.openshift.versions: v4.12-v4.16 (and the same LABEL in bundle.Dockerfile)."})
	RuleOCPMinKube = register(&Rule{ID: "openshift-min-kube-version", Severity: Error, Scope: ScopeBundle, Set: SetOpenShift,
		What: "spec.minKubeVersion is no newer than the Kubernetes release of the oldest OpenShift release the bundle claims (or of --ocp-version).",
		Why:  "OLM refuses to install a CSV whose minKubeVersion is above the cluster's Kubernetes version; a bundle whose range starts at an OpenShift release with an older Kubernetes is listed in that release's catalog and fails to install there.",
		Fix:  "Start com.redhat.openshift.versions at the first OpenShift release whose Kubernetes meets minKubeVersion, or lower minKubeVersion if the operator works there."})
	RuleOCPRemovedAPI = register(&Rule{ID: "openshift-removed-api", Severity: Error, Scope: ScopeBundle, NoCSV: true, Set: SetOpenShift,
		What: "No manifest uses a Kubernetes API removed in the Kubernetes release of the newest OpenShift release the bundle claims (of --ocp-version; the newest release opm knows for an open range or no range).",
		Why:  "A cluster past the removal refuses the object, so the install fails on the OpenShift releases at the end of the bundle's range, whose catalogs still list it.",
		Fix:  "Move the manifest to the replacement API version, or end com.redhat.openshift.versions before the release that removed it (v4.8 for APIs removed in Kubernetes 1.22)."})
	RuleOCPMaxVersion = register(&Rule{ID: "openshift-max-version", Severity: Error, Scope: ScopeBundle, Set: SetOpenShift,
		What: "An olm.maxOpenShiftVersion property is given once, as a quoted Major.Minor string (4.14, not 4.14.1, not the YAML number 4.10), in the CSV's olm.properties annotation (a warning when it is only in metadata/properties.yaml), and is no older than the first release the bundle claims.",
		Why:  "OLM reads the property from the installed CSV's olm.properties annotation to block cluster upgrades past that release, and refuses the bundle when the value is empty, not Major.Minor, or given twice; a YAML number loses its trailing zero (4.10 becomes 4.1); a maximum older than the bundle's first release makes it uninstallable everywhere it is listed.",
		Fix:  "Declare it once in the CSV: metadata.annotations[\"olm.properties\"]: '[{\"type\": \"olm.maxOpenShiftVersion\", \"value\": \"4.14\"}]'."})
)

// AnnotationOpenShiftVersions names the OpenShift releases a bundle is for.
const AnnotationOpenShiftVersions = "com.redhat.openshift.versions"

// maxOpenShiftVersion is the property type OLM reads.
const maxOpenShiftVersion = "olm.maxOpenShiftVersion"

func init() {
	RuleOCPVersions.check = checkOCPVersions
	RuleOCPMinKube.check = checkOCPMinKube
	RuleOCPRemovedAPI.check = checkOCPRemovedAPI
	RuleOCPMaxVersion.check = checkOCPMaxVersion
}

// ocpRange is the bundle's com.redhat.openshift.versions range; ok is false
// when it is missing or does not parse (openshift-versions says so).
func (c *Context) ocpRange() (openshift.Range, bool) {
	a := c.Bundle.Annotations
	if a == nil {
		return openshift.Range{}, false
	}
	v, ok := a.Values[AnnotationOpenShiftVersions]
	if !ok {
		return openshift.Range{}, false
	}
	r, err := openshift.ParseVersions(v)
	return r, err == nil
}

// ocpTarget is --ocp-version, when given.
func (c *Context) ocpTarget() (openshift.Release, bool) {
	if c.Opts.OCPVersion == "" {
		return openshift.Release{}, false
	}
	r, err := openshift.ParseRelease(c.Opts.OCPVersion)
	return r, err == nil
}

func checkOCPVersions(c *Context) {
	a := c.Bundle.Annotations
	if a == nil {
		return // annotations-missing
	}
	f := annotationPath(AnnotationOpenShiftVersions)
	if contains(a.NonString, AnnotationOpenShiftVersions) {
		reportAnnotation(c, a, f, fmt.Sprintf("%s is a YAML %s, not a string", AnnotationOpenShiftVersions, yamldoc.TypeName(mustLookup(a.Doc.Value, "annotations", AnnotationOpenShiftVersions))), `quote it: "v4.12-v4.16"`)
		return
	}
	v, ok := a.Values[AnnotationOpenShiftVersions]
	if !ok {
		c.ReportFileAs(Warning, a.File, a.Doc.LineOf("annotations"), f,
			AnnotationOpenShiftVersions+" is not set: the bundle goes into the catalog of every OpenShift release",
			"name the releases you support, e.g. "+AnnotationOpenShiftVersions+": v4.12-v4.16")
		return
	}
	r, err := openshift.ParseVersions(v)
	if err != nil {
		reportAnnotation(c, a, f, fmt.Sprintf("%s %q: %v", AnnotationOpenShiftVersions, v, err), "write v4.12 (and later), =v4.14 (only) or v4.12-v4.16 (a range)")
		return
	}
	ends := []openshift.Release{r.Min}
	if !r.Open {
		ends = append(ends, r.Max)
	}
	for _, e := range ends {
		if _, known := openshift.Kube(e); known {
			continue
		}
		why := fmt.Sprintf("OpenShift %s is newer than the releases opm knows (up to %s)", e, openshift.Latest())
		if e.Less(openshift.First()) {
			why = fmt.Sprintf("OpenShift %s predates the operator catalogs of OpenShift 4 (from %s)", e, openshift.First())
		}
		c.ReportFileAs(Warning, a.File, a.Doc.LineOf(f), f, fmt.Sprintf("%s %q: %s", AnnotationOpenShiftVersions, v, why), "name an OpenShift 4 release")
	}
	if t, ok := c.ocpTarget(); ok && !r.Contains(t) {
		c.ReportFileAs(Warning, a.File, a.Doc.LineOf(f), f,
			fmt.Sprintf("--ocp-version %s is outside the bundle's range (%s): its catalog does not get the bundle", t, r), "")
	}
}

// judged is the OpenShift release the range rules judge at: --ocp-version,
// else the range's oldest (oldest true) or newest release, else for a
// bundle without a range the newest release opm knows.
func (c *Context) judged(oldest bool) (openshift.Release, string) {
	if t, ok := c.ocpTarget(); ok {
		return t, "--ocp-version " + t.String()
	}
	r, ok := c.ocpRange()
	if !ok {
		if oldest {
			return openshift.Release{}, ""
		}
		return openshift.Latest(), fmt.Sprintf("the newest OpenShift release opm knows (%s), as the bundle names no range", openshift.Latest())
	}
	if oldest {
		return r.Min, fmt.Sprintf("the bundle claims OpenShift %s", r)
	}
	return r.Newest(), fmt.Sprintf("the bundle claims OpenShift %s", r)
}

func checkOCPMinKube(c *Context) {
	mk := strings.TrimSpace(c.CSV.Spec.MinKubeVersion)
	if mk == "" {
		return
	}
	min, err := semver.ParseTolerant(mk)
	if err != nil {
		return // csv-min-kube-version-format
	}
	rel, why := c.judged(true)
	if why == "" {
		return
	}
	kube, ok := openshift.Kube(rel)
	if !ok {
		return // openshift-versions warns about the release
	}
	if min.Major > uint64(kube.Major) || (min.Major == uint64(kube.Major) && min.Minor > uint64(kube.Minor)) {
		c.Report(c.csvObj(), "spec.minKubeVersion",
			fmt.Sprintf("minKubeVersion %s is above Kubernetes %s of OpenShift %s (%s): OLM refuses to install the bundle there", mk, kube, rel, why),
			fmt.Sprintf("start the range at the first OpenShift release with Kubernetes %d.%d, or lower minKubeVersion", min.Major, min.Minor))
	}
}

func checkOCPRemovedAPI(c *Context) {
	rel, why := c.judged(false)
	kube, ok := openshift.Kube(rel)
	if !ok {
		if rel.Less(openshift.First()) {
			return
		}
		kube, _ = openshift.Kube(openshift.Latest())
	}
	target := semver.Version{Major: uint64(kube.Major), Minor: uint64(kube.Minor)}
	for _, o := range c.Bundle.Objects {
		for _, r := range removedAPIs {
			if o.APIVersion != r.groupVersion || (r.kinds != nil && !contains(r.kinds, o.Kind)) {
				continue
			}
			removed := semver.MustParse(r.removedIn + ".0")
			if target.LT(removed) {
				continue
			}
			c.Report(o, "apiVersion",
				fmt.Sprintf("%s %s uses %s, removed in Kubernetes %s; OpenShift %s runs Kubernetes %s (%s)", o.Kind, o.Name, o.APIVersion, r.removedIn, rel, kube, why),
				"use "+r.replacement)
		}
	}
}

// maxVersionSource is one olm.maxOpenShiftVersion property and where it is.
type maxVersionSource struct {
	raw        any // the value: a string, a number, ...
	file       string
	line       int
	field      string
	annotation bool // in the CSV's olm.properties annotation
}

func checkOCPMaxVersion(c *Context) {
	var found []maxVersionSource
	obj := c.csvObj()
	annField := `metadata.annotations["olm.properties"]`
	if text, ok := c.CSV.Metadata.Annotations[bundle.AnnotationProperties]; ok && strings.Contains(text, maxOpenShiftVersion) {
		var props []struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal([]byte(text), &props); err != nil {
			c.Report(obj, annField, fmt.Sprintf("the olm.properties annotation is not a JSON list of properties: %v; OLM cannot read %s from it", err, maxOpenShiftVersion),
				`write it as '[{"type": "olm.maxOpenShiftVersion", "value": "4.14"}]'`)
		}
		for _, p := range props {
			if p.Type != maxOpenShiftVersion {
				continue
			}
			var v any
			_ = json.Unmarshal(p.Value, &v)
			if _, isNum := v.(float64); isNum {
				v = json.Number(strings.TrimSpace(string(p.Value))) // keep 4.10 as written
			}
			found = append(found, maxVersionSource{raw: v, file: obj.File, line: obj.Line(annField), field: annField, annotation: true})
		}
	}
	inAnnotation := len(found) > 0
	for _, p := range c.Bundle.Properties {
		if p.Type != maxOpenShiftVersion {
			continue
		}
		line := 0
		if f := c.Bundle.PropertiesFile; f != nil && len(f.Docs) > 0 {
			if line = f.Docs[0].LineOf(p.Field + ".value"); line == 0 {
				line = f.Docs[0].LineOf(p.Field)
			}
		}
		found = append(found, maxVersionSource{raw: p.Value, file: bundle.PropertiesFile, line: line, field: p.Field + ".value"})
	}
	if len(found) == 0 {
		return
	}
	if !inAnnotation {
		s := found[0]
		c.ReportFileAs(Warning, s.file, s.line, s.field,
			maxOpenShiftVersion+" is only in metadata/properties.yaml: OLM blocks cluster upgrades by the installed CSV's olm.properties annotation, which does not have it",
			`declare it in the CSV: metadata.annotations["olm.properties"]: '[{"type": "olm.maxOpenShiftVersion", "value": "4.14"}]'`)
	}
	perPlace := map[bool]int{}
	for _, s := range found {
		perPlace[s.annotation]++
		if perPlace[s.annotation] == 2 {
			c.ReportFile(s.file, s.line, s.field, maxOpenShiftVersion+" is declared more than once: OLM refuses the bundle", "keep one")
		}
		v, msg := parseMaxOCP(s.raw)
		if msg != "" {
			c.ReportFile(s.file, s.line, s.field, msg, `write the value as a quoted Major.Minor string, e.g. "4.14"`)
			continue
		}
		if r, ok := c.ocpRange(); ok && v.Less(r.Min) {
			c.ReportFile(s.file, s.line, s.field,
				fmt.Sprintf("%s %s is older than OpenShift %s, the first release the bundle claims: OLM installs it on none of them", maxOpenShiftVersion, v, r.Min),
				"raise the maximum or start the range earlier")
		}
	}
}

// onlyMaxOpenShiftVersion says whether an olm.properties annotation is a
// list of olm.maxOpenShiftVersion properties alone: the one property OLM
// reads from the installed CSV, so the annotation is its right place.
func onlyMaxOpenShiftVersion(text string) bool {
	var props []struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal([]byte(text), &props); err != nil || len(props) == 0 {
		return false
	}
	for _, p := range props {
		if p.Type != maxOpenShiftVersion {
			return false
		}
	}
	return true
}

// parseMaxOCP reads a maxOpenShiftVersion value as OLM does (quotes
// trimmed, Major.Minor only), and says what is wrong with it.
func parseMaxOCP(raw any) (openshift.Release, string) {
	var text string
	switch v := raw.(type) {
	case string:
		text = v
	case json.Number:
		// In the annotation the JSON text is kept, so OLM reads 4.10 as
		// written; still, a string is what it documents.
		text = string(v)
	case float64, int64, int:
		return openshift.Release{}, fmt.Sprintf("%s is the YAML number %v, which loses trailing zeros (4.10 reads as 4.1)", maxOpenShiftVersion, v)
	default:
		return openshift.Release{}, fmt.Sprintf("%s value is a %s, not a Major.Minor string", maxOpenShiftVersion, yamldoc.TypeName(raw))
	}
	text = strings.Trim(text, `"`)
	if text == "" {
		return openshift.Release{}, maxOpenShiftVersion + " is empty: OLM refuses the bundle"
	}
	sv, err := semver.ParseTolerant(text)
	if err != nil {
		return openshift.Release{}, fmt.Sprintf("%s %q does not parse: %v; OLM refuses the bundle", maxOpenShiftVersion, text, err)
	}
	if sv.Patch != 0 || len(sv.Pre) > 0 || len(sv.Build) > 0 {
		return openshift.Release{}, fmt.Sprintf("%s %q is not Major.Minor: OLM refuses the bundle", maxOpenShiftVersion, text)
	}
	return openshift.Release{Major: int(sv.Major), Minor: int(sv.Minor)}, ""
}
