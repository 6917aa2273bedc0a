package validate

import (
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/yamldoc"
)

// Rules about where files are and how they are written.

func init() {
	register(&Rule{ID: "bundle-nested", Severity: Warning, Scope: ScopeBundle, NoCSV: true,
		What: "The bundle (manifests/ and metadata/) sits at the top of the directory given.",
		Why:  "opm found the bundle in a subdirectory, but `opm index add`, `bundle build` and upstream tools given this directory look only at its top and fail with \"no manifests\".",
		Fix:  "Point tools at the subdirectory that holds manifests/ and metadata/, or move those two up.",
		check: func(c *Context) {
			if c.Bundle.Root != "." {
				c.ReportFile(c.Bundle.Root+"/", 0, "", fmt.Sprintf("the bundle was found in the subdirectory %s/, not at the top of the directory given", c.Bundle.Root),
					fmt.Sprintf("give %s/ to build and index tools (or move manifests/ and metadata/ up one level)", c.Bundle.Root))
			}
		}})

	register(&Rule{ID: "bundle-ignored-file", Severity: Info, Scope: ScopeBundle, NoCSV: true,
		What: "Every file in manifests/ and metadata/ is one OLM reads.",
		Why:  "OLM reads only .yaml, .yml and .json files directly in those directories; anything else is silently left out of the installed operator.",
		Fix:  "Remove the file, or convert it to YAML and put it directly in manifests/.",
		check: func(c *Context) {
			for _, name := range c.Bundle.Ignored {
				c.ReportFile(name, 0, "", "not read: OLM only reads .yaml, .yml and .json files directly inside manifests/ and metadata/",
					"remove it, or move its objects into a YAML file directly in manifests/")
			}
		}})

	register(&Rule{ID: "manifest-multi-document", Severity: Error, Scope: ScopeBundle, NoCSV: true,
		What: "Each manifest file holds one object.",
		Why:  "OLM's bundle unpacker (operator-registry) decodes only the first YAML document of each file: every object after the first `---` is silently never installed. opm reads them all, so validation and indexing see them, but the cluster will not.",
		Fix:  "Split the file: one object per file in manifests/.",
		check: func(c *Context) {
			for _, f := range c.Bundle.Files {
				if !strings.HasPrefix(f.Name, bundle.ManifestsDir+"/") || len(f.Docs) < 2 {
					continue
				}
				var lost []string
				for _, d := range f.Docs[1:] {
					lost = append(lost, fmt.Sprintf("%s %s (line %d)", bundle.Str(d.Value, "kind"), bundle.Str(d.Value, "metadata", "name"), d.Line))
				}
				c.ReportFile(f.Name, f.Docs[1].Line, "", fmt.Sprintf("file holds %d objects; OLM installs only the first, so these are lost: %s", len(f.Docs), strings.Join(lost, ", ")),
					"split it into one file per object")
			}
		}})

	register(&Rule{ID: "manifest-object", Severity: Error, Scope: ScopeBundle, NoCSV: true,
		What: "Every document in manifests/ is a Kubernetes object with apiVersion, kind and metadata.name, and no two objects share kind and name.",
		Why:  "OLM creates each object in manifests/; one without a type or name cannot be created, and a second object of the same kind and name overwrites the first.",
		Fix:  "Give the object apiVersion, kind and metadata.name, or remove it; rename or remove duplicates.",
		check: func(c *Context) {
			seen := map[string]*bundle.Object{}
			for _, o := range c.Bundle.Objects {
				if o.Map() == nil {
					c.Report(o, "", "document is not a mapping (an object with apiVersion, kind and metadata)", "make it a Kubernetes object or remove it")
					continue
				}
				var missing []string
				if o.APIVersion == "" {
					missing = append(missing, "apiVersion")
				}
				if o.Kind == "" {
					missing = append(missing, "kind")
				}
				if o.Name == "" {
					missing = append(missing, "metadata.name")
				}
				if len(missing) > 0 {
					if msg, hint := misCased(o.Map(), missing); msg != "" {
						c.Report(o, "", msg, hint)
						continue
					}
					c.Report(o, "", "object has no "+strings.Join(missing, ", "), "add the missing fields")
					continue
				}
				if o.Kind == bundle.CRDKind {
					continue // crd-duplicate covers CRDs across API versions
				}
				key := o.Group() + "/" + o.Kind + "/" + o.Name
				if prev, dup := seen[key]; dup {
					c.Report(o, "metadata.name", fmt.Sprintf("%s %q is defined twice (also in %s)", o.Kind, o.Name, prev.File), "remove one of them")
					continue
				}
				seen[key] = o
			}
		}})

	register(&Rule{ID: "yaml-ambiguous-scalar", Severity: Warning, Scope: ScopeCSV, NoCSV: true,
		What: "Plain (unquoted) scalars mean the same to every YAML reader.",
		Why:  "Kubernetes tools read YAML 1.1, where on/off/yes/no/y/n are booleans; YAML 1.2 tools read them as strings, and YAML 1.1 parsers such as PyYAML refuse a plain `=`. The same file then means different things to different tools.",
		Fix:  "Quote the value (\"on\", \"=\") or write true/false.",
		check: func(c *Context) {
			for _, f := range c.Bundle.Files {
				for _, d := range f.Docs {
					for _, a := range d.Ambiguous {
						c.ReportFile(f.Name, a.Line, "", fmt.Sprintf("plain %q: %s", a.Value, a.Reading), fmt.Sprintf("quote it: %q", a.Value))
					}
				}
			}
		}})

	register(&Rule{ID: "yaml-duplicate-key", Severity: Warning, Scope: ScopeCSV, NoCSV: true,
		What: "No mapping gives the same key twice (a key overriding a `<<:` merge key is fine).",
		Why:  "Kubernetes tools keep the last value without a word, strict YAML readers refuse the file, and the first value (often the one that was meant) is lost. In a CSV's metadata.name or spec.version it is an error: the bundle's identity then depends on which reader you ask, and an index stores the last one.",
		Fix:  "Remove or merge one of the two entries.",
		check: func(c *Context) {
			for _, f := range c.Bundle.Files {
				for _, d := range f.Docs {
					isCSV := bundle.Str(d.Value, "kind") == bundle.CSVKind
					for _, a := range d.Duplicates {
						if isCSV && csvIdentityFields[a.Path] {
							c.ReportFileAs(Error, f.Name, a.Line, a.Path, fmt.Sprintf("the CSV gives %s twice; Kubernetes and opm index add keep the last value, %v, other readers the first", a.Path, describeValue(d.Value, strings.Split(a.Path, ".")...)),
								"keep one "+a.Path+" (the bundle's identity must not depend on the reader)")
							continue
						}
						c.ReportFile(f.Name, a.Line, a.Path, fmt.Sprintf("key %q: %s", a.Value, a.Reading), "remove or merge one of the two entries")
					}
				}
			}
		}})
}

