package resolve

import (
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
)

// This file says why, in words: why a bundle was picked, why the bundles
// preferred to it were passed over, and why nothing could be resolved.
// Reasons follow a requirement down its chain ("a requires b >2.0.0,
// which no catalog given has") rather than listing solver clauses.

// maxPassedOver bounds the passed-over bundles a reason lists one by one.
const maxPassedOver = 3

// maxWhyDepth bounds how far a reason follows a chain of requirements.
const maxWhyDepth = 6

// whyNot says why variable id cannot be installed, given the operators
// already set in p (the answer found, or nothing); "" when it finds no
// reason of its own (it fails only in combination with other choices).
func (b *builder) whyNot(p *problem, id int) string {
	return b.whyNotDepth(p, id, 0, map[int]bool{})
}

func (b *builder) whyNotDepth(p *problem, id int, depth int, seen map[int]bool) string {
	v := b.vars[id]
	if v.kind != varBundle {
		return ""
	}
	name := v.e.name
	if v.prohibited != "" {
		return name + " " + v.prohibited
	}
	if depth > maxWhyDepth || seen[id] {
		return ""
	}
	seen[id] = true
	defer delete(seen, id)
	for i, d := range v.deps {
		if len(d) == 0 {
			return fmt.Sprintf("%s requires %s, which %s", name, v.preds[i].words(), b.missing(v.preds[i]))
		}
	}
	for i, d := range v.deps {
		first := ""
		ok := false
		for _, c := range d {
			w := b.whyNotDepth(p, c, depth+1, seen)
			if w == "" {
				ok = true
				break
			}
			if first == "" {
				first = w
			}
		}
		if !ok {
			return fmt.Sprintf("%s requires %s, and nothing that provides it can be installed: %s", name, v.preds[i].words(), first)
		}
	}
	if w := b.clash(p, id); w != "" {
		return w
	}
	return ""
}

// clash finds an operator that must stay or was picked and that id
// cannot be installed beside: one API, one package.
func (b *builder) clash(p *problem, id int) string {
	v := b.vars[id]
	for _, g := range b.vars {
		if g.kind != varGroup {
			continue
		}
		in := false
		for _, x := range g.group {
			if x == id {
				in = true
				break
			}
		}
		if !in {
			continue
		}
		for _, x := range g.group {
			if x == id {
				continue
			}
			o := b.vars[x]
			if o.e.name == v.e.name {
				continue // the same bundle in another channel
			}
			state := ""
			switch {
			case o.mandatory:
				state = "installed " + o.e.name + ", which stays (no Subscription owns it),"
			case p != nil && p.val[x] == 1:
				state = o.e.name + ", which OLM picked,"
			default:
				continue
			}
			if strings.HasPrefix(g.groupWhat, "package ") {
				return fmt.Sprintf("%s would be a second operator of %s beside %s and OLM allows one per namespace", v.e.name, g.groupWhat, strings.TrimSuffix(state, ","))
			}
			return fmt.Sprintf("%s provides %s as does %s and OLM allows one provider of an API per namespace", v.e.name, g.groupWhat, state)
		}
	}
	return ""
}

// missing says where a requirement with no candidate at all fails.
func (b *builder) missing(d predicate) string {
	pp, ok := d.(packagePred)
	if !ok {
		if _, ok := d.(gvkPred); ok {
			return "no catalog given provides"
		}
		return "nothing in the catalogs given matches"
	}
	var have []string
	seen := map[string]bool{}
	var versions []semver.Version
	for _, s := range b.all() {
		for _, e := range s.byPkg[pp.name] {
			if e.version != nil && !seen[e.version.String()] {
				seen[e.version.String()] = true
				versions = append(versions, *e.version)
			}
		}
	}
	if len(versions) == 0 {
		return "no catalog given has"
	}
	sort.Slice(versions, func(i, j int) bool { return versions[i].GT(versions[j]) })
	for i, v := range versions {
		if i == 5 {
			have = append(have, fmt.Sprintf("and %d older", len(versions)-5))
			break
		}
		have = append(have, v.String())
	}
	return fmt.Sprintf("no catalog given has in that range (they have %s %s)", pp.name, strings.Join(have, ", "))
}

