package resolve

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// propertyDeprecated is the legacy property that makes OLM refuse a
// bundle (sqlite catalogs' deprecated bundles carry it).
const propertyDeprecated = "olm.deprecated"

type varKind int

const (
	varBundle varKind = iota
	varSubscription
	varGroup
)

// variable is one of OLM's solver variables: a bundle (in one channel of
// one catalog, or installed), a Subscription, or an at-most-one group
// (one provider per API, one operator per package).
type variable struct {
	kind varKind
	e    *entry
	sub  int
	// deps are the dependency lists in constraint order; preds says what
	// each asks for (nil for a Subscription's candidates).
	deps  [][]int
	preds []predicate
	// mandatory: an anchor. prohibited: never installable.
	mandatory  bool
	prohibited string
	conflicts  []int
	group      []int
	groupWhat  string
}

// builder makes OLM's variables for one question, in OLM's order.
type builder struct {
	q        Question
	ns       string
	existing *snapshot
	catalogs []*snapshot
	vars     []*variable
	byEntry  map[*entry]int
	snapOf   map[*catalogIndex]*snapshot
	errs     []error
	depCache map[depKey]depResult
	// per Subscription: its candidates in preference order, the
	// installed entry it upgrades from (nil for a fresh one), the catalog
	// its candidates come from, and why it has none.
	subCands   [][]int
	subCurrent []*entry
	subCatalog []*snapshot
	subInvalid []string
	subVar     []int
}

type depKey struct {
	snap *snapshot
	key  string
}

type depResult struct {
	cands []*entry
	err   error
}

// all lists every snapshot the namespace sees: its installed CSVs, then
// the catalogs.
func (b *builder) all() []*snapshot {
	return append([]*snapshot{b.existing}, b.catalogs...)
}

// snap is the catalog (as this question names it) an entry comes from.
func (b *builder) snap(e *entry) *snapshot { return b.snapOf[e.idx] }

func (b *builder) newVar(v *variable) int {
	b.vars = append(b.vars, v)
	return len(b.vars) - 1
}

// bundleVar makes the variable of an entry, without its dependencies.
func (b *builder) bundleVar(e *entry) (int, bool) {
	if id, ok := b.byEntry[e]; ok {
		return id, false
	}
	v := &variable{kind: varBundle, e: e}
	if e.idx == b.existing.catalogIndex && !e.subscribed {
		v.mandatory = true
	}
	for _, p := range e.props {
		if p.typ == propertyDeprecated {
			v.prohibited = "is deprecated (it carries the olm.deprecated property)"
			break
		}
	}
	id := b.newVar(v)
	b.byEntry[e] = id
	return id, true
}

// expand makes the variables of stack's entries and, transitively, of
// every bundle that could satisfy one of their dependencies, as OLM does;
// it returns the variables of stack's entries.
func (b *builder) expand(stack []*entry) []int {
	initial := make([]int, 0, len(stack))
	for _, e := range stack {
		id, _ := b.bundleVar(e)
		initial = append(initial, id)
	}
	done := map[int]bool{}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		id, _ := b.bundleVar(e)
		if done[id] || b.vars[id].deps != nil {
			continue
		}
		done[id] = true
		e.idx.mu.Lock()
		reqs, err := requirements(e)
		e.idx.mu.Unlock()
		if err != nil {
			b.errs = append(b.errs, err)
			continue
		}
		v := b.vars[id]
		v.deps = make([][]int, 0, len(reqs))
		for _, r := range reqs {
			d := r.pred
			cands, err := b.dependencyCandidates(e, r)
			if err != nil {
				b.errs = append(b.errs, err)
				continue
			}
			ids := make([]int, 0, len(cands))
			for _, c := range cands {
				cid, _ := b.bundleVar(c)
				ids = append(ids, cid)
				stack = append(stack, c)
			}
			v.deps = append(v.deps, ids)
			v.preds = append(v.preds, d)
		}
	}
	return initial
}

// dependencyCandidates lists the entries that satisfy d for bundle e, in
// OLM's order: installed CSVs first, then e's own catalog, then the others
// by priority (higher first), the namespace's own catalogs before global
// ones, then by name; within a catalog, default channels first, then by
// package and channel name; within a channel, from the head down.
func (b *builder) dependencyCandidates(e *entry, r requirement) ([]*entry, error) {
	own := b.snap(e)
	key := depKey{snap: own, key: r.key}
	if r, ok := b.depCache[key]; ok {
		return r.cands, r.err
	}
	var out []*entry
	var err error
	for _, s := range b.preferred(own) {
		var found []*entry
		if found, err = satisfiersIn(s.catalogIndex, r); err != nil {
			break
		}
		out = append(out, found...)
	}
	if err != nil {
		out = nil
	}
	b.depCache[key] = depResult{out, err}
	return out, err
}

