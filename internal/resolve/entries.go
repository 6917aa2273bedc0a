package resolve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"weak"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
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
// once per channel that holds it), or one installed CSV. Entries of a
// catalog are shared by every question over it: nothing here changes
// after the index is built, except under the index's lock.
type entry struct {
	name      string
	pkg       string
	channel   string
	idx       *catalogIndex
	isDefault bool // channel is the package's default channel
	replaces  string
	skips     []string
	skipRange semver.Range
	skipText  string
	version   *semver.Version // nil when the version does not parse
	props     []prop
	// provides are the olm.gvk APIs; packages the olm.package names.
	provides []GVK
	packages []string
	// subscribed marks an installed CSV a Subscription's installedCSV
	// names: it may be replaced; other installed CSVs must stay.
	subscribed bool
	// cel is the property list as a cel rule sees it, made once (under
	// the index's lock).
	cel []any
	// strict are the olm.package versions that parse as strict semver.
	strict []semver.Version
	// reqs are the entry's requirements (parsed once), or the error OLM
	// fails with on them.
	reqs     []requirement
	reqsErr  error
	reqsDone bool
}

// requirement is a parsed requirement and the property it came from (the
// key its satisfiers are cached under).
type requirement struct {
	pred predicate
	key  string
}

func (e *entry) String() string { return e.name }

// prop is a bundle property as OLM's resolver sees it, its value decoded
// lazily for CEL (under the index's lock).
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

// celProperties is the entry's properties as OLM hands them to a cel
// rule: a list of {type, value} maps, null for a value that is not JSON.
func (e *entry) celProperties() []any {
	if e.cel != nil {
		return e.cel
	}
	list := make([]any, len(e.props))
	for i := range e.props {
		if v, ok := e.props[i].value(); ok {
			list[i] = map[string]any{"type": e.props[i].typ, "value": v}
		}
	}
	e.cel = list
	return list
}

// packageProp is the first olm.package property's package and version.
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

// derive fills what the entry's properties say once: the APIs it
// provides, the packages it belongs to, its version.
func (e *entry) derive() {
	e.provides, e.packages = nil, nil
	for i := range e.props {
		switch e.props[i].typ {
		case fbc.PropertyGVK:
			var v fbc.GVKValue
			if json.Unmarshal(e.props[i].raw, &v) == nil {
				e.provides = append(e.provides, GVK{Group: v.Group, Version: v.Version, Kind: v.Kind})
			}
		case fbc.PropertyPackage:
			var v fbc.PackageValue
			if json.Unmarshal(e.props[i].raw, &v) == nil {
				e.packages = append(e.packages, v.PackageName)
				if sv, err := semver.Parse(v.Version); err == nil {
					e.strict = append(e.strict, sv)
				}
				if e.version == nil && len(e.packages) == 1 {
					if sv, err := semver.ParseTolerant(v.Version); err == nil {
						e.version = &sv
					}
				}
			}
		}
	}
}

// pkgChan is a channel of a package.
type pkgChan struct{ pkg, channel string }

// catalogIndex is what OLM's cache holds for one catalog's content: its
// entries with indexes, each channel's order, and the requirements'
// satisfiers found so far. Questions over the same catalog share it.
type catalogIndex struct {
	entries  []*entry
	byPkg    map[string][]*entry
	byName   map[string][]*entry
	byGVK    map[GVK][]*entry
	channels map[pkgChan][]*entry
	// mu guards what is filled lazily: chains, satisfiers, entries'
	// requirements and decoded property values.
	mu     sync.Mutex
	chains map[pkgChan]chainResult
	sats   map[string]depResult
	preds  map[string]predResult
	// naming indexes entries by the packageName any of their property
	// values names (built on first use).
	naming map[string][]*entry
	// shape notes the catalog's sizes, to notice a catalog changed since.
	shape [3]int
	// installed marks the index of a namespace's installed CSVs.
	installed bool
	// deprecations are the catalog's olm.deprecations entries by
	// package: OLM v0 resolves as if they were absent and reports them.
	deprecations map[string][]graph.Deprecation
}

// snapshot is a catalog as one question sees it: its content, its name
// and namespace, its priority.
type snapshot struct {
	*catalogIndex
	key      sourceKey
	priority int
	// order is the position of the catalog in the question, for ties.
	order int
}

type predResult struct {
	pred predicate
	err  error
}

type chainResult struct {
	chain []*entry
	err   error
}

func newIndex() *catalogIndex {
	return &catalogIndex{
		byPkg: map[string][]*entry{}, byName: map[string][]*entry{}, byGVK: map[GVK][]*entry{},
		channels: map[pkgChan][]*entry{}, chains: map[pkgChan]chainResult{}, sats: map[string]depResult{},
		preds: map[string]predResult{},
	}
}