// passedOver lists why the candidates before index idx were not taken.
func (b *builder) passedOver(p *problem, cands []int, idx int) []string {
	var out []string
	names := map[string]bool{}
	extra := 0
	for _, c := range cands[:idx] {
		e := b.vars[c].e
		if names[e.name] {
			continue
		}
		names[e.name] = true
		if len(out) == maxPassedOver {
			extra++
			continue
		}
		w := b.whyNot(p, c)
		if w == "" {
			w = e.name + " cannot be installed together with the other operators of the namespace"
		}
		out = append(out, w)
	}
	if extra > 0 {
		out = append(out, fmt.Sprintf("%d more bundle(s) preferred to it were passed over too", extra))
	}
	return out
}

// subscriptionReasons says why the Subscription's bundle is id.
func (b *builder) subscriptionReasons(p *problem, i, id int) []string {
	sub := b.q.Subscriptions[i]
	e := b.vars[id].e
	cands := b.subCands[i]
	idx := 0
	for k, c := range cands {
		if c == id {
			idx = k
			break
		}
	}
	var out []string
	current := b.subCurrent[i]
	switch {
	case current != nil:
		out = append(out, fmt.Sprintf("%s upgrades the installed %s: %s", e.name, current.name, edgeWords(e, current)))
	case sub.StartingCSV != "":
		out = append(out, fmt.Sprintf("%s is the Subscription's startingCSV", e.name))
	case idx == 0:
		out = append(out, fmt.Sprintf("%s is the head of channel %s of package %s in catalog %s", e.name, e.channel, e.pkg, b.snap(e).key.name))
	}
	out = append(out, b.passedOver(p, cands, idx)...)
	if idx > 0 {
		out = append(out, fmt.Sprintf("%s is the newest bundle of channel %s that can be installed", e.name, e.channel))
	}
	return out
}

// edgeWords says how bundle e upgrades the installed one.
func edgeWords(e, current *entry) string {
	var w []string
	if e.replaces == current.name {
		w = append(w, "it replaces "+current.name)
	}
	for _, s := range e.skips {
		if s == current.name {
			w = append(w, "it skips "+current.name)
		}
	}
	if e.skipRange != nil && current.version != nil && e.skipRange(*current.version) {
		w = append(w, fmt.Sprintf("its skipRange %q includes %s", e.skipText, current.version))
	}
	return strings.Join(w, "; ")
}

