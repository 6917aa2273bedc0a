package index

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/opmkit/opm/internal/bundle"
)

// LoadedBundle is a bundle to add and where it came from.
type LoadedBundle struct {
	Bundle *bundle.Bundle
	// BundlePath is stored in operatorbundle.bundlepath: the image reference
	// the user gave, or the directory for a bundle loaded from disk.
	BundlePath string
	// Local says BundlePath is a directory, not an image: it is then not
	// listed in related_image (mirroring tools would try to pull it).
	Local bool

	// prepared and prepErr are what Prepare computed; Bundle is then nil.
	prepared *rows
	prepErr  *Error
}

// Prepare turns lb into what Add writes (the CSV and objects as JSON text,
// names, versions, APIs) and drops the parsed bundle, whose documents take
// many times that memory: a call adding thousands of bundles holds their
// rows, not their parse trees, and with a spool not their text either (it is
// read back when the bundle is written; keep the spool open until then). Add
// reports a bundle that cannot go into an index the same way, prepared or
// not.
func Prepare(lb LoadedBundle, spool *Spool) LoadedBundle {
	if lb.prepared != nil || lb.prepErr != nil {
		return lb
	}
	r, e := bundleRows(lb)
	if r != nil {
		r.pack(spool)
	}
	return LoadedBundle{BundlePath: lb.BundlePath, Local: lb.Local, prepared: r, prepErr: e}
}

// apiKey is one API (CRD version or aggregated API).
type apiKey struct {
	Group, Version, Kind, Plural string
}

type typedValue struct {
	Type  string
	Value []byte // JSON
}

// rows is everything one bundle writes to the database: what Add needs to
// group, order and check the bundles of a call, and the rest (body).
type rows struct {
	Name       string
	Package    string
	Version    Version
	VersionStr string
	Path       string
	// Local says Path is a directory (see LoadedBundle.Local).
	Local bool
	body
	// packed says CSV and Objects are zstd-compressed (see pack); with
	// spool set, body is in the spool at spoolAt, and in the struct only
	// while restored.
	packed   bool
	spool    *Spool
	spoolAt  spooled
	restored bool
}

// body is what a spooled bundle keeps out of memory until its package is
// written (exported fields: it is gob-encoded into the spool).
type body struct {
	Channels   []string
	Default    string
	Replaces   string
	Skips      []string
	SkipRange  string
	CSV        []byte
	Objects    []byte
	Provided   []apiKey
	Required   []apiKey
	Images     []string
	Properties []typedValue
	Deps       []typedValue
}

func (r *rows) VersionName() string    { return r.Name }
func (r *rows) BundleVersion() Version { return r.Version }