func (s *catalogIndex) add(e *entry) {
	e.idx = s
	e.derive()
	s.entries = append(s.entries, e)
	s.byPkg[e.pkg] = append(s.byPkg[e.pkg], e)
	s.byName[e.name] = append(s.byName[e.name], e)
	for _, g := range e.provides {
		s.byGVK[g] = append(s.byGVK[g], e)
	}
	pc := pkgChan{e.pkg, e.channel}
	s.channels[pc] = append(s.channels[pc], e)
}

// chain is OLM's order of a channel's entries: from the head down the
// replaces chain, skipped entries left out. The caller holds s.mu.
func (s *catalogIndex) chain(pc pkgChan) ([]*entry, error) {
	if r, ok := s.chains[pc]; ok {
		return r.chain, r.err
	}
	c, err := sortChannel(s.channels[pc])
	s.chains[pc] = chainResult{c, err}
	return c, err
}

// namingPackage lists the entries one of whose property values is an
// object with "packageName": name. The caller holds s.mu.
func (s *catalogIndex) namingPackage(name string) []*entry {
	if s.naming == nil {
		s.naming = map[string][]*entry{}
		for _, e := range s.entries {
			seen := map[string]bool{}
			for i := range e.props {
				if !bytes.Contains(e.props[i].raw, []byte(`"packageName"`)) {
					continue
				}
				v, ok := e.props[i].value()
				m, isMap := v.(map[string]any)
				if !ok || !isMap {
					continue
				}
				if n, ok := m["packageName"].(string); ok && !seen[n] {
					seen[n] = true
					s.naming[n] = append(s.naming[n], e)
				}
			}
		}
	}
	return s.naming[name]
}

// indexCache keeps each catalog's index while the catalog is reachable,
// so that many questions over one catalog build it once.
var indexCache = struct {
	sync.Mutex
	m map[weak.Pointer[fbc.Catalog]]*catalogIndex
}{m: map[weak.Pointer[fbc.Catalog]]*catalogIndex{}}

func catalogShape(c *fbc.Catalog) [3]int {
	return [3]int{len(c.Packages), len(c.Channels), len(c.Bundles)}
}

// indexOf is the index of c, built once while c lives (rebuilt if its
// sizes changed).
func indexOf(c *fbc.Catalog) *catalogIndex {
	if c == nil {
		return newIndex()
	}
	wp := weak.Make(c)
	indexCache.Lock()
	idx, ok := indexCache.m[wp]
	indexCache.Unlock()
	if ok && idx.shape == catalogShape(c) {
		return idx
	}
	idx = buildIndex(c)
	indexCache.Lock()
	if _, had := indexCache.m[wp]; !had {
		runtime.AddCleanup(c, func(wp weak.Pointer[fbc.Catalog]) {
			indexCache.Lock()
			delete(indexCache.m, wp)
			indexCache.Unlock()
		}, wp)
	}
	indexCache.m[wp] = idx
	indexCache.Unlock()
	return idx
}

// buildIndex turns a catalog into OLM's entries as opm serve lists them:
// every channel entry whose bundle exists, with the bundle's properties
// minus the two OLM does not pass on (olm.bundle.object,
// olm.csv.metadata).
func buildIndex(c *fbc.Catalog) *catalogIndex {
	s := newIndex()
	s.shape = catalogShape(c)
	// A blob that does not decode is opm serve's error to report; the
	// resolver only quotes what decodes.
	s.deprecations, _ = graph.Deprecations(c)
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
	for _, ch := range c.Channels {
		for _, ce := range ch.Entries {
			b := bundles[[2]string{ch.Package, ce.Name}]
			if b == nil {
				continue
			}
			e := &entry{
				name: ce.Name, pkg: ch.Package, channel: ch.Name,
				isDefault: ch.Name == defaults[ch.Package],
				replaces:  ce.Replaces, skips: ce.Skips, skipText: ce.SkipRange,
				props: bundleProps(b.Properties),
			}
			if ce.SkipRange != "" {
				if r, err := semver.ParseRange(ce.SkipRange); err == nil {
					e.skipRange = r
				}
			}
			s.add(e)
		}
	}
	return s
}

// bundleProps copies a bundle's properties as OLM's resolver receives
// them.
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
	for _, g := range in.Provided {
		raw, _ := json.Marshal(fbc.GVKValue{Group: g.Group, Kind: g.Kind, Version: g.Version})
		e.props = append(e.props, prop{typ: fbc.PropertyGVK, raw: raw})
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