// csvIdentityFields name a CSV: given twice, they are an error, not a
// warning.
var csvIdentityFields = map[string]bool{"metadata.name": true, "spec.version": true}

// Rules about metadata/annotations.yaml.

func init() {
	annotationsRule := func(id string, sev Severity, what, why, fix string, check func(*Context, *bundle.Annotations)) {
		register(&Rule{ID: id, Severity: sev, Scope: ScopeBundle, NoCSV: true, What: what, Why: why, Fix: fix,
			check: func(c *Context) {
				if c.Bundle.Annotations != nil {
					check(c, c.Bundle.Annotations)
				}
			}})
	}

	register(&Rule{ID: "annotations-missing", Severity: Error, Scope: ScopeBundle, NoCSV: true,
		What: "The bundle has metadata/annotations.yaml.",
		Why:  "The annotations name the package and channels; without them the bundle cannot be built into an image or added to an index.",
		Fix:  "Run `opm bundle generate -d manifests/ -p PACKAGE -c CHANNELS` to write it.",
		check: func(c *Context) {
			if c.Bundle.Annotations != nil {
				return
			}
			for _, name := range c.Bundle.Empty {
				if stem := strings.TrimSuffix(name, path.Ext(name)); stem == bundle.MetadataDir+"/annotations" {
					c.ReportFile(name, 0, "", name+" is empty (no YAML document in it)", "fill it in: `opm bundle generate -d manifests/ -p PACKAGE -c CHANNELS` writes it")
					return
				}
			}
			c.ReportFile(bundle.AnnotationsFile, 0, "", "metadata/annotations.yaml is missing", "run `opm bundle generate -d manifests/ -p PACKAGE -c CHANNELS` to write it")
		}})

	annotationsRule("annotations-required", Error,
		"annotations.yaml holds every required key as a string.",
		"OLM and opm read the media type, directories, package and channels from these keys; a missing key stops the bundle from being built or indexed.",
		"Add the missing keys under `annotations:` (opm bundle generate writes them all).",
		func(c *Context, a *bundle.Annotations) {
			for _, k := range a.NonString {
				// Only the keys OLM and opm read must be strings; vendors'
				// own keys (com.redhat.delivery.operator.bundle: true) are
				// theirs to type.
				if !contains(bundle.RequiredAnnotations, k) && k != bundle.AnnotationDefaultChannel {
					continue
				}
				reportAnnotation(c, a, annotationPath(k), fmt.Sprintf("annotation %s is a %s, not a string", k, yamldoc.TypeName(mustLookup(a.Doc.Value, "annotations", k))), "quote the value")
			}
			if bundle.MapAt(a.Doc.Value, "annotations") == nil {
				c.ReportFile(a.File, a.Doc.Line, "annotations", "the file has no `annotations:` mapping", "put the keys under a top-level `annotations:` key")
				return
			}
			for _, k := range bundle.RequiredAnnotations {
				if _, ok := a.Values[k]; !ok && !contains(a.NonString, k) {
					c.ReportFile(a.File, a.Doc.LineOf("annotations"), annotationPath(k), "required annotation "+k+" is missing", "add it under annotations:")
				}
			}
		})

	annotationsRule("annotations-mediatype", Error,
		"The media type annotation is registry+v1 (or helm, plain).",
		"OLM only installs registry+v1 bundles from a CSV; another value makes tools refuse or misread the bundle.",
		"Set operators.operatorframework.io.bundle.mediatype.v1: registry+v1.",
		func(c *Context, a *bundle.Annotations) {
			v, ok := a.Values[bundle.AnnotationMediaType]
			if !ok {
				return
			}
			f := annotationPath(bundle.AnnotationMediaType)
			switch v {
			case bundle.MediaTypeRegistryV1:
			case bundle.MediaTypeHelm, bundle.MediaTypePlain:
				if c.CSV != nil {
					reportAnnotation(c, a, f, fmt.Sprintf("media type is %q but the bundle holds a ClusterServiceVersion", v), "use registry+v1 for a CSV bundle")
				}
			default:
				reportAnnotation(c, a, f, fmt.Sprintf("unknown media type %q", v), "use registry+v1")
			}
		})

	annotationsRule("annotations-directories", Error,
		"The manifests and metadata annotations name the bundle's directories (manifests/ and metadata/).",
		"The bundle image is built with the directories at /manifests/ and /metadata/; annotations pointing elsewhere make OLM look in the wrong place.",
		"Set them to manifests/ and metadata/.",
		func(c *Context, a *bundle.Annotations) {
			for _, kv := range [][2]string{{bundle.AnnotationManifests, bundle.ManifestsDir}, {bundle.AnnotationMetadata, bundle.MetadataDir}} {
				v, ok := a.Values[kv[0]]
				if !ok {
					continue
				}
				if strings.Trim(strings.TrimPrefix(v, "/"), "/") != kv[1] {
					f := annotationPath(kv[0])
					reportAnnotation(c, a, f, fmt.Sprintf("%s is %q but the bundle keeps them in %s/", kv[0], v, kv[1]), fmt.Sprintf("set it to %s/", kv[1]))
				}
			}
		})

	annotationsRule("annotations-package", Error,
		"The package annotation is a non-empty, valid package name (a DNS-1123 label); metadata-properties compares it with declared olm.package properties.",
		"The package name groups bundles in an index, and OLM names objects after it; upstream accepts an empty one and then builds a broken catalog.",
		"Set operators.operatorframework.io.bundle.package.v1 to the operator's package name.",
		func(c *Context, a *bundle.Annotations) {
			v, ok := a.Values[bundle.AnnotationPackage]
			if !ok {
				return
			}
			f := annotationPath(bundle.AnnotationPackage)
			if strings.TrimSpace(v) == "" {
				reportAnnotation(c, a, f, "package name is empty", "set it to the operator's package name")
				return
			}
			if msgs := dns1123Label(v); len(msgs) > 0 {
				reportAnnotation(c, a, f, fmt.Sprintf("package name %q is not a valid name: %s", v, strings.Join(msgs, "; ")), "use lower case letters, digits and '-'")
			}
		})

	annotationsRule("annotations-channels", Error,
		"The channels annotation lists at least one channel, each a valid name.",
		"A bundle is published in its channels; with none it is unreachable in an index.",
		"Set operators.operatorframework.io.bundle.channels.v1 to a comma-separated list, e.g. stable,alpha.",
		func(c *Context, a *bundle.Annotations) {
			v, ok := a.Values[bundle.AnnotationChannels]
			if !ok {
				return
			}
			f := annotationPath(bundle.AnnotationChannels)
			chs := bundle.SplitChannels(v)
			if len(chs) == 0 {
				reportAnnotation(c, a, f, "channel list is empty", "list at least one channel, e.g. stable")
				return
			}
			if len(chs) != len(strings.Split(v, ",")) {
				reportAnnotation(c, a, f, fmt.Sprintf("channel list %q has an empty entry", v), "remove the stray comma")
			}
			seen := map[string]bool{}
			for _, ch := range chs {
				if seen[ch] {
					reportAnnotation(c, a, f, fmt.Sprintf("channel %q is listed twice", ch), "list each channel once")
				}
				seen[ch] = true
			}
		})

	annotationsRule("annotations-default-channel", Error,
		"The default channel, when set, is one of the bundle's channels; with several channels and none set, a warning says which one index tools will pick.",
		"OLM subscribes to the package's default channel. When it names a channel the bundle is not in, an index built with this bundle as the head gets a default channel that may not exist (upstream never checks). The annotation is optional: without it, index tools pick a channel themselves, which may not be the one users should get.",
		"Set operators.operatorframework.io.bundle.channel.default.v1 to one of the listed channels.",
		func(c *Context, a *bundle.Annotations) {
			chs := a.Channels()
			def, has := a.Values[bundle.AnnotationDefaultChannel]
			f := annotationPath(bundle.AnnotationDefaultChannel)
			switch {
			case has && strings.TrimSpace(def) == "":
				reportAnnotation(c, a, f, "default channel is empty", "set it to one of: "+strings.Join(chs, ", "))
			case has && len(chs) > 0 && !contains(chs, strings.TrimSpace(def)):
				reportAnnotation(c, a, f, fmt.Sprintf("default channel %q is not one of the bundle's channels (%s)", def, strings.Join(chs, ", ")),
					fmt.Sprintf("set it to one of: %s, or add %q to the channels", strings.Join(chs, ", "), def))
			case !has && len(chs) > 1:
				// The annotation is optional: index tools fall back to a
				// channel of their own choosing. Say which one.
				c.ReportFileAs(Warning, a.File, a.Doc.LineOf("annotations"), f,
					fmt.Sprintf("no default channel annotation and %d channels (%s): opm index add makes the first listed, %q, the default of a new package (an existing package keeps its default); other tools may choose another", len(chs), strings.Join(chs, ", "), chs[0]),
					"add "+bundle.AnnotationDefaultChannel+": "+chs[0]+" (or whichever users should get) to choose it yourself")
			case !has && len(chs) == 1:
				c.ReportFileAs(Info, a.File, a.Doc.LineOf("annotations"), f, fmt.Sprintf("no default channel annotation; tools will use the only channel, %q", chs[0]), "add "+bundle.AnnotationDefaultChannel+": "+chs[0])
			}
		})
}

