package fbc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/containers/image/v5/docker/reference"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/validate"
)

// modelChecks are the checks upstream opm makes while it builds its catalog
// model from the blobs (opm validate and opm serve refuse a catalog that
// fails one): package names, unique versions, pull specs, release naming,
// stranded channel entries, deprecations and substitutesFor cycles.
func (v *checker) modelChecks(c *Catalog) {
	for _, p := range c.Packages {
		if p.Name == "" {
			continue
		}
		if errs := validation.IsDNS1123Label(p.Name); len(errs) > 0 {
			v.report(validate.RuleCatalogPackageName, p.Pos, "name", "",
				"package name %q is not an RFC 1123 label: %s", p.Name, strings.Join(errs, "; "))
		}
	}
	v.bundleModel(c)
	v.stranded(c)
	v.deprecations(c)
	v.substitutes(c)
}

// packageProp finds a bundle's one olm.package property; ok is false when
// there is not exactly one that parses (catalog-property reports that).
func packageProp(b *Bundle) (idx int, pv PackageValue, ok bool) {
	idx = -1
	for i, p := range b.Properties {
		if p.Type != PropertyPackage {
			continue
		}
		if idx >= 0 {
			return -1, PackageValue{}, false
		}
		if json.Unmarshal(p.Value, &pv) != nil {
			return -1, PackageValue{}, false
		}
		idx = i
	}
	return idx, pv, idx >= 0
}

func hasBundleObjects(b *Bundle) bool {
	for _, p := range b.Properties {
		if p.Type == PropertyBundleObject {
			return true
		}
	}
	return false
}

// pullSpecError says why s is not an image pull spec, or "". Answers are
// kept for the run: a catalog names most images several times (a bundle's
// own image is among its related images; operands recur across bundles).
func (v *checker) pullSpecError(s string) string {
	if msg, ok := v.pullSpecs[s]; ok {
		return msg
	}
	msg := ""
	if _, err := reference.ParseNormalizedNamed(s); err != nil {
		msg = err.Error()
	}
	if v.pullSpecs == nil {
		v.pullSpecs = map[string]string{}
	}
	v.pullSpecs[s] = msg
	return msg
}