// satisfiersIn lists the entries of one catalog that satisfy r, in OLM's
// order within a catalog; the answer is kept for the next question.
func satisfiersIn(s *catalogIndex, r requirement) ([]*entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.sats[r.key]; ok {
		return c.cands, c.err
	}
	out, err := findSatisfiers(s, r.pred)
	s.sats[r.key] = depResult{out, err}
	return out, err
}

func findSatisfiers(s *catalogIndex, d predicate) ([]*entry, error) {
	names, all := d.packages(s)
	var pool []*entry
	if cp, ok := d.(celPred); ok && cp.hint != "" {
		pool = s.namingPackage(cp.hint)
	} else if all {
		pool = s.entries
	} else {
		seen := map[string]bool{}
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				pool = append(pool, s.byPkg[n]...)
			}
		}
	}
	type group struct {
		pc  pkgChan
		def bool
	}
	groups := map[pkgChan]bool{}
	var order []group
	matched := map[*entry]bool{}
	for _, e := range pool {
		if !d.test(e) {
			continue
		}
		matched[e] = true
		pc := pkgChan{e.pkg, e.channel}
		if !groups[pc] {
			groups[pc] = true
			order = append(order, group{pc, e.isDefault})
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, c := order[i], order[j]
		if a.def != c.def {
			return a.def
		}
		if a.pc.pkg != c.pc.pkg {
			return a.pc.pkg < c.pc.pkg
		}
		return a.pc.channel < c.pc.channel
	})
	var out []*entry
	for _, g := range order {
		var chain []*entry
		var err error
		if s.installed {
			// Installed CSVs: the group is the matching CSVs of the
			// package, none of which replaces another.
			var members []*entry
			for _, e := range s.byPkg[g.pc.pkg] {
				if matched[e] {
					members = append(members, e)
				}
			}
			chain, err = sortChannel(members)
		} else {
			chain, err = s.chain(g.pc)
		}
		if err != nil {
			return nil, err
		}
		for _, e := range chain {
			if matched[e] {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// preferred orders the snapshots for a bundle of catalog own.
func (b *builder) preferred(own *snapshot) []*snapshot {
	out := b.all()
	sort.SliceStable(out, func(i, j int) bool {
		a, c := out[i], out[j]
		if a.key.existing() != c.key.existing() {
			return a.key.existing()
		}
		if (a == own) != (c == own) {
			return a == own
		}
		if a.priority != c.priority {
			return a.priority > c.priority
		}
		if (a.key.namespace == b.ns) != (c.key.namespace == b.ns) {
			return a.key.namespace == b.ns
		}
		if a.key.name != c.key.name {
			return a.key.name < c.key.name
		}
		return a.order < c.order
	})
	return out
}

// subscriptionVars makes a Subscription's variable and its candidates'.
func (b *builder) subscriptionVars(i int, sub Subscription) {
	b.subCurrent[i] = nil
	var current *entry
	if sub.InstalledCSV != "" {
		// Several installed CSVs cannot share a name in a namespace.
		for _, e := range b.existing.byName[sub.InstalledCSV] {
			current = e
			break
		}
	}
	sv := &variable{kind: varSubscription, sub: i, mandatory: true}
	id := b.newVar(sv)
	b.subVar[i] = id
	b.subCurrent[i] = current

	cat := b.subscriptionCatalog(sub)
	b.subCatalog[i] = cat
	starting := ""
	if current == nil {
		starting = sub.StartingCSV
	}
	var entries []*entry
	npkg, nch, ncsv := 0, 0, 0
	if cat != nil {
		for _, e := range cat.byPkg[sub.Package] {
			npkg++
			if sub.Channel != "" && e.channel != sub.Channel {
				continue
			}
			nch++
			if starting != "" && e.name != starting {
				continue
			}
			ncsv++
			entries = append(entries, e)
		}
	}
	switch {
	case cat == nil || len(cat.entries) == 0:
		sv.prohibited = fmt.Sprintf("no catalog %s visible from namespace %s has any bundle", subCatalogName(sub), b.ns)
	case npkg == 0:
		sv.prohibited = fmt.Sprintf("catalog %s has no package %s", cat.key.name, sub.Package)
	case nch == 0:
		sv.prohibited = fmt.Sprintf("package %s has no channel %s in catalog %s", sub.Package, sub.Channel, cat.key.name)
	case ncsv == 0:
		sv.prohibited = fmt.Sprintf("channel %s of package %s in catalog %s has no bundle %s (the startingCSV)", chanName(sub.Channel), sub.Package, cat.key.name, starting)
	}
	if sv.prohibited != "" {
		b.subInvalid[i] = sv.prohibited
		return
	}

	// Default channel first, then by channel name; each channel from its
	// head down.
	sort.SliceStable(entries, func(a, c int) bool {
		if entries[a].isDefault != entries[c].isDefault {
			return entries[a].isDefault
		}
		return entries[a].channel < entries[c].channel
	})
	var sorted []*entry
	for lo := 0; lo < len(entries); {
		hi := lo
		for hi < len(entries) && entries[hi].channel == entries[lo].channel {
			hi++
		}
		var chain []*entry
		var err error
		if starting == "" {
			cat.mu.Lock()
			chain, err = cat.chain(pkgChan{sub.Package, entries[lo].channel})
			cat.mu.Unlock()
		} else {
			chain, err = sortChannel(entries[lo:hi])
		}
		if err != nil {
			b.errs = append(b.errs, err)
			return
		}
		sorted = append(sorted, chain...)
		lo = hi
	}
	var cands []int
	seen := map[int]bool{}
	for _, o := range sorted {
		if current != nil && !upgrades(o, current) {
			continue
		}
		var stack []*entry
		for _, e := range entries {
			if e.name == o.name {
				stack = append(stack, e)
			}
		}
		for _, cid := range b.expand(stack) {
			if !seen[cid] {
				seen[cid] = true
				cands = append(cands, cid)
			}
		}
	}
	if current != nil {
		cur := b.byEntry[current]
		for _, c := range cands {
			b.vars[c].conflicts = append(b.vars[c].conflicts, cur)
		}
		cands = append(cands, cur)
	}
	b.subCands[i] = cands
	sv.deps = [][]int{cands}
}

// upgrades is OLM's test for a bundle that may replace the installed one:
// its skipRange includes the installed version, or it replaces or skips
// the installed CSV by name.
func upgrades(o, current *entry) bool {
	if o.skipRange != nil && current.version != nil && o.skipRange(*current.version) {
		return true
	}
	if o.replaces == current.name {
		return true
	}
	for _, s := range o.skips {
		if s == current.name {
			return true
		}
	}
	return false
}

func chanName(c string) string {
	if c == "" {
		return "(any)"
	}
	return c
}

func subCatalogName(sub Subscription) string {
	if sub.CatalogNamespace != "" {
		return sub.CatalogNamespace + "/" + sub.Catalog
	}
	return sub.Catalog
}

// subscriptionCatalog finds the catalog a Subscription names: by name and
// namespace; by name alone when it gives no namespace; the first catalog
// given that has the package when it names none.
func (b *builder) subscriptionCatalog(sub Subscription) *snapshot {
	for _, s := range b.catalogs {
		if sub.Catalog == "" {
			if len(s.byPkg[sub.Package]) > 0 {
				return s
			}
			continue
		}
		if s.key.name == sub.Catalog && (sub.CatalogNamespace == "" || sub.CatalogNamespace == s.key.namespace) {
			return s
		}
	}
	return nil
}

// invariants adds OLM's two rules over all bundle variables: at most one
// provider of each API, at most one operator of each package.
func (b *builder) invariants() {
	gvks := map[GVK][]int{}
	var gvkOrder []GVK
	pkgs := map[string][]int{}
	var pkgOrder []string
	n := len(b.vars)
	for id := 0; id < n; id++ {
		v := b.vars[id]
		if v.kind != varBundle {
			continue
		}
		for _, g := range v.e.provides {
			if _, ok := gvks[g]; !ok {
				gvkOrder = append(gvkOrder, g)
			}
			gvks[g] = append(gvks[g], id)
		}
		for _, name := range v.e.packages {
			if _, ok := pkgs[name]; !ok {
				pkgOrder = append(pkgOrder, name)
			}
			pkgs[name] = append(pkgs[name], id)
		}
	}
	for _, g := range gvkOrder {
		if ids := gvks[g]; len(ids) > 1 {
			b.newVar(&variable{kind: varGroup, mandatory: true, group: ids, groupWhat: fmt.Sprintf("%s (%s/%s)", g.Kind, g.Group, g.Version)})
		}
	}
	for _, p := range pkgOrder {
		if ids := pkgs[p]; len(ids) > 1 {
			b.newVar(&variable{kind: varGroup, mandatory: true, group: ids, groupWhat: "package " + p})
		}
	}
}

// problem turns the variables into clauses.
func (b *builder) problem() (*problem, []int, []lit) {
	p := newProblem(len(b.vars))
	var anchors []int
	var units []lit
	for id, v := range b.vars {
		if v.mandatory {
			anchors = append(anchors, id)
		}
		if v.prohibited != "" {
			units = append(units, neg(id))
		}
		for _, d := range v.deps {
			if len(d) == 0 {
				units = append(units, neg(id))
				continue
			}
			c := make([]lit, 0, len(d)+1)
			c = append(c, neg(id))
			for _, x := range d {
				c = append(c, pos(x))
			}
			p.addClause(c...)
		}
		if v.kind == varSubscription && v.deps == nil && v.prohibited == "" {
			units = append(units, neg(id))
		}
		for _, x := range v.conflicts {
			p.addClause(neg(id), neg(x))
		}
		if len(v.group) > 1 {
			p.addAtMostOne(v.group)
		}
	}
	return p, anchors, units
}

var errCancelled = errors.New("resolution cancelled")

func joinErrors(errs []error) string {
	s := make([]string, len(errs))
	for i, e := range errs {
		s[i] = e.Error()
	}
	return strings.Join(s, "; ")
}