// reportAnnotation reports a finding at an annotations.yaml field.
func reportAnnotation(c *Context, a *bundle.Annotations, field, msg, hint string) {
	c.ReportFile(a.File, a.Doc.LineOf(field), field, msg, hint)
}

// annotationPath is the field path of an annotation key (which holds dots).
func annotationPath(key string) string { return `annotations["` + key + `"]` }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// mustLookup is bundle.Lookup without the found flag (absent reads as nil).
func mustLookup(v any, keys ...string) any {
	x, _ := bundle.Lookup(v, keys...)
	return x
}

// describeValue quotes a string value, and prints any other as YAML would.
func describeValue(v any, keys ...string) string {
	x := mustLookup(v, keys...)
	if s, ok := x.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(x)
}

// misCased explains missing top-level fields that are present with other
// letter case (ApiVersion:, Kind:): Kubernetes field names are
// case-sensitive, so the object has no apiVersion although the key is there.
func misCased(m map[string]any, missing []string) (msg, hint string) {
	var found, want []string
	for _, field := range missing {
		top, _, _ := strings.Cut(field, ".")
		for k := range m {
			if k != top && strings.EqualFold(k, top) {
				found = append(found, fmt.Sprintf("%q", k))
				want = append(want, top)
			}
		}
	}
	if len(found) == 0 {
		return "", ""
	}
	return fmt.Sprintf("mis-cased key %s: Kubernetes field names are case-sensitive, so %s is unset", strings.Join(found, ", "), strings.Join(want, ", ")),
		"write " + strings.Join(want, ", ") + " exactly"
}

