package mirror

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/containers/image/v5/docker/reference"
	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/internal/atomicfile"
)

// ManifestOptions name what WriteManifests writes.
type ManifestOptions struct {
	// Name is the metadata.name of the mirror sets, the CatalogSource and
	// the ClusterCatalog (default: from the catalog's repository and tag).
	Name string
	// ICSP also writes an ImageContentSourcePolicy (OpenShift before 4.13).
	ICSP bool
	// Namespace of the CatalogSource (default openshift-marketplace).
	Namespace string
	// AllowIncomplete writes the CatalogSource and ClusterCatalog of a
	// mirror that lacks images the catalog needs, marked as incomplete.
	AllowIncomplete bool
}

// Catalog object states (Report.CatalogObjects).
const (
	CatalogWritten    = "written"
	CatalogIncomplete = "incomplete"
	CatalogWithheld   = "not written"
)

// WriteManifests writes, for the images of rep that arrived, what a
// cluster needs to pull them from the mirror: an ImageDigestMirrorSet (for
// images pulled by digest), an ImageTagMirrorSet (for images pulled by
// tag), optionally an ImageContentSourcePolicy, a CatalogSource and a
// ClusterCatalog for the mirrored catalog, and mapping.txt (source=target,
// a line per image). The catalog's objects and its mapping line are
// written only for a complete mirror (rep.Complete), or with
// AllowIncomplete, then headed by a comment naming what is missing: a
// cluster would otherwise serve bundles it cannot pull. It returns the
// files written and sets rep.CatalogObjects.
func WriteManifests(dir string, rep *Report, o ManifestOptions) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	byDigest, byTag := map[string]string{}, map[string]string{}
	var mapping []string
	var catalogs []*Result
	for i := range rep.Images {
		r := &rep.Images[i]
		if r.Error != "" || r.Target == "" {
			continue
		}
		if r.Role == RoleCatalog {
			catalogs = append(catalogs, r)
			continue
		}
		mapping = append(mapping, r.Source+"="+r.Target)
		src, err := reference.ParseNormalizedNamed(r.Source)
		if err != nil {
			return nil, err
		}
		mirrorRepo := r.Target[:strings.LastIndex(r.Target, "@")]
		if _, ok := src.(reference.Digested); ok {
			byDigest[src.Name()] = mirrorRepo
		} else {
			byTag[src.Name()] = mirrorRepo
		}
	}
	name := o.Name
	if name == "" {
		name = "opm-mirror"
		if len(catalogs) == 1 {
			name = objectName(catalogs[0].Source)
		}
	}
	var files []string
	rep.Files = nil
	header := ""
	write := func(file string, obj any) error {
		var raw []byte
		var err error
		if l, ok := obj.(mirrorList); ok {
			raw, err = l.yaml()
		} else {
			raw, err = yaml.Marshal(obj)
		}
		if err != nil {
			return err
		}
		raw = append([]byte(header), raw...)
		path := filepath.Join(dir, file)
		if err := atomicfile.WriteFile(path, raw); err != nil {
			return err
		}
		files = append(files, path)
		rep.Files = files
		return nil
	}
	if len(byDigest) > 0 {
		if err := write("imagedigestmirrorset.yaml", mirrorList{"config.openshift.io/v1", "ImageDigestMirrorSet", "imageDigestMirrors", name, byDigest}); err != nil {
			return files, err
		}
		if o.ICSP {
			if err := write("imagecontentsourcepolicy.yaml", mirrorList{"operator.openshift.io/v1alpha1", "ImageContentSourcePolicy", "repositoryDigestMirrors", name, byDigest}); err != nil {
				return files, err
			}
		}
	}
	if len(byTag) > 0 {
		if err := write("imagetagmirrorset.yaml", mirrorList{"config.openshift.io/v1", "ImageTagMirrorSet", "imageTagMirrors", name, byTag}); err != nil {
			return files, err
		}
	}
	rep.CatalogObjects = CatalogWithheld
	if !hasCatalog(rep) {
		// Only additional images (an ImageSetConfiguration without
		// catalogs): no catalog objects to write or to withhold.
		rep.CatalogObjects = ""
	}
	if len(catalogs) > 0 {
		rep.CatalogObjects = CatalogWritten
		if !rep.Complete {
			rep.CatalogObjects = CatalogWithheld
			if o.AllowIncomplete {
				rep.CatalogObjects = CatalogIncomplete
				header = incompleteComment(rep)
			} else {
				catalogs = nil
			}
		}
	}
	ns := o.Namespace
	if ns == "" {
		ns = "openshift-marketplace"
	}
	for _, catalog := range catalogs {
		mapping = append(mapping, catalog.Source+"="+catalog.Target)
		// Several catalogs (opm alpha mirror --config) get a name each.
		cname := name
		if len(catalogs) > 1 {
			cname = objectName(catalog.Source)
		}
		if err := write("catalogsource-"+cname+".yaml", catalogSource(cname, ns, catalog.Target)); err != nil {
			return files, err
		}
		if err := write("clustercatalog-"+cname+".yaml", clusterCatalog(cname, catalog.Target)); err != nil {
			return files, err
		}
	}
	sort.Strings(mapping)
	path := filepath.Join(dir, "mapping.txt")
	if err := atomicfile.WriteFile(path, lines(mapping)); err != nil {
		return files, err
	}
	files = append(files, path)
	rep.Files = files
	return files, nil
}

