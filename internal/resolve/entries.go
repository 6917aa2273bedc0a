package resolve

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
)

// existingName is the name of the pseudo-catalog that holds a namespace's
// installed CSVs, as OLM names it.
const existingName = "@existing"

// sourceKey names a catalog: a CatalogSource, or the namespace's installed
// CSVs (existingName).
type sourceKey struct{ name, namespace string }

func (k sourceKey) existing() bool { return k.name == existingName }

func (k sourceKey) String() string { return k.name + "/" + k.namespace }

// entry is one bundle in one channel of one catalog (OLM lists a bundle
// once per channel that holds it), or one installed CSV.
type entry struct {
	name      string
	pkg       string
	channel   string
	snap      *snapshot
	isDefault bool // channel is the package's default channel
	replaces  string
	skips     []string
	skipRange semver.Range
	skipText  string
	version   *semver.Version // nil when the version does not parse
	props     []prop
	// subscribed marks an installed CSV a Subscription's installedCSV
	// names: it may be replaced; other installed CSVs must stay.
	subscribed bool
}

func (e *entry) String() string { return e.name }

// prop is a bundle property as OLM's resolver sees it, its value decoded
// lazily for CEL.
type prop struct {
	typ    string
	raw    json.RawMessage
	parsed any
	done   bool
}

func (p *prop) value() (any, bool) {
	if !p.done {
		p.done = true
		var v any
		if err := json.Unmarshal(p.raw, &v); err == nil {
			p.parsed = v
		} else {
			p.parsed = errNoValue
		}
	}
	if p.parsed == errNoValue {
		return nil, false
	}
	return p.parsed, true
}

var errNoValue = &struct{ x int }{1}

// packageProp is the olm.package property's package and version, as OLM's
// predicates read it.
func (e *entry) packageProp() (string, string, bool) {
	for i := range e.props {
		if e.props[i].typ != fbc.PropertyPackage {
			continue
		}
		var v fbc.PackageValue
		if json.Unmarshal(e.props[i].raw, &v) == nil {
			return v.PackageName, v.Version, true
		}
	}
	return "", "", false
}

// gvks lists the APIs the entry provides (olm.gvk properties).
func (e *entry) gvks() []GVK {
	var out []GVK
	for i := range e.props {
		if e.props[i].typ != fbc.PropertyGVK {
			continue
		}
		var v fbc.GVKValue
		if json.Unmarshal(e.props[i].raw, &v) == nil {
			out = append(out, GVK{Group: v.Group, Version: v.Version, Kind: v.Kind})
		}
	}
	return out
}

// pkgChan is a channel of a package.
type pkgChan struct{ pkg, channel string }

// snapshot is what OLM's cache holds for one catalog: its entries, with
// indexes, and each channel's order (or the error ordering it gives).
type snapshot struct {
	key      sourceKey
	priority int
	// order is the position of the catalog in the question, for ties.
	order    int
	entries  []*entry
	byPkg    map[string][]*entry
	byName   map[string][]*entry
	byGVK    map[GVK][]*entry
	channels map[pkgChan][]*entry
	chains   map[pkgChan]chainResult
	pkgNames map[string]bool
}

type chainResult struct {
	chain []*entry
	err   error
}

func newSnapshot(key sourceKey, priority, order int) *snapshot {
	return &snapshot{
		key: key, priority: priority, order: order,
		byPkg: map[string][]*entry{}, byName: map[string][]*entry{}, byGVK: map[GVK][]*entry{},
		channels: map[pkgChan][]*entry{}, chains: map[pkgChan]chainResult{}, pkgNames: map[string]bool{},
	}
}

func (s *snapshot) add(e *entry) {
	e.snap = s
	s.entries = append(s.entries, e)
	s.byPkg[e.pkg] = append(s.byPkg[e.pkg], e)
	s.byName[e.name] = append(s.byName[e.name], e)
	for _, g := range e.gvks() {
		s.byGVK[g] = append(s.byGVK[g], e)
	}
	pc := pkgChan{e.pkg, e.channel}
	s.channels[pc] = append(s.channels[pc], e)
	s.pkgNames[e.pkg] = true
}

// chain is OLM's order of a channel's entries: from the head down the
// replaces chain, skipped entries left out.
func (s *snapshot) chain(pc pkgChan) ([]*entry, error) {
	if r, ok := s.chains[pc]; ok {
		return r.chain, r.err
	}
	c, err := sortChannel(s.channels[pc])
	s.chains[pc] = chainResult{c, err}
	return c, err
}

// catalogSnapshot turns a catalog into OLM's entries as opm serve lists
// them: every channel entry whose bundle exists, with the bundle's
// properties minus the two OLM does not pass on (olm.bundle.object,
// olm.csv.metadata).
func catalogSnapshot(c *fbc.Catalog, key sourceKey, priority, order int) *snapshot {
	s := newSnapshot(key, priority, order)
	if c == nil {
		return s
	}
	defaults := map[string]string{}
	for _, p := range c.Packages {
		defaults[p.Name] = p.DefaultChannel
	}
	bundles := map[[2]string]*fbc.Bundle{}
	for i := range c.Bundles {
		b := &c.Bundles[i]
		k := [2]string{b.Package, b.Name}
		if _, ok := bundles[k]; !ok {
			bundles[k] = b
		}
	}
	props := map[*fbc.Bundle][]prop{}
	for _, ch := range c.Channels {
		for _, ce := range ch.Entries {
			b := bundles[[2]string{ch.Package, ce.Name}]
			if b == nil {
				continue
			}
			ps, ok := props[b]
			if !ok {
				ps = bundleProps(b.Properties)
				props[b] = ps
			}
			e := &entry{
				name: ce.Name, pkg: ch.Package, channel: ch.Name,
				isDefault: ch.Name == defaults[ch.Package],
				replaces:  ce.Replaces, skips: ce.Skips, skipText: ce.SkipRange,
				props: ps,
			}
			if ce.SkipRange != "" {
				if r, err := semver.ParseRange(ce.SkipRange); err == nil {
					e.skipRange = r
				}
			}
			if _, v, ok := e.packageProp(); ok {
				if sv, err := semver.ParseTolerant(v); err == nil {
					e.version = &sv
				}
			}
			s.add(e)
		}
	}
	return s
}

