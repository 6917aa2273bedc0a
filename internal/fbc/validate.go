package fbc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/printable"
	"github.com/opmkit/opm/internal/validate"
)

// Validate checks a catalog against the catalog-* rules of internal/validate
// and returns the findings, sorted by file and line. Load problems are not
// included: turn them into findings with LoadFindings.
func Validate(c *Catalog) []validate.Finding {
	return validateKeeping(c, nil)
}

// validateKeeping is Validate that keeps the olm.bundle.object values it
// decodes in objs (when not nil), for the conversion that follows.
func validateKeeping(c *Catalog, objs decodedObjects) []validate.Finding {
	v := &checker{objects: objs}
	v.packages(c)
	v.channels(c)
	v.bundles(c)
	v.modelChecks(c)
	v.out = append(v.out, acrossPackages(bundleKeys(c))...)
	sortFindings(v.out)
	return v.out
}

// bundleKey is what an index database keys a bundle by, with where it is.
type bundleKey struct {
	name, version, image, pkg string
	pos                       Position
}

func bundleKeys(c *Catalog) []bundleKey {
	keys := make([]bundleKey, 0, len(c.Bundles))
	for _, b := range c.Bundles {
		k := bundleKey{name: b.Name, image: b.Image, pkg: b.Package, pos: b.Pos}
		for _, p := range b.Properties {
			var pv PackageValue
			if p.Type == PropertyPackage && json.Unmarshal(p.Value, &pv) == nil {
				k.version = pv.Version
				break
			}
		}
		keys = append(keys, k)
	}
	return keys
}

// acrossPackages finds bundles of one name, version and image in two
// packages, which validate per package cannot see and an index database
// refuses.
func acrossPackages(keys []bundleKey) []validate.Finding {
	v := &checker{}
	first := map[[3]string]bundleKey{}
	for _, k := range keys {
		id := [3]string{k.name, k.version, k.image}
		if f, ok := first[id]; ok && f.pkg != k.pkg {
			v.report(validate.RuleCatalogBundlePackages, k.pos, "name", "", "bundle %s (version %s, image %s) of package %s is also in package %s (%s:%d)", k.name, k.version, k.image, k.pkg, f.pkg, f.pos.File, f.pos.Line)
			continue
		} else if !ok {
			first[id] = k
		}
	}
	return v.out
}

// sortFindings orders findings by file, line and rule, root causes
// (syntax errors) first, keeping the order of equal ones.
func sortFindings(fs []validate.Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if ra, rb := validate.IsRootCause(a.Rule), validate.IsRootCause(b.Rule); ra != rb {
			return ra
		}
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Rule < b.Rule
	})
}