// lines joins ss a line each, in one buffer.
func lines(ss []string) []byte {
	n := 0
	for _, s := range ss {
		n += len(s) + 1
	}
	b := make([]byte, 0, max(n, 1))
	for _, s := range ss {
		b = append(append(b, s...), '\n')
	}
	if len(ss) == 0 {
		b = append(b, '\n')
	}
	return b
}

func hasCatalog(rep *Report) bool {
	for _, r := range rep.Images {
		if r.Role == RoleCatalog {
			return true
		}
	}
	return false
}

// incompleteComment heads the catalog objects of an incomplete mirror
// (--allow-incomplete) with what it lacks.
func incompleteComment(rep *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# INCOMPLETE MIRROR (--allow-incomplete): %d images the catalog needs did not arrive at %s;\n", len(rep.Missing), rep.To)
	b.WriteString("# bundles that need them cannot be installed from it. Missing:\n")
	for i, m := range rep.Missing {
		if i == 20 {
			fmt.Fprintf(&b, "#   and %d more (the run's report lists them all)\n", len(rep.Missing)-i)
			break
		}
		fmt.Fprintf(&b, "#   %s\n", strings.NewReplacer("\n", " ", "\r", " ").Replace(m))
	}
	if rep.Stopped != "" {
		fmt.Fprintf(&b, "# The run stopped early: %s.\n", rep.Stopped)
	}
	return b.String()
}

type object = map[string]any

// mirrorList is an ImageDigestMirrorSet, ImageTagMirrorSet or
// ImageContentSourcePolicy: a list of source=mirror pairs under spec.Field.
type mirrorList struct {
	APIVersion, Kind, Field, Name string
	Mirrors                       map[string]string
}

func (l mirrorList) object() object {
	var list []object
	for _, src := range sortedKeys(l.Mirrors) {
		list = append(list, object{"source": src, "mirrors": []string{l.Mirrors[src]}})
	}
	return object{
		"apiVersion": l.APIVersion,
		"kind":       l.Kind,
		"metadata":   object{"name": l.Name},
		"spec":       object{l.Field: list},
	}
}

// yaml writes the list as yaml.Marshal(l.object()) would, an entry at a
// time: the whole tree of thousands of entries, through JSON and back, was
// the largest heap of a mirror run (26 MB allocated for 2,000 images).
// Each scalar is still quoted by yaml.Marshal; one that is not a single
// line falls back to the whole tree.
func (l mirrorList) yaml() ([]byte, error) {
	head, err := yaml.Marshal(object{"apiVersion": l.APIVersion, "kind": l.Kind, "metadata": object{"name": l.Name}})
	if err != nil {
		return nil, err
	}
	field, ok := yamlScalar(l.Field)
	if !ok {
		return yaml.Marshal(l.object())
	}
	b := bytes.NewBuffer(make([]byte, 0, len(head)+len(l.Mirrors)*128))
	b.Write(head)
	b.WriteString("spec:\n  " + field + ":\n")
	for _, src := range sortedKeys(l.Mirrors) {
		m, ok1 := yamlScalar(l.Mirrors[src])
		s, ok2 := yamlScalar(src)
		if !ok1 || !ok2 {
			return yaml.Marshal(l.object())
		}
		b.WriteString("  - mirrors:\n    - " + m + "\n    source: " + s + "\n")
	}
	return b.Bytes(), nil
}

// yamlScalar is s as yaml.Marshal writes it, false when that takes more
// than one line. A reference (letters, digits, "._:@-" and a "/") is
// written plain, as yaml.Marshal would: a "/" keeps it from reading as a
// number, boolean, null or time. Anything else asks yaml.Marshal.
func yamlScalar(s string) (string, bool) {
	if plainReference(s) {
		return s, true
	}
	raw, err := yaml.Marshal(s)
	if err != nil {
		return "", false
	}
	out := strings.TrimSuffix(string(raw), "\n")
	return out, !strings.Contains(out, "\n")
}

func plainReference(s string) bool {
	if s == "" || !strings.Contains(s, "/") || strings.HasSuffix(s, ":") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case i > 0 && strings.IndexByte("._:@/-", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func catalogSource(name, ns, img string) object {
	return object{
		"apiVersion": "operators.coreos.com/v1alpha1",
		"kind":       "CatalogSource",
		"metadata":   object{"name": name, "namespace": ns},
		"spec": object{
			"sourceType":  "grpc",
			"image":       img,
			"displayName": name,
			"publisher":   "opm alpha mirror",
		},
	}
}

func clusterCatalog(name, img string) object {
	return object{
		"apiVersion": "olm.operatorframework.io/v1",
		"kind":       "ClusterCatalog",
		"metadata":   object{"name": name},
		"spec": object{
			"source": object{"type": "Image", "image": object{"ref": img}},
		},
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var notNameChars = regexp.MustCompile(`[^a-z0-9-]+`)

// objectName makes a Kubernetes object name (a DNS-1123 label, as a
// CatalogSource's name must be) of the catalog's repository and tag:
// quay.io/org/operator-index:v4.17 becomes operator-index-v4-17.
func objectName(source string) string {
	s := source
	if i := strings.Index(s, "@"); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndex(s, "/"); i >= 0 {
		s = s[i+1:]
	}
	s = notNameChars.ReplaceAllString(strings.ToLower(s), "-")
	s = strings.Trim(s, "-")
	if len(s) > 63 {
		s = strings.TrimRight(s[:63], "-")
	}
	if s == "" {
		return "opm-mirror"
	}
	return s
}