// bundleRows turns a loaded bundle into the rows it writes, or says why it
// cannot go into an index.
func bundleRows(lb LoadedBundle) (*rows, *Error) {
	if lb.prepared != nil || lb.prepErr != nil {
		return lb.prepared, lb.prepErr
	}
	b := lb.Bundle
	fail := func(kind ErrorKind, pkg, name, msg, fix string) (*rows, *Error) {
		bl := name
		if bl == "" {
			bl = lb.BundlePath
		}
		return nil, &Error{Kind: kind, Package: pkg, Bundle: bl, Msg: msg, Fix: fix, Blame: []string{blameKey(name, lb.BundlePath)}}
	}
	if b == nil || b.CSV == nil || b.CSV.Object == nil {
		return fail(KindInvalidBundle, "", "", "no ClusterServiceVersion in the bundle", "a bundle keeps exactly one CSV in manifests/")
	}
	csv := b.CSV
	name := csv.Metadata.Name
	if msg := wrongType(csv, "metadata.name"); msg != "" {
		return fail(KindInvalidBundle, "", "", msg, "quote it: metadata.name must be a string such as <operator>.v<version>")
	}
	if name == "" {
		return fail(KindInvalidBundle, "", "", "the CSV has no metadata.name", "set metadata.name, e.g. <operator>.v<version>")
	}
	if b.Annotations == nil {
		return fail(KindInvalidBundle, "", name, "no metadata/annotations.yaml, so the package and channels are unknown", "add metadata/annotations.yaml (opm bundle generate writes it)")
	}
	pkg := b.Annotations.Package()
	if pkg == "" {
		return fail(KindInvalidBundle, "", name, "annotation "+bundle.AnnotationPackage+" is missing or empty", "set it to the package name")
	}
	if mt := b.Annotations.Values[bundle.AnnotationMediaType]; mt != "" && mt != bundle.MediaTypeRegistryV1 {
		return fail(KindInvalidBundle, pkg, name, fmt.Sprintf("media type %q: only %s bundles go into an index database", mt, bundle.MediaTypeRegistryV1), "set "+bundle.AnnotationMediaType+": "+bundle.MediaTypeRegistryV1)
	}
	channels := b.Annotations.Channels()
	if len(channels) == 0 {
		return fail(KindInvalidBundle, pkg, name, "annotation "+bundle.AnnotationChannels+" lists no channel", "list at least one channel, e.g. stable")
	}
	channels = dedupe(channels)
	if s := csv.Metadata.Annotations[bundle.AnnotationSubstitutesFor]; s != "" {
		return fail(KindUnsupported, pkg, name, fmt.Sprintf("the CSV sets %s (%s); opm does not support substitutesFor yet", bundle.AnnotationSubstitutesFor, s), "drop the annotation, or add this bundle with upstream opm v1.73.0 --enable-alpha")
	}
	// A field of the wrong type decodes as empty: say what it is before
	// anything reports it as missing.
	for _, f := range []string{"spec.version", "spec.release", "spec.replaces", "spec.skips"} {
		if msg := wrongType(csv, f); msg != "" {
			return fail(KindInvalidBundle, pkg, name, msg, "correct the field's type")
		}
	}
	v, err := ParseVersion(csv.Spec.Version, csv.Spec.Release)
	if err != nil {
		return fail(KindBadVersion, pkg, name, err.Error(), "give spec.version as MAJOR.MINOR.PATCH[-PRERELEASE]")
	}

	r := &rows{
		Name: name, Package: pkg, Version: v, VersionStr: csv.Spec.Version, Path: lb.BundlePath, Local: lb.Local,
		body: body{Channels: channels, Default: b.Annotations.DefaultChannel(), Replaces: csv.Spec.Replaces,
			SkipRange: csv.Metadata.Annotations[bundle.AnnotationSkipRange]},
	}
	for _, s := range csv.Spec.Skips {
		if s = strings.TrimSpace(s); s != "" {
			r.Skips = append(r.Skips, s)
		}
	}

	// Like upstream (a json.Encoder): compact JSON, sorted keys, a newline.
	if r.CSV, err = json.Marshal(csv.Object.Doc.Value); err != nil {
		return fail(KindInvalidBundle, pkg, name, "encode the CSV as JSON: "+err.Error(), "")
	}
	r.CSV = append(r.CSV, '\n')
	var objs bytes.Buffer
	for _, o := range b.Objects {
		if o.Map() == nil {
			continue
		}
		j, err := json.Marshal(o.Doc.Value)
		if err != nil {
			return fail(KindInvalidBundle, pkg, name, fmt.Sprintf("encode %s as JSON: %v", o.File, err), "")
		}
		objs.Write(j)
		objs.WriteByte('\n')
	}
	r.Objects = objs.Bytes()

	// Provided APIs: every version of every CRD in the bundle, and the owned
	// aggregated APIs (as upstream).
	provided := map[apiKey]bool{}
	for _, c := range b.CRDs {
		for _, ver := range c.Versions {
			provided[apiKey{c.Group, ver.Name, c.Kind, c.Plural}] = true
		}
	}
	for _, a := range csv.Spec.APIServiceDefinitions.Owned {
		provided[apiKey{a.Group, a.Version, a.Kind, a.Name}] = true
	}
	for _, o := range csv.Spec.CustomResourceDefinitions.Owned {
		plural, group, ok := strings.Cut(o.Name, ".")
		if !ok || plural == "" || group == "" {
			return fail(KindInvalidBundle, pkg, name, fmt.Sprintf("owned CRD name %q is not <plural>.<group>", o.Name), "name owned CRDs <plural>.<group> as in the CRD's metadata.name")
		}
		if !provided[apiKey{group, o.Version, o.Kind, plural}] {
			return fail(KindInvalidBundle, pkg, name, fmt.Sprintf("the CSV owns CRD %s (version %s, kind %s) but no CRD in manifests/ defines that group, version, kind and plural", o.Name, o.Version, o.Kind),
				"add the CRD to manifests/, or correct spec.customresourcedefinitions.owned")
		}
	}
	required := map[apiKey]bool{}
	for _, q := range csv.Spec.CustomResourceDefinitions.Required {
		plural, group, ok := strings.Cut(q.Name, ".")
		if !ok || plural == "" || group == "" {
			return fail(KindInvalidBundle, pkg, name, fmt.Sprintf("required CRD name %q is not <plural>.<group>", q.Name), "name required CRDs <plural>.<group>")
		}
		required[apiKey{group, q.Version, q.Kind, plural}] = true
	}
	for _, a := range csv.Spec.APIServiceDefinitions.Required {
		required[apiKey{a.Group, a.Version, a.Kind, a.Name}] = true
	}
	r.Provided = sortedAPIs(provided)
	r.Required = sortedAPIs(required)

	// Images: related images, the deployments' containers, the bundle image.
	images := map[string]bool{}
	for _, ri := range csv.Spec.RelatedImages {
		if ri.Image != "" {
			images[ri.Image] = true
		}
	}
	for _, d := range csv.Spec.Install.Spec.Deployments {
		for _, c := range d.Spec.Template.Spec.Containers {
			if c.Image != "" {
				images[c.Image] = true
			}
		}
		for _, c := range d.Spec.Template.Spec.InitContainers {
			if c.Image != "" {
				images[c.Image] = true
			}
		}
	}
	if lb.BundlePath != "" && !lb.Local {
		images[lb.BundlePath] = true
	}
	r.Images = sortedKeys(images)

	// Properties: olm.package, one olm.gvk per provided API, then the
	// bundle's own (metadata files, the CSV's olm.properties) — each once.
	var props propSet
	props.add("olm.package", map[string]any{"packageName": pkg, "version": csv.Spec.Version})
	for _, a := range r.Provided {
		props.add("olm.gvk", map[string]any{"group": a.Group, "kind": a.Kind, "version": a.Version})
	}
	extra, deps, perr := metadataProperties(b)
	if perr != nil {
		return fail(KindInvalidBundle, pkg, name, perr.Error(), "fix the metadata file")
	}
	for _, p := range extra {
		props.add(p.Type, p.Value)
	}
	if s := csv.Metadata.Annotations[bundle.AnnotationProperties]; s != "" {
		var list []struct {
			Type  string `json:"type"`
			Value any    `json:"value"`
		}
		if err := json.Unmarshal([]byte(s), &list); err != nil {
			return fail(KindInvalidBundle, pkg, name, fmt.Sprintf("CSV annotation %s is not a JSON list of {type, value}: %v", bundle.AnnotationProperties, err), "correct the annotation")
		}
		for _, p := range list {
			props.add(p.Type, p.Value)
		}
	}
	if props.err != nil {
		return fail(KindInvalidBundle, pkg, name, props.err.Error(), "")
	}
	r.Properties = props.list

	// Dependencies: metadata dependencies, then one olm.gvk per required API.
	var ds propSet
	for _, d := range deps {
		ds.add(d.Type, d.Value)
	}
	for _, a := range r.Required {
		ds.add("olm.gvk", map[string]any{"group": a.Group, "kind": a.Kind, "version": a.Version})
	}
	if ds.err != nil {
		return fail(KindInvalidBundle, pkg, name, ds.err.Error(), "")
	}
	r.Deps = ds.list
	return r, nil
}

