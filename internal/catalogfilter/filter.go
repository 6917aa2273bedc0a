// Package catalogfilter keeps part of a catalog (packages, channels,
// version ranges) so that what is left is still a catalog OLM can use:
// every channel keeps one head, a bundle outside a range that the range
// needs to upgrade to that head is kept (and said), a default channel
// filtered out is an error, and deprecations and other blobs of what is
// kept stay. It reads operator-registry's FilterConfiguration and
// oc-mirror's ImageSetConfiguration (see Config).
package catalogfilter

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
)

// Removal is a bundle the filter left out, and why.
type Removal struct {
	Package string `json:"package"`
	Bundle  string `json:"bundle"`
	Why     string `json:"why"`
}

// Extra is a bundle kept outside what was asked for, and why.
type Extra struct {
	Package string `json:"package"`
	Channel string `json:"channel"`
	Bundle  string `json:"bundle"`
	Why     string `json:"why"`
}

// Report says what the filter did.
type Report struct {
	Removed []Removal `json:"removed"`
	Extra   []Extra   `json:"keptOutsideRange"`
}

// Filter returns the part of c that cfg keeps.
func Filter(c *fbc.Catalog, cfg *Config) (*fbc.Catalog, *Report, error) {
	want := map[string]*Package{}
	for i := range cfg.Packages {
		want[cfg.Packages[i].Name] = &cfg.Packages[i]
	}
	for _, p := range cfg.Packages {
		if err := c.CheckPackage(p.Name); err != nil {
			return nil, nil, err
		}
	}
	out := &fbc.Catalog{}
	rep := &Report{Removed: []Removal{}, Extra: []Extra{}}
	keptBundles := map[[2]string]bool{}
	keptChannels := map[[2]string]bool{}
	// Each package's bundles and channels, found once: looking for them
	// package by package made the filter quadratic in the catalog's size.
	bundlesOf := map[string][]*fbc.Bundle{}
	for i := range c.Bundles {
		b := &c.Bundles[i]
		bundlesOf[b.Package] = append(bundlesOf[b.Package], b)
	}
	channelsOf := map[string][]*fbc.Channel{}
	for i := range c.Channels {
		ch := &c.Channels[i]
		channelsOf[ch.Package] = append(channelsOf[ch.Package], ch)
	}
	for _, p := range c.Packages {
		pf := want[p.Name]
		if len(cfg.Packages) > 0 && pf == nil {
			for _, b := range bundlesOf[p.Name] {
				rep.Removed = append(rep.Removed, Removal{Package: p.Name, Bundle: b.Name, Why: "package not selected"})
			}
			continue
		}
		if pf == nil {
			pf = &Package{Name: p.Name, HeadsOnly: cfg.HeadsOnly}
		}
		pkg, chans, bundles, err := filterPackage(p, bundlesOf[p.Name], channelsOf[p.Name], pf, rep)
		if err != nil {
			return nil, nil, err
		}
		out.Packages = append(out.Packages, pkg)
		for _, ch := range chans {
			keptChannels[[2]string{p.Name, ch.Name}] = true
			out.Channels = append(out.Channels, ch)
		}
		for b := range bundles {
			keptBundles[[2]string{p.Name, b}] = true
		}
	}
	for _, b := range c.Bundles {
		if keptBundles[[2]string{b.Package, b.Name}] {
			out.Bundles = append(out.Bundles, b)
		}
	}
	keptPkg := map[string]bool{}
	for _, p := range out.Packages {
		keptPkg[p.Name] = true
	}
	for _, m := range c.Others {
		if m.Package != "" && !keptPkg[m.Package] {
			continue
		}
		if m.Schema == fbc.SchemaDeprecations {
			if d, ok := keepDeprecations(m, keptChannels, keptBundles); ok {
				out.Others = append(out.Others, d)
			}
			continue
		}
		out.Others = append(out.Others, m)
	}
	sortRemoved(rep.Removed)
	return out, rep, nil
}