func (v *checker) bundleModel(c *Catalog) {
	inChannel := map[[2]string]bool{}
	for _, ch := range c.Channels {
		for _, e := range ch.Entries {
			inChannel[[2]string{ch.Package, e.Name}] = true
		}
	}
	type seenVersion struct {
		name string
		pos  Position
	}
	versions := map[[2]string]seenVersion{}
	done := map[[2]string]bool{}
	for i := range c.Bundles {
		b := &c.Bundles[i]
		switch {
		case b.Image == "" && !hasBundleObjects(b):
			v.report(validate.RuleCatalogBundleImage, b.Pos, "image", "set image to the bundle's pull spec",
				"bundle %s has no image (and no olm.bundle.object manifests)", b.Name)
		case isLocalPath(b.Image):
			// opm adds bundle directories to databases (an extension of
			// upstream's, for local work): such a catalog serves and
			// renders, but no cluster can pull the bundle.
			v.reportAs(validate.RuleCatalogBundleImage, validate.Warning, b.Pos, "image",
				"build and push the bundle (opm bundle build -d DIR -t REF) and add the image instead of the directory before publishing the catalog",
				"bundle %s: image %q is a local directory (the bundle was added from one); OLM cannot pull it", b.Name, b.Image)
		case b.Image != "":
			if msg := v.pullSpecError(b.Image); msg != "" {
				v.report(validate.RuleCatalogBundleImage, b.Pos, "image", "", "bundle %s: image %q is not a valid pull spec: %s", b.Name, b.Image, msg)
			}
		}
		for j, ri := range b.RelatedImages {
			if ri.Image == "" {
				continue
			}
			if msg := v.pullSpecError(ri.Image); msg != "" {
				v.report(validate.RuleCatalogBundleImage, b.Pos, fmt.Sprintf("relatedImages[%d].image", j), "",
					"bundle %s: related image %q is not a valid pull spec: %s", b.Name, ri.Image, msg)
			}
		}

		idx, pv, ok := packageProp(b)
		if !ok {
			continue
		}
		field := fmt.Sprintf("properties[%d].value", idx)
		ver, err := semver.Parse(pv.Version)
		if err != nil {
			continue // catalog-property
		}
		key := ver.String()
		if pv.Release != "" {
			rel, err := index.ParseRelease(pv.Release)
			if err != nil {
				v.report(validate.RuleCatalogRelease, b.Pos, field+".release", "", "bundle %s: release %q: %v", b.Name, pv.Release, err)
				continue
			}
			if len(ver.Build) > 0 {
				v.report(validate.RuleCatalogRelease, b.Pos, field+".version", "drop the build metadata (+...) from the version",
					"bundle %s: version %s carries build metadata while release %q is set", b.Name, pv.Version, pv.Release)
			}
			key += "-" + rel.String()
			if want := b.Package + "-v" + key; b.Name != want {
				v.report(validate.RuleCatalogRelease, b.Pos, "name", fmt.Sprintf("rename the bundle %s (and its channel entries)", want),
					"bundle %s has release %q, so its name must be %s", b.Name, pv.Release, want)
			}
		}
		// Upstream counts the bundles its channels list, each once.
		nk := [2]string{b.Package, b.Name}
		if !inChannel[nk] || done[nk] {
			continue
		}
		done[nk] = true
		vk := [2]string{b.Package, key}
		if first, dup := versions[vk]; dup {
			v.report(validate.RuleCatalogVersionUnique, b.Pos, field+".version", "",
				"bundle %s has version %s, as bundle %s (%s:%d) of package %s does", b.Name, key, first.name, first.pos.File, first.pos.Line, b.Package)
			continue
		}
		versions[vk] = seenVersion{b.Name, b.Pos}
	}
}

// stranded reports the entries of a one-headed channel that are neither on
// the replaces chain from its head nor skipped, as upstream does: the chain
// stops at the first bundle it reaches that some entry skips.
func (v *checker) stranded(c *Catalog) {
	for _, ch := range c.Channels {
		byName := map[string]*ChannelEntry{}
		replaced := map[string]bool{}
		skipped := map[string]bool{}
		for i := range ch.Entries {
			e := &ch.Entries[i]
			if _, dup := byName[e.Name]; !dup {
				byName[e.Name] = e
			}
			if e.Replaces != "" {
				replaced[e.Replaces] = true
			}
			for _, s := range e.Skips {
				replaced[s] = true
				skipped[s] = true
			}
		}
		var head *ChannelEntry
		heads := 0
		for name, e := range byName {
			if !replaced[name] {
				head = e
				heads++
			}
		}
		if heads != 1 {
			continue // catalog-channel-head
		}
		chain := map[string]bool{head.Name: true}
		for cur := head; cur != nil; {
			if skipped[cur.Replaces] || chain[cur.Replaces] {
				break // a cycle is catalog-channel-cycle's
			}
			chain[cur.Replaces] = true
			cur = byName[cur.Replaces]
		}
		var lost []string
		for name := range byName {
			if !chain[name] && !skipped[name] {
				lost = append(lost, name)
			}
		}
		if len(lost) > 0 {
			sort.Strings(lost)
			v.report(validate.RuleCatalogChannelStranded, ch.Pos, "entries", "",
				"channel %s of package %s strands %s: not on the replaces chain from the head %s, and skipped by no entry", ch.Name, ch.Package, strings.Join(lost, ", "), head.Name)
		}
	}
}

// deprecationBlob is the olm.deprecations schema.
type deprecationBlob struct {
	Package string `json:"package"`
	Entries []struct {
		Reference struct {
			Schema string `json:"schema"`
			Name   string `json:"name"`
		} `json:"reference"`
		Message string `json:"message"`
	} `json:"entries"`
}