// bundleProps copies a bundle's properties as OLM's resolver receives
// them. Each entry gets its own copies so that decoded values are cached
// per bundle.
func bundleProps(in []fbc.Property) []prop {
	out := make([]prop, 0, len(in))
	for _, p := range in {
		if p.Type == fbc.PropertyBundleObject || p.Type == fbc.PropertyCSVMetadata {
			continue
		}
		out = append(out, prop{typ: p.Type, raw: p.Value})
	}
	return out
}

// installedEntry makes the entry of an installed CSV. OLM reads its
// properties from the CSV's properties annotation, which OLM writes from
// the bundle's properties when it installs one: so the catalogs' bundle
// of that name stands for the CSV when one exists. Provided, when given,
// replaces the APIs it provides.
func installedEntry(in Installed, cats []*snapshot) *entry {
	e := &entry{name: in.CSV, pkg: in.Package}
	var from *entry
	for _, s := range cats {
		for _, c := range s.byName[in.CSV] {
			if in.Package == "" || c.pkg == in.Package {
				from = c
				break
			}
		}
		if from != nil {
			break
		}
	}
	if from != nil {
		if e.pkg == "" {
			e.pkg = from.pkg
		}
		e.version = from.version
		for _, p := range from.props {
			if len(in.Provided) > 0 && p.typ == fbc.PropertyGVK {
				continue
			}
			e.props = append(e.props, prop{typ: p.typ, raw: p.raw})
		}
	}
	if len(in.Provided) > 0 {
		for _, g := range in.Provided {
			raw, _ := json.Marshal(fbc.GVKValue{Group: g.Group, Kind: g.Kind, Version: g.Version})
			e.props = append(e.props, prop{typ: fbc.PropertyGVK, raw: raw})
		}
	}
	if _, _, ok := e.packageProp(); !ok && e.pkg != "" {
		ver := ""
		if e.version != nil {
			ver = e.version.String()
		}
		raw, _ := json.Marshal(fbc.PackageValue{PackageName: e.pkg, Version: ver})
		e.props = append(e.props, prop{typ: fbc.PropertyPackage, raw: raw})
	}
	if e.version == nil {
		if v, ok := versionFromName(in.CSV); ok {
			e.version = &v
		}
	}
	return e
}

// versionFromName reads a version from a CSV name such as
// "etcdoperator.v0.9.4", for an installed CSV no catalog knows.
func versionFromName(name string) (semver.Version, bool) {
	i := strings.Index(name, ".v")
	for i >= 0 {
		if v, err := semver.ParseTolerant(name[i+2:]); err == nil {
			return v, true
		}
		j := strings.Index(name[i+2:], ".v")
		if j < 0 {
			break
		}
		i += 2 + j
	}
	return semver.Version{}, false
}

// sortChannel orders the entries of one channel as OLM does: the head (the
// entry nothing replaces or skips) first, then down its replaces chain;
// entries some other entry skips are left out. A channel with no head,
// several heads or a replaces cycle cannot be ordered: OLM fails the
// resolution with the error returned.
func sortChannel(entries []*entry) ([]*entry, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	pkg, ch := entries[0].pkg, entries[0].channel
	byName := make(map[string]*entry, len(entries))
	for _, e := range entries {
		byName[e.name] = e
	}
	replacedBy := map[*entry]bool{}
	replaces := map[*entry]*entry{}
	skipped := map[string]bool{}
	for _, e := range entries {
		if r, ok := byName[e.replaces]; ok && e.replaces != "" {
			replacedBy[r] = true
			replaces[e] = r
		}
		for _, s := range e.skips {
			if r, ok := byName[s]; ok {
				replacedBy[r] = true
				skipped[s] = true
			}
		}
	}
	var heads []*entry
	for _, e := range entries {
		if !replacedBy[e] {
			heads = append(heads, e)
		}
	}
	if len(heads) == 0 {
		return nil, fmt.Errorf("channel %q of package %q has no head: every entry is replaced or skipped by another, so OLM cannot order it", ch, pkg)
	}
	var chains [][]*entry
	for _, h := range heads {
		var chain []*entry
		seen := map[*entry]bool{}
		for cur := h; ; {
			seen[cur] = true
			if !skipped[cur.name] {
				chain = append(chain, cur)
			}
			next, ok := replaces[cur]
			if !ok {
				break
			}
			if seen[next] {
				return nil, fmt.Errorf("the replaces chain from %q in channel %q of package %q loops, so OLM cannot order the channel", h.name, ch, pkg)
			}
			cur = next
		}
		chains = append(chains, chain)
	}
	if len(chains) > 1 {
		names := make([]string, len(chains))
		for i, c := range chains {
			switch len(c) {
			case 0:
				names[i] = "[]"
			case 1:
				names[i] = c[0].name
			default:
				names[i] = c[0].name + "..." + c[len(c)-1].name
			}
		}
		return nil, fmt.Errorf("channel %q of package %q has %d replaces chains (%s); OLM orders a channel only along a single chain", ch, pkg, len(names), strings.Join(names, ", "))
	}
	return chains[0], nil
}