// declaredPackage is an olm.package property a bundle declares itself.
type declaredPackage struct {
	name, file, field string
	line              int
}

// declaredPackages returns the package names of the olm.package properties in
// metadata/properties.yaml and in the CSV's olm.properties annotation.
func declaredPackages(c *Context) []declaredPackage {
	var out []declaredPackage
	if f := c.Bundle.PropertiesFile; f != nil && len(f.Docs) > 0 {
		for _, p := range c.Bundle.Properties {
			if name, ok := mustLookup(p.Value, "packageName").(string); p.Type == typePackage && ok {
				field := p.Field + ".value.packageName"
				out = append(out, declaredPackage{name: name, file: f.Name, field: field, line: f.Docs[0].LineOf(field)})
			}
		}
	}
	if c.CSV == nil {
		return out
	}
	if raw, ok := c.CSV.Metadata.Annotations[bundle.AnnotationProperties]; ok {
		var props []struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		}
		if json.Unmarshal([]byte(raw), &props) == nil {
			for _, p := range props {
				var v struct {
					PackageName string `json:"packageName"`
				}
				if p.Type == typePackage && json.Unmarshal(p.Value, &v) == nil {
					field := `metadata.annotations["olm.properties"]`
					out = append(out, declaredPackage{name: v.PackageName, file: c.CSV.Object.File, field: field, line: c.CSV.Object.Line(field)})
				}
			}
		}
	}
	return out
}