func (v *checker) deprecations(c *Catalog) {
	packages := map[string]bool{}
	for _, p := range c.Packages {
		packages[p.Name] = true
	}
	channels := map[[2]string]bool{}
	for _, ch := range c.Channels {
		channels[[2]string{ch.Package, ch.Name}] = true
	}
	bundles := map[[2]string]bool{}
	for _, b := range c.Bundles {
		bundles[[2]string{b.Package, b.Name}] = true
	}
	first := map[string]Position{}
	for _, o := range c.Others {
		if o.Schema != SchemaDeprecations {
			continue
		}
		var d deprecationBlob
		if err := json.Unmarshal(o.Blob, &d); err != nil {
			v.report(validate.RuleCatalogDeprecationReference, o.Pos, "", `write {"schema": "olm.deprecations", "package": "...", "entries": [{"reference": {"schema": "olm.bundle", "name": "..."}, "message": "..."}]}`,
				"olm.deprecations blob does not parse: %v", err)
			continue
		}
		switch {
		case d.Package == "":
			v.report(validate.RuleCatalogDeprecationUnique, o.Pos, "package", "set package to the package the deprecations apply to", "an olm.deprecations blob names no package")
			continue
		case !packages[d.Package]:
			v.report(validate.RuleCatalogDeprecationUnique, o.Pos, "package", "", "olm.deprecations names package %q, which has no olm.package blob", d.Package)
			continue
		}
		if p, dup := first[d.Package]; dup {
			v.report(validate.RuleCatalogDeprecationUnique, o.Pos, "package", "",
				"package %s has a second olm.deprecations blob (first at %s:%d); a package has at most one", d.Package, p.File, p.Line)
			continue
		}
		first[d.Package] = o.Pos
		seen := map[[2]string]int{}
		for i, e := range d.Entries {
			field := fmt.Sprintf("entries[%d]", i)
			ref := e.Reference
			if e.Message == "" {
				v.report(validate.RuleCatalogDeprecationMessage, o.Pos, field+".message", "", "package %s: deprecation entry %d (%s %s) has no message", d.Package, i, ref.Schema, ref.Name)
			}
			if ref.Schema == "" {
				v.report(validate.RuleCatalogDeprecationReference, o.Pos, field+".reference.schema", "", "package %s: deprecation entry %d has no reference schema", d.Package, i)
				continue
			}
			k := [2]string{ref.Schema, ref.Name}
			if j, dup := seen[k]; dup {
				v.report(validate.RuleCatalogDeprecationUnique, o.Pos, field+".reference", "", "package %s: deprecation entry %d repeats the reference of entry %d", d.Package, i, j)
				continue
			}
			seen[k] = i
			switch ref.Schema {
			case SchemaPackage:
				if ref.Name != "" {
					v.report(validate.RuleCatalogDeprecationReference, o.Pos, field+".reference.name", "drop reference.name: an olm.package reference means the blob's own package",
						"package %s: deprecation entry %d references olm.package with name %q", d.Package, i, ref.Name)
				}
			case SchemaChannel:
				if !channels[[2]string{d.Package, ref.Name}] {
					v.report(validate.RuleCatalogDeprecationReference, o.Pos, field+".reference.name", "",
						"package %s: deprecation entry %d references channel %q, which the package does not have", d.Package, i, ref.Name)
				}
			case SchemaBundle:
				if !bundles[[2]string{d.Package, ref.Name}] {
					v.report(validate.RuleCatalogDeprecationReference, o.Pos, field+".reference.name", "",
						"package %s: deprecation entry %d references bundle %q, which the package does not have", d.Package, i, ref.Name)
				}
			default:
				v.report(validate.RuleCatalogDeprecationReference, o.Pos, field+".reference.schema", "",
					"package %s: deprecation entry %d references schema %q; use olm.package, olm.channel or olm.bundle", d.Package, i, ref.Schema)
			}
		}
	}
}

const substitutesForKey = "olm.substitutesFor"