// stayReasons says why a Subscription gets no new bundle.
func (b *builder) stayReasons(p *problem, i int) []string {
	current := b.subCurrent[i]
	sub := b.q.Subscriptions[i]
	if current == nil {
		return []string{"OLM installs nothing for this Subscription"}
	}
	var cands []int
	for _, c := range b.subCands[i] {
		if b.vars[c].e != current {
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		return []string{fmt.Sprintf("%s stays: no bundle in channel %s replaces it, skips it or has a skipRange including its version", current.name, chanName(sub.Channel))}
	}
	out := []string{fmt.Sprintf("%s stays: every bundle that upgrades it fails", current.name)}
	return append(out, b.passedOver(p, cands, len(cands))...)
}

// dependencyReasons says why OLM adds a dependency.
func (b *builder) dependencyReasons(p *problem, id int, c choice) []string {
	e := b.vars[id].e
	var out []string
	if c.from >= 0 {
		owner := b.vars[c.from]
		what := "one of its requirements"
		if c.dep < len(owner.preds) {
			what = owner.preds[c.dep].words()
		}
		name := ""
		if owner.e != nil {
			name = owner.e.name
			if owner.e.idx.installed {
				name = "installed " + name
			}
		}
		out = append(out, fmt.Sprintf("%s requires %s; %s (channel %s, catalog %s) is the first that meets it", name, what, e.name, e.channel, b.snap(e).key.name))
	}
	idx := 0
	for k, x := range c.candidates {
		if x == id {
			idx = k
			break
		}
	}
	return append(out, b.passedOver(p, c.candidates, idx)...)
}

// unsatisfiable is the answer when OLM finds no combination: every
// Subscription gets nothing, with what stands in its way.
func (b *builder) unsatisfiable() Answer {
	ans := Answer{Operators: []Operator{}, Unsatisfiable: true}
	var namespace []string
	for id, v := range b.vars {
		if v.kind == varBundle && v.mandatory {
			if w := b.whyNot(nil, id); w != "" {
				namespace = append(namespace, "installed "+w+"; OLM resolves nothing in the namespace until that is met")
			}
		}
	}
	for i, sub := range b.q.Subscriptions {
		op := Operator{Package: sub.Package, Channel: sub.Channel, Catalog: sub.Catalog, CatalogNamespace: sub.CatalogNamespace}
		if cat := b.subCatalog[i]; cat != nil {
			op.Catalog, op.CatalogNamespace = cat.key.name, cat.key.namespace
		}
		switch {
		case b.subInvalid[i] != "":
			op.Reasons = []string{b.subInvalid[i]}
		default:
			var cands []int
			for _, c := range b.subCands[i] {
				if b.subCurrent[i] == nil || b.vars[c].e != b.subCurrent[i] {
					cands = append(cands, c)
				}
			}
			if len(cands) == 0 {
				cur := b.subCurrent[i]
				if cur == nil {
					op.Reasons = []string{fmt.Sprintf("no bundle of %s in channel %s can be installed", sub.Package, chanName(sub.Channel))}
					break
				}
				if w := b.whyNot(nil, b.byEntry[cur]); w != "" {
					op.Reasons = []string{"installed " + w}
					break
				}
				op.Reasons = []string{fmt.Sprintf("%s stays (nothing in channel %s upgrades it), but OLM resolves nothing in the namespace while another Subscription fails", cur.name, chanName(sub.Channel))}
				if w := b.pinnedBy(i); w != "" {
					op.Reasons = append(op.Reasons, w)
				}
				break
			}
			var why []string
			alone := false
			for k, c := range cands {
				if k == maxPassedOver {
					why = append(why, fmt.Sprintf("%d more bundle(s) of %s fail too", len(cands)-k, sub.Package))
					break
				}
				w := b.whyNot(nil, c)
				if w == "" {
					alone = true
					if w = b.interaction(i, c); w == "" {
						if blockers := b.failingAlone(i); len(blockers) > 0 {
							// Nothing is wrong with this Subscription: another one
							// fails on its own, and OLM resolves the namespace as a
							// whole. Saying so once is the whole story.
							why = append(why, fmt.Sprintf("%s could be installed on its own, but OLM resolves a namespace's Subscriptions together and installs nothing while the Subscription to %s cannot be met",
								b.vars[c].e.name, strings.Join(blockers, ", ")))
							break
						}
						w = b.vars[c].e.name + " cannot be installed together with what the other Subscriptions and installed operators need"
					}
				}
				why = append(why, w)
			}
			if cur := b.subCurrent[i]; cur != nil && alone {
				why = append(why, cur.name+" stays installed meanwhile")
			}
			op.Reasons = why
		}
		op.Reasons = unique(append(op.Reasons, namespace...))
		ans.Operators = append(ans.Operators, op)
	}
	return ans
}

// failingAlone names the packages of the other Subscriptions that no
// bundle can satisfy whatever else is asked: each of their candidates
// fails for a reason of its own.
func (b *builder) failingAlone(i int) []string {
	var out []string
	for j, sub := range b.q.Subscriptions {
		if j == i {
			continue
		}
		if b.subInvalid[j] != "" {
			out = append(out, sub.Package)
			continue
		}
		var cands []int
		for _, c := range b.subCands[j] {
			if b.subCurrent[j] == nil || b.vars[c].e != b.subCurrent[j] {
				cands = append(cands, c)
			}
		}
		if len(cands) == 0 {
			if b.subCurrent[j] == nil {
				out = append(out, sub.Package)
			}
			continue
		}
		fails := true
		for _, c := range cands {
			if b.whyNot(nil, c) == "" {
				fails = false
				break
			}
		}
		if fails {
			out = append(out, sub.Package)
		}
	}
	return out
}

// interaction looks for what sets candidate c of Subscription i against
// another Subscription: both ask for one package (OLM installs one
// operator of a package in a namespace), or c needs a version of a
// package that every bundle of the other Subscription rules out.
func (b *builder) interaction(i, c int) string {
	v := b.vars[c]
	for j := range b.q.Subscriptions {
		if j == i || b.subInvalid[j] != "" || len(b.subCands[j]) == 0 {
			continue
		}
		other := b.q.Subscriptions[j]
		cj := b.subCands[j]
		if other.Package == v.e.pkg && !contains(cj, c) {
			return fmt.Sprintf("Subscriptions to channels %s and %s both ask for package %s, and OLM installs one operator of a package per namespace", chanName(b.q.Subscriptions[i].Channel), chanName(other.Channel), other.Package)
		}
		for k, d := range v.deps {
			pkgs := packagesOf(b, d)
			if len(pkgs) != 1 {
				continue
			}
			var pkg string
			for pkg = range pkgs {
			}
			all := true
			what := ""
			for _, x := range cj {
				w := b.rulesOut(x, pkg, d)
				if w == "" {
					all = false
					break
				}
				if what == "" {
					what = w
				}
			}
			if all {
				return fmt.Sprintf("%s requires %s, but %s; OLM installs one operator of package %s per namespace", v.e.name, v.preds[k].words(), what, pkg)
			}
		}
	}
	return ""
}

// rulesOut says how bundle x (another Subscription's candidate) rules out
// every bundle of pkg in allowed: x is of pkg and not allowed, or x
// requires pkg only in versions outside allowed.
func (b *builder) rulesOut(x int, pkg string, allowed []int) string {
	v := b.vars[x]
	if v.e.pkg == pkg {
		if contains(allowed, x) {
			return ""
		}
		return fmt.Sprintf("the Subscription to %s has %s", pkg, v.e.name)
	}
	for k, d := range v.deps {
		ps := packagesOf(b, d)
		if len(ps) != 1 || !ps[pkg] {
			continue
		}
		overlap := false
		for _, y := range d {
			if contains(allowed, y) {
				overlap = true
				break
			}
		}
		if !overlap {
			return fmt.Sprintf("%s (another Subscription's) requires %s", v.e.name, v.preds[k].words())
		}
	}
	return ""
}

// pinnedBy explains, for a Subscription that would stay, which other
// Subscription fails.
func (b *builder) pinnedBy(i int) string {
	for j := range b.q.Subscriptions {
		if j == i {
			continue
		}
		for _, c := range b.subCands[j] {
			if w := b.interaction(j, c); w != "" {
				return w
			}
		}
	}
	return ""
}

func packagesOf(b *builder, ids []int) map[string]bool {
	out := map[string]bool{}
	for _, id := range ids {
		out[b.vars[id].e.pkg] = true
	}
	return out
}

func contains(ids []int, x int) bool {
	for _, y := range ids {
		if y == x {
			return true
		}
	}
	return false
}

func unique(ss []string) []string {
	seen := map[string]bool{}
	out := ss[:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// deprecation says that the picked entry's package, channel or bundle is
// deprecated (olm.deprecations), which OLM v0 does not resolve on; "" when
// none is.
func (b *builder) deprecation(e *entry) string {
	var what []string
	for _, d := range e.idx.deprecations[e.pkg] {
		switch {
		case d.Schema == fbc.SchemaPackage:
			what = append(what, fmt.Sprintf("package %s (%s)", e.pkg, d.Message))
		case d.Schema == fbc.SchemaChannel && d.Name == e.channel:
			what = append(what, fmt.Sprintf("channel %s (%s)", e.channel, d.Message))
		case d.Schema == fbc.SchemaBundle && d.Name == e.name:
			what = append(what, fmt.Sprintf("bundle %s (%s)", e.name, d.Message))
		}
	}
	if len(what) == 0 {
		return ""
	}
	return "catalog " + b.snap(e).key.name + " deprecates " + strings.Join(what, ", ") + ": OLM v0 installs it all the same and reports the deprecation in the Subscription's conditions"
}