// filterPackage keeps what pf asks of package p (whose bundles and
// channels are given): its blob (default channel checked), its channels
// and the names of the bundles they keep.
func filterPackage(p fbc.Package, pkgBundles []*fbc.Bundle, pkgChannels []*fbc.Channel, pf *Package, rep *Report) (fbc.Package, []fbc.Channel, map[string]bool, error) {
	versions := map[string]semver.Version{}
	inPkg := map[string]bool{}
	for _, b := range pkgBundles {
		inPkg[b.Name] = true
		if v, err := graph.Version(b); err == nil {
			versions[b.Name] = v
		}
	}
	byName := map[string]fbc.Channel{}
	var names []string
	for _, ch := range pkgChannels {
		byName[ch.Name] = *ch
		names = append(names, ch.Name)
	}
	sort.Strings(names)
	def := p.DefaultChannel
	if pf.DefaultChannel != "" {
		def = pf.DefaultChannel
	}
	type pick struct {
		name, rng string
		named     bool // the configuration names the channel
	}
	var picks []pick
	if len(pf.Channels) > 0 {
		for _, ch := range pf.Channels {
			if _, ok := byName[ch.Name]; !ok {
				return p, nil, nil, fmt.Errorf("package %s has no channel %s (its channels: %s)", p.Name, ch.Name, strings.Join(names, ", "))
			}
			rng := ch.Range
			if rng == "" {
				rng = pf.Range
			}
			picks = append(picks, pick{ch.Name, rng, true})
		}
	} else {
		for _, n := range names {
			picks = append(picks, pick{n, pf.Range, false})
		}
	}
	why := map[string]string{} // bundle -> why it went, when it did
	kept := map[string]bool{}
	var chans []fbc.Channel
	for _, pk := range picks {
		full, ok := byName[pk.name]
		if !ok {
			return p, nil, nil, fmt.Errorf("package %s: default channel %s does not exist (its channels: %s)", p.Name, pk.name, strings.Join(names, ", "))
		}
		ch, err := filterChannel(full, pk.rng, pf.HeadsOnly, versions, rep, why)
		if err != nil {
			return p, nil, nil, fmt.Errorf("package %s: %w", p.Name, err)
		}
		if len(ch.Entries) == 0 {
			// A channel the file names and its range empties is most
			// likely a wrong range (operator-registry fails too); one a
			// package-wide range empties just has no such versions.
			if pk.named {
				return p, nil, nil, fmt.Errorf("package %s: channel %s keeps no bundle: none is in %s: widen the range, or leave the channel out", p.Name, pk.name, pk.rng)
			}
			continue
		}
		chans = append(chans, ch)
		for _, e := range ch.Entries {
			kept[e.Name] = true
		}
	}
	var keptNames []string
	defKept := false
	for _, ch := range chans {
		keptNames = append(keptNames, ch.Name)
		defKept = defKept || ch.Name == def
	}
	if len(chans) == 0 {
		return p, nil, nil, fmt.Errorf("package %s: the filter keeps no bundle of it: widen its ranges, or leave the package out", p.Name)
	}
	if !defKept {
		if pf.DefaultChannel != "" {
			return p, nil, nil, fmt.Errorf("package %s: defaultChannel %s is not among the channels kept (%s)", p.Name, def, strings.Join(keptNames, ", "))
		}
		return p, nil, nil, fmt.Errorf("package %s: its default channel %s is filtered out: keep it, or set defaultChannel to one of the channels kept (%s)", p.Name, def, strings.Join(keptNames, ", "))
	}
	p.DefaultChannel = def
	for name := range inPkg {
		if kept[name] {
			continue
		}
		w := why[name]
		if w == "" {
			w = "in no channel kept"
		}
		rep.Removed = append(rep.Removed, Removal{Package: p.Name, Bundle: name, Why: w})
	}
	return p, chans, kept, nil
}

// filterChannel keeps the entries of ch in rng (the head alone when
// headOnly and no range; all without either), then the entries needed
// for one head: each other head's upgrade, lowest version first.
func filterChannel(ch fbc.Channel, rng string, headOnly bool, versions map[string]semver.Version, rep *Report, why map[string]string) (fbc.Channel, error) {
	out := ch
	out.Entries = nil
	listed := map[string]bool{}
	for _, e := range ch.Entries {
		// Kept, both copies would be written: an invalid channel.
		if listed[e.Name] {
			return out, fmt.Errorf("channel %s lists %s twice in the source: fix the source", ch.Name, e.Name)
		}
		listed[e.Name] = true
	}
	keep := map[string]bool{}
	switch {
	case rng != "":
		r, err := semver.ParseRange(rng)
		if err != nil {
			return out, fmt.Errorf("channel %s: range %q: %w", ch.Name, rng, err)
		}
		for _, e := range ch.Entries {
			v, ok := versions[e.Name]
			if ok && r(v) {
				keep[e.Name] = true
			} else if why[e.Name] == "" {
				why[e.Name] = fmt.Sprintf("outside %s in channel %s", rng, ch.Name)
			}
		}
	case headOnly:
		heads := graph.Heads(&ch)
		if len(heads) == 0 {
			return out, fmt.Errorf("channel %s has no head in the source: every entry is replaced or skipped (a cycle)", ch.Name)
		}
		if len(heads) != 1 {
			return out, fmt.Errorf("channel %s has %d heads in the source (%s): name the versions to keep", ch.Name, len(heads), strings.Join(heads, ", "))
		}
		keep[heads[0]] = true
		for _, e := range ch.Entries {
			if e.Name != heads[0] && why[e.Name] == "" {
				why[e.Name] = fmt.Sprintf("not the head of channel %s (only heads are kept without a range or full: true)", ch.Name)
			}
		}
	default:
		for _, e := range ch.Entries {
			keep[e.Name] = true
		}
	}
	for {
		sub := subset(ch, keep)
		heads := graph.Heads(&sub)
		if len(heads) <= 1 {
			if cyc := cycle(ch, keep); len(cyc) > 0 {
				// A cycle of the source, kept, would be written as is:
				// say where it is rather than fail validation afterwards.
				return out, fmt.Errorf("channel %s has an upgrade cycle in the source (%s): fix the source, or keep versions outside the cycle", ch.Name, strings.Join(cyc, " → "))
			}
			out.Entries = sub.Entries
			return out, nil
		}
		// The newest head stays a head; each other one needs the entry
		// that upgrades it.
		sort.Slice(heads, func(i, j int) bool { return versions[heads[i]].GT(versions[heads[j]]) })
		added := false
		for _, h := range heads[1:] {
			up := upgrader(ch, h, keep, versions)
			if up == "" {
				continue
			}
			keep[up] = true
			added = true
			rep.Extra = append(rep.Extra, Extra{Package: ch.Package, Channel: ch.Name, Bundle: up,
				Why: fmt.Sprintf("upgrades %s, kept, toward the channel's head: without it the channel would have %d heads", h, len(heads))})
		}
		if !added && rng == "" && !headOnly {
			return out, fmt.Errorf("channel %s has %d heads in the source (%s): name the versions to keep", ch.Name, len(heads), strings.Join(heads, ", "))
		}
		if !added {
			return out, fmt.Errorf("channel %s would keep %d heads (%s) and no entry of the source upgrades them to one: widen the range", ch.Name, len(heads), strings.Join(heads, ", "))
		}
	}
}