// substitute is one bundle's olm.substitutesFor annotation.
type substitute struct {
	to  string
	pos Position
}

// Where noteSubstitutes reads an annotation from.
const (
	fromCSV         = iota // the bundle's CSV field
	fromObject             // a decoded olm.bundle.object: used if it is a CSV
	fromCSVMetadata        // an olm.csv.metadata value
)

// noteSubstitutes records the olm.substitutesFor annotation of a bundle's
// CSV, given its data and where the data is from.
// Only data that holds the key is parsed: catalogs carry every CRD of every
// bundle, and parsing them all again would dominate validation.
func (v *checker) noteSubstitutes(b *Bundle, data []byte, from int) {
	if !bytes.Contains(data, []byte(substitutesForKey)) {
		return
	}
	var doc struct {
		Kind        string            `json:"kind"`
		Annotations map[string]string `json:"annotations"` // olm.csv.metadata
		Metadata    struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return
	}
	to := doc.Metadata.Annotations[substitutesForKey]
	switch {
	case from == fromCSVMetadata:
		to = doc.Annotations[substitutesForKey]
	case from == fromObject && doc.Kind != "ClusterServiceVersion":
		return
	}
	if to == "" {
		return
	}
	if v.subs == nil {
		v.subs = map[[2]string]substitute{}
	}
	k := [2]string{b.Package, b.Name}
	if _, seen := v.subs[k]; !seen {
		v.subs[k] = substitute{to, b.Pos}
	}
}

// substitutes reports cycles of olm.substitutesFor within a package. A
// rendered bundle's CSV field, when set, is read here; manifests were noted
// by the property checks.
func (v *checker) substitutes(c *Catalog) {
	for i := range c.Bundles {
		b := &c.Bundles[i]
		if len(b.CSV) > 0 {
			v.noteSubstitutes(b, b.CSV, fromCSV)
		}
	}
	byPkg := map[string]map[string]substitute{}
	for k, s := range v.subs {
		if byPkg[k[0]] == nil {
			byPkg[k[0]] = map[string]substitute{}
		}
		byPkg[k[0]][k[1]] = s
	}
	pkgs := make([]string, 0, len(byPkg))
	for p := range byPkg {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		g := byPkg[pkg]
		names := make([]string, 0, len(g))
		for n := range g {
			names = append(names, n)
		}
		sort.Strings(names)
		// Each bundle names at most one other: walk each chain once, and a
		// walk that meets a bundle of its own path has found a cycle.
		done := map[string]bool{}
		for _, start := range names {
			order := map[string]int{}
			var path []string
			for cur := start; ; {
				if i, back := order[cur]; back {
					cyc := path[i:]
					first := minName(cyc)
					v.report(validate.RuleCatalogSubstitutesCycle, g[first].pos, "properties", "",
						"package %s: olm.substitutesFor annotations form a cycle: %s", pkg, strings.Join(append(rotate(cyc), first), " → "))
					break
				}
				n, ok := g[cur]
				if !ok || done[cur] {
					break
				}
				order[cur] = len(path)
				path = append(path, cur)
				cur = n.to
			}
			for _, p := range path {
				done[p] = true
			}
		}
	}
}

func minName(s []string) string {
	m := s[0]
	for _, x := range s[1:] {
		if x < m {
			m = x
		}
	}
	return m
}

// rotate starts the cycle at its smallest name, so that it reads the same
// whichever bundle the walk began from.
func rotate(s []string) []string {
	m := minName(s)
	for i, x := range s {
		if x == m {
			return append(append([]string{}, s[i:]...), s[:i]...)
		}
	}
	return s
}

// isLocalPath reports whether a bundle's image is a file path (absolute or
// explicitly relative), which is what opm records for a bundle added from a
// directory; no pull spec starts so.
func isLocalPath(image string) bool {
	return strings.HasPrefix(image, "/") || strings.HasPrefix(image, "./") || strings.HasPrefix(image, "../")
}