// blameKey is how a bundle is named in Blame: its CSV name, or its path when
// the name is unknown.
func blameKey(name, path string) string {
	if name != "" {
		return name
	}
	return "path:" + path
}

type propSet struct {
	seen map[string]bool
	list []typedValue
	err  error
}

func (s *propSet) add(typ string, value any) {
	if typ == "" || s.err != nil {
		return
	}
	j, err := json.Marshal(value)
	if err != nil {
		s.err = fmt.Errorf("property %s: encode value: %w", typ, err)
		return
	}
	k := typ + "\x00" + string(j)
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if s.seen[k] {
		return
	}
	s.seen[k] = true
	s.list = append(s.list, typedValue{Type: typ, Value: j})
}

// metadataProperties gathers the properties and dependencies of a bundle's
// metadata files. Like upstream, the list under a "properties" or
// "dependencies" key is read from whichever metadata file holds it (real
// bundles keep dependencies in a file named properties.yaml).
func metadataProperties(b *bundle.Bundle) (props, deps []bundle.Property, err error) {
	for _, f := range b.Files {
		if !strings.HasPrefix(f.Name, bundle.MetadataDir+"/") {
			continue
		}
		for _, d := range f.Docs {
			for _, key := range []string{"properties", "dependencies"} {
				list, ok := bundle.Lookup(d.Value, key)
				if !ok || list == nil {
					continue
				}
				items, ok := list.([]any)
				if !ok {
					return nil, nil, fmt.Errorf("%s: %s must be a list of {type, value}", f.Name, key)
				}
				for i, it := range items {
					typ := bundle.Str(it, "type")
					if typ == "" {
						return nil, nil, fmt.Errorf("%s: %s[%d] has no type", f.Name, key, i)
					}
					v, _ := bundle.Lookup(it, "value")
					p := bundle.Property{Type: typ, Value: v, Field: fmt.Sprintf("%s[%d]", key, i)}
					if key == "properties" {
						props = append(props, p)
					} else {
						deps = append(deps, p)
					}
				}
			}
		}
	}
	return props, deps, nil
}

func sortedAPIs(m map[apiKey]bool) []apiKey {
	out := make([]apiKey, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Plural < b.Plural
	})
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// wrongType says how the CSV's field has the wrong type ("metadata.name is a
// number (123), not a string"), or "" when it has the right one.
func wrongType(csv *bundle.CSV, field string) string {
	for _, te := range csv.TypeErrors {
		if te.Field != field {
			continue
		}
		v, _ := bundle.Lookup(csv.Object.Map(), strings.Split(field, ".")...)
		switch v.(type) {
		case map[string]any, []any, nil:
			return fmt.Sprintf("%s is a %s, not a %s", field, te.Got, te.Want)
		}
		return fmt.Sprintf("%s is a %s (%v), not a %s", field, te.Got, v, te.Want)
	}
	return ""
}