// cycle is one cycle among the entries of ch in keep (its first entry
// repeated at the end), following replaces and skips; nil when none.
func cycle(ch fbc.Channel, keep map[string]bool) []string {
	next := map[string][]string{}
	for _, e := range ch.Entries {
		if !keep[e.Name] {
			continue
		}
		for _, to := range append([]string{e.Replaces}, e.Skips...) {
			if keep[to] {
				next[e.Name] = append(next[e.Name], to)
			}
		}
	}
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var found []string
	var walk func(n string) bool
	walk = func(n string) bool {
		state[n] = onPath
		path = append(path, n)
		for _, m := range next[n] {
			switch state[m] {
			case onPath:
				for i := range path {
					if path[i] == m {
						found = append(append([]string{}, path[i:]...), m)
						return true
					}
				}
			case unseen:
				if walk(m) {
					return true
				}
			}
		}
		path = path[:len(path)-1]
		state[n] = done
		return false
	}
	for _, e := range ch.Entries {
		if keep[e.Name] && state[e.Name] == unseen && walk(e.Name) {
			return found
		}
	}
	return nil
}

// subset is ch with only the entries in keep, in ch's order.
func subset(ch fbc.Channel, keep map[string]bool) fbc.Channel {
	out := ch
	out.Entries = nil
	for _, e := range ch.Entries {
		if keep[e.Name] {
			out.Entries = append(out.Entries, e)
		}
	}
	return out
}

// upgrader is the lowest-version entry of ch, not kept yet, that
// replaces or skips name.
func upgrader(ch fbc.Channel, name string, keep map[string]bool, versions map[string]semver.Version) string {
	best := ""
	for _, e := range ch.Entries {
		if keep[e.Name] {
			continue
		}
		up := e.Replaces == name
		for _, s := range e.Skips {
			up = up || s == name
		}
		if up && (best == "" || versions[e.Name].LT(versions[best])) {
			best = e.Name
		}
	}
	return best
}

// keepDeprecations drops the entries of an olm.deprecations blob that
// name what was filtered out; false when none is left.
func keepDeprecations(m fbc.Meta, chans, bundles map[[2]string]bool) (fbc.Meta, bool) {
	var d map[string]json.RawMessage
	if json.Unmarshal(m.Blob, &d) != nil {
		return m, true
	}
	var entries []json.RawMessage
	if json.Unmarshal(d["entries"], &entries) != nil {
		return m, true
	}
	var keep []json.RawMessage
	for _, e := range entries {
		var ref struct {
			Reference struct{ Schema, Name string } `json:"reference"`
		}
		if json.Unmarshal(e, &ref) != nil {
			keep = append(keep, e)
			continue
		}
		switch ref.Reference.Schema {
		case fbc.SchemaChannel:
			if !chans[[2]string{m.Package, ref.Reference.Name}] {
				continue
			}
		case fbc.SchemaBundle:
			if !bundles[[2]string{m.Package, ref.Reference.Name}] {
				continue
			}
		}
		keep = append(keep, e)
	}
	if len(keep) == 0 {
		return m, false
	}
	if len(keep) == len(entries) {
		return m, true
	}
	raw, err := json.Marshal(keep)
	if err != nil {
		return m, true
	}
	d["entries"] = raw
	blob, err := json.Marshal(d)
	if err != nil {
		return m, true
	}
	m.Blob = blob
	return m, true
}