// ValidateDir is LoadDir then LoadFindings, Validate and, with olmv1,
// ValidateOLMv1, a package at a time: the same findings in the same order,
// with memory for a few packages rather than the catalog. The error is one
// that stopped the check (the directory cannot be read, ctx ended), not a
// finding. extra checks run on each package's catalog too (ValidatePublishing,
// bound to its options); their findings follow, by file and line.
func ValidateDir(ctx context.Context, dir string, olmv1 bool, load LoadOptions, extra ...func(*Catalog) []validate.Finding) ([]validate.Finding, error) {
	s, err := ScanDir(dir, load)
	if err != nil {
		return nil, err
	}
	defer func() { _ = s.Close() }() // only a temporary file to release
	if s.Cut() {
		// Past --max-blobs: the rest would be findings about part of
		// the catalog (a bundle whose channel was not read).
		return LoadFindings(s.Err()), nil
	}
	var found, foundV1 []validate.Finding
	var keys []bundleKey
	type both struct {
		model, v1 []validate.Finding
		keys      []bundleKey
	}
	err = eachPrepared(ctx, s, func(_ string, c *Catalog) both {
		out := both{model: Validate(c), keys: bundleKeys(c)}
		if olmv1 {
			out.v1 = ValidateOLMv1(c)
		}
		for _, check := range extra {
			out.v1 = append(out.v1, check(c)...)
		}
		return out
	}, func(_ string, fs both) error {
		found = append(found, fs.model...)
		foundV1 = append(foundV1, fs.v1...)
		keys = append(keys, fs.keys...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	found = append(found, acrossPackages(keys)...)
	sortFindings(found)
	sort.SliceStable(foundV1, func(i, j int) bool {
		a, b := foundV1[i], foundV1[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	loadErr := s.Err()
	if len(s.Packages()) == 0 && loadErr == nil {
		found = []validate.Finding{emptyFinding(dir, s.files, s.Ignored)}
	}
	return append(append(LoadFindings(loadErr), found...), foundV1...), nil
}

// EmptyFinding is the catalog-empty finding for a catalog of no blobs
// (nil when c has some), for callers that hold a whole Catalog.
func EmptyFinding(where string, c *Catalog) []validate.Finding {
	if len(c.Packages)+len(c.Channels)+len(c.Bundles)+len(c.Others) > 0 {
		return nil
	}
	return []validate.Finding{emptyFinding(where, nil, c.Ignored)}
}

// emptyFinding says why a catalog of no blobs is empty: which files were
// read and found empty, or that there were none (and what was skipped).
func emptyFinding(where string, files, ignored []string) validate.Finding {
	msg := where + " holds no file-based catalog: "
	switch {
	case len(files) > 0:
		msg += fmt.Sprintf("its JSON and YAML files (%s) hold no blobs", listSome(files))
	case len(ignored) > 0:
		msg += fmt.Sprintf("it has no JSON or YAML file (%s skipped: neither)", listSome(ignored))
	default:
		msg += "it has no files"
	}
	f := validate.Finding{Rule: validate.RuleCatalogEmpty.ID, Severity: validate.Error, Message: msg, Hint: validate.RuleCatalogEmpty.Fix}
	if len(files) == 1 {
		f.File = files[0]
	}
	return f
}

// listSome names up to three of names.
func listSome(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}

// LoadFindings turns an error from Load into catalog-syntax findings.
func LoadFindings(err error) []validate.Finding {
	var out []validate.Finding
	for _, e := range LoadErrors(err) {
		f := validate.Finding{Rule: validate.RuleCatalogSyntax.ID, Severity: validate.Error, Message: e.Error(), Hint: validate.RuleCatalogSyntax.Fix}
		var le *LoadError
		if errors.As(e, &le) {
			f.File, f.Line, f.Message = le.File, le.Line, le.Msg
			if strings.Contains(le.Msg, "(--max-") {
				// Not a syntax error: a bound on what is read (the
				// message names its flag).
				f.Hint = "The catalog passes a bound on what opm reads: check what wrote it, or raise the flag named."
			}
		}
		out = append(out, f)
	}
	return out
}

type checker struct {
	out []validate.Finding
	// subs are the bundles' olm.substitutesFor annotations, noted while
	// their manifests are decoded for the property checks.
	subs map[[2]string]substitute
	// pullSpecs caches pullSpecError by image.
	pullSpecs map[string]string
	// objects keeps the decoded olm.bundle.object values (when not nil).
	objects decodedObjects
}

func (v *checker) report(r *validate.Rule, pos Position, field, hint, format string, args ...any) {
	v.reportAs(r, r.Severity, pos, field, hint, format, args...)
}

func (v *checker) reportAs(r *validate.Rule, sev validate.Severity, pos Position, field, hint, format string, args ...any) {
	if hint == "" {
		hint = r.Fix
	}
	v.out = append(v.out, validate.Finding{Rule: r.ID, Severity: sev, File: pos.File, Line: pos.Line, Field: field,
		Message: fmt.Sprintf(format, args...), Hint: hint})
}

func (v *checker) packages(c *Catalog) {
	seen := map[string]Position{}
	channels := map[string]map[string]bool{}
	for _, ch := range c.Channels {
		if channels[ch.Package] == nil {
			channels[ch.Package] = map[string]bool{}
		}
		channels[ch.Package][ch.Name] = true
	}
	for _, p := range c.Packages {
		if p.Name == "" {
			v.report(validate.RuleCatalogPackageUnique, p.Pos, "name", "", "an olm.package blob has no name")
			continue
		}
		if first, dup := seen[p.Name]; dup {
			v.report(validate.RuleCatalogPackageUnique, p.Pos, "name", "", "package %s is declared again (first at %s:%d)", p.Name, first.File, first.Line)
			continue
		}
		seen[p.Name] = p.Pos
		switch {
		case p.DefaultChannel == "":
			v.report(validate.RuleCatalogDefaultChannel, p.Pos, "defaultChannel", "", "package %s has no defaultChannel", p.Name)
		case !channels[p.Name][p.DefaultChannel]:
			v.report(validate.RuleCatalogDefaultChannel, p.Pos, "defaultChannel", hintChannels(channels[p.Name]),
				"package %s: defaultChannel %q is not a channel of the package", p.Name, p.DefaultChannel)
		}
	}
	missing := func(pkg, what string, pos Position) {
		if _, ok := seen[pkg]; !ok {
			v.report(validate.RuleCatalogPackageMissing, pos, "package", "", "%s names package %q, which has no olm.package blob", what, pkg)
		}
	}
	for _, ch := range c.Channels {
		missing(ch.Package, "channel "+ch.Name, ch.Pos)
	}
	for _, b := range c.Bundles {
		missing(b.Package, "bundle "+b.Name, b.Pos)
	}
}

func hintChannels(chs map[string]bool) string {
	if len(chs) == 0 {
		return "the package has no olm.channel blob: add one"
	}
	var names []string
	for n := range chs {
		names = append(names, n)
	}
	sort.Strings(names)
	return "name one of: " + strings.Join(names, ", ")
}

func (v *checker) channels(c *Catalog) {
	bundles := map[string]map[string]bool{}
	for _, b := range c.Bundles {
		if bundles[b.Package] == nil {
			bundles[b.Package] = map[string]bool{}
		}
		bundles[b.Package][b.Name] = true
	}
	seen := map[[2]string]Position{}
	for _, ch := range c.Channels {
		key := [2]string{ch.Package, ch.Name}
		if first, dup := seen[key]; dup {
			v.report(validate.RuleCatalogChannelUnique, ch.Pos, "name", "", "channel %s of package %s is declared again (first at %s:%d)", ch.Name, ch.Package, first.File, first.Line)
			continue
		}
		seen[key] = ch.Pos
		if ch.Name == "" {
			v.report(validate.RuleCatalogChannelUnique, ch.Pos, "name", "", "an olm.channel blob of package %s has no name", ch.Package)
		}
		inChannel := map[string]bool{}
		for i, e := range ch.Entries {
			field := fmt.Sprintf("entries[%d]", i)
			if e.Name == "" {
				v.report(validate.RuleCatalogChannelBundle, ch.Pos, field+".name", "", "channel %s: entry %d has no name", ch.Name, i)
				continue
			}
			if inChannel[e.Name] {
				v.report(validate.RuleCatalogChannelUnique, ch.Pos, field+".name", "", "channel %s lists %s twice", ch.Name, e.Name)
			}
			inChannel[e.Name] = true
			if !bundles[ch.Package][e.Name] {
				v.report(validate.RuleCatalogChannelBundle, ch.Pos, field+".name", "", "channel %s lists %s, which is not a bundle of package %s", ch.Name, e.Name, ch.Package)
			}
			if e.SkipRange != "" {
				if _, err := semver.ParseRange(e.SkipRange); err != nil {
					v.report(validate.RuleCatalogProperty, ch.Pos, field+".skipRange", "write a semver range such as '>=1.0.0 <1.2.0'", "channel %s, entry %s: skipRange %q is not a valid range: %v", ch.Name, e.Name, e.SkipRange, err)
				}
			}
		}
		// Edges, heads and cycles. An edge out of the channel is how
		// clusters still running a pruned (or filtered-out) bundle upgrade
		// into the channel: one note per channel, at its tail.
		adj := map[string][]string{}
		replaced := map[string]bool{}
		var outside []string // targets, in order of first edge
		outsideField := map[string]string{}
		for i, e := range ch.Entries {
			targets := append([]string{}, e.Skips...)
			if e.Replaces != "" {
				targets = append([]string{e.Replaces}, targets...)
			}
			for j, s := range e.Skips {
				if s == "" {
					v.reportAs(validate.RuleCatalogChannelEdge, validate.Error, ch.Pos, fmt.Sprintf("entries[%d].skips[%d]", i, j), "remove the empty name from skips",
						"channel %s: %s skips an empty name", ch.Name, e.Name)
				}
			}
			for j, to := range targets {
				if to == "" {
					continue
				}
				replaced[to] = true
				if !inChannel[to] {
					field := fmt.Sprintf("entries[%d].replaces", i)
					if e.Replaces == "" || j > 0 {
						field = fmt.Sprintf("entries[%d].skips", i)
					}
					if _, dup := outsideField[to]; !dup {
						outside = append(outside, to)
						outsideField[to] = field
					}
					continue
				}
				adj[e.Name] = append(adj[e.Name], to)
			}
		}
		if len(outside) > 0 {
			v.edgesOut(ch, outside, outsideField, bundles[ch.Package])
		}
		var heads []string
		for _, e := range ch.Entries {
			if e.Name != "" && !replaced[e.Name] {
				heads = append(heads, e.Name)
			}
		}
		sort.Strings(heads)
		cycle := findCycle(ch.Entries, adj)
		if len(cycle) > 0 {
			v.report(validate.RuleCatalogChannelCycle, ch.Pos, "entries", "", "channel %s has an upgrade cycle: %s", ch.Name, strings.Join(cycle, " → "))
		}
		switch {
		case len(ch.Entries) == 0:
			v.report(validate.RuleCatalogChannelHead, ch.Pos, "entries", "list at least one bundle in the channel", "channel %s has no entries", ch.Name)
		case len(heads) == 0 && len(cycle) == 0:
			v.report(validate.RuleCatalogChannelHead, ch.Pos, "entries", "", "channel %s has no head", ch.Name)
		case len(heads) == 0:
			v.report(validate.RuleCatalogChannelHead, ch.Pos, "entries", "", "channel %s has no head: every entry is replaced or skipped by another", ch.Name)
		case len(heads) > 1:
			v.report(validate.RuleCatalogChannelHead, ch.Pos, "entries", "", "channel %s has %d heads (%s); exactly one entry may be left unreplaced", ch.Name, len(heads), strings.Join(heads, ", "))
		}
	}
}

// edgesOut notes the edges of channel ch to bundles outside it, once, at
// the channel's tail: the entry whose replaces leaves the channel (the
// first such edge when no replaces does).
func (v *checker) edgesOut(ch Channel, outside []string, field map[string]string, inPackage map[string]bool) {
	at := field[outside[0]]
	for i, e := range ch.Entries {
		if e.Replaces != "" && field[e.Replaces] == fmt.Sprintf("entries[%d].replaces", i) {
			at = field[e.Replaces]
			break
		}
	}
	var gone, elsewhere []string
	for _, to := range outside {
		if inPackage[to] {
			elsewhere = append(elsewhere, to)
		} else {
			gone = append(gone, to)
		}
	}
	var parts []string
	if len(gone) > 0 {
		parts = append(parts, fmt.Sprintf("%s not in the catalog (%s)", printable.Count(len(gone), "bundle", "bundles"), listSome(gone)))
	}
	if len(elsewhere) > 0 {
		parts = append(parts, fmt.Sprintf("%s of other channels (%s)", printable.Count(len(elsewhere), "bundle", "bundles"), listSome(elsewhere)))
	}
	v.report(validate.RuleCatalogChannelEdge, ch.Pos, at, "",
		"channel %s upgrades from %s: clusters still running them upgrade into the channel by these edges", ch.Name, strings.Join(parts, " and "))
}

// findCycle returns one cycle of the channel's edges (first node repeated at
// the end), or nil.
func findCycle(entries []ChannelEntry, adj map[string][]string) []string {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack, found []string
	var visit func(n string) bool
	visit = func(n string) bool {
		color[n] = grey
		stack = append(stack, n)
		for _, m := range adj[n] {
			switch color[m] {
			case grey:
				for i, s := range stack {
					if s == m {
						found = append(append([]string{}, stack[i:]...), m)
						return true
					}
				}
			case white:
				if visit(m) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
		return false
	}
	for _, e := range entries {
		if color[e.Name] == white && visit(e.Name) {
			return found
		}
	}
	return nil
}

func (v *checker) bundles(c *Catalog) {
	inChannel := map[[2]string]bool{}
	for _, ch := range c.Channels {
		for _, e := range ch.Entries {
			inChannel[[2]string{ch.Package, e.Name}] = true
		}
	}
	seen := map[[2]string]Position{}
	for _, b := range c.Bundles {
		key := [2]string{b.Package, b.Name}
		if b.Name == "" {
			v.report(validate.RuleCatalogBundleUnique, b.Pos, "name", "", "an olm.bundle blob of package %s has no name", b.Package)
			continue
		}
		if first, dup := seen[key]; dup {
			v.report(validate.RuleCatalogBundleUnique, b.Pos, "name", "", "bundle %s of package %s is declared again (first at %s:%d)", b.Name, b.Package, first.File, first.Line)
			continue
		}
		seen[key] = b.Pos
		if !inChannel[key] {
			v.report(validate.RuleCatalogBundleChannel, b.Pos, "name", "", "bundle %s is in no channel of package %s", b.Name, b.Package)
		}
		v.properties(b)
	}
}

// properties checks the shape of a bundle's property values.
func (v *checker) properties(b Bundle) {
	bad := func(i int, hint, format string, args ...any) {
		v.report(validate.RuleCatalogProperty, b.Pos, fmt.Sprintf("properties[%d].value", i), hint,
			"bundle %s: %s", b.Name, fmt.Sprintf(format, args...))
	}
	strict := func(raw json.RawMessage, into any) error { return json.Unmarshal(raw, into) }
	packages := 0
	for i, p := range b.Properties {
		switch p.Type {
		case "":
			v.report(validate.RuleCatalogProperty, b.Pos, fmt.Sprintf("properties[%d].type", i), "", "bundle %s: property %d has no type", b.Name, i)
		case PropertyPackage:
			packages++
			var pv PackageValue
			if err := strict(p.Value, &pv); err != nil {
				bad(i, `write {"packageName": "...", "version": "1.2.3"}`, "olm.package value: %v", err)
				continue
			}
			if pv.PackageName != b.Package {
				bad(i, "", "olm.package names package %q but the bundle is in package %q", pv.PackageName, b.Package)
			}
			// The release is catalog-release's.
			if _, err := index.ParseVersion(pv.Version, ""); err != nil {
				bad(i, "give the bundle's semver version", "olm.package version: %v", err)
			}
		case PropertyGVK, PropertyGVKRequired:
			var g GVKValue
			if err := strict(p.Value, &g); err != nil {
				bad(i, `write {"group": "...", "kind": "...", "version": "..."}`, "%s value: %v", p.Type, err)
				continue
			}
			if g.Kind == "" || g.Version == "" {
				bad(i, "set kind and version (group is empty only for the core group)", "%s %s needs kind and version", p.Type, string(p.Value))
			}
		case PropertyPackageRequired:
			var r PackageRequiredValue
			if err := strict(p.Value, &r); err != nil {
				bad(i, `write {"packageName": "...", "versionRange": ">=1.0.0"}`, "olm.package.required value: %v", err)
				continue
			}
			if r.PackageName == "" {
				bad(i, "", "olm.package.required has no packageName")
			}
			if _, err := semver.ParseRange(r.VersionRange); err != nil {
				bad(i, "write a semver range such as '>=1.0.0 <2.0.0'", "olm.package.required versionRange %q: %v", r.VersionRange, err)
			}
		case PropertyLabel, PropertyLabelRequired:
			var l LabelValue
			if err := strict(p.Value, &l); err != nil || l.Label == "" {
				bad(i, `write {"label": "..."}`, "%s needs a label", p.Type)
			}
		case PropertyBundleObject:
			o, err := v.objects.decode(p.Value)
			if err != nil {
				bad(i, `write {"data": "<base64 of the manifest>"}`, "olm.bundle.object value: %v", err)
				continue
			}
			if o.Ref != "" && len(o.Data) == 0 {
				bad(i, "inline the manifest as base64 in data", "olm.bundle.object refers to file %q; opm reads only inline data", o.Ref)
				continue
			}
			// A shape check only (the manifests are read when used): a
			// JSON object that names its kind.
			if d := bytes.TrimSpace(o.Data); len(d) == 0 || d[0] != '{' || !bytes.Contains(d, []byte(`"kind"`)) {
				bad(i, "encode the JSON of one Kubernetes object", "olm.bundle.object data is not a Kubernetes object in JSON")
				continue
			}
			v.noteSubstitutes(&b, o.Data, fromObject)
		case PropertyCSVMetadata:
			var m map[string]any
			if err := strict(p.Value, &m); err != nil {
				bad(i, "", "olm.csv.metadata must be an object: %v", err)
				continue
			}
			v.noteSubstitutes(&b, p.Value, fromCSVMetadata)
		}
	}
	if packages != 1 {
		v.report(validate.RuleCatalogProperty, b.Pos, "properties", "add exactly one olm.package property with the bundle's package name and version",
			"bundle %s has %d olm.package properties; exactly one is needed", b.Name, packages)
	}
}
