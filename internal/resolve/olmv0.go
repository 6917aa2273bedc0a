package resolve

import (
	"context"
	"fmt"
)

// Resolve answers what OLM v0's resolver does for one namespace: which
// bundle each Subscription installs or upgrades to, which operators come
// with them as dependencies, or that nothing can be resolved, with the
// reasons in words.
//
// It follows OLM's rules: a Subscription's candidates are the bundles of
// its channel (all channels, the default first, when it names none) in
// the catalog it names, from the channel head down the replaces chain
// (bundles another skips are never candidates), or its startingCSV; a
// Subscription with an installed CSV may move only to a bundle that
// replaces, skips or has a skipRange including it, and otherwise stays.
// Dependencies (olm.package.required, olm.gvk.required, olm.label.required
// and olm.constraint) are met first by installed CSVs, then from the
// requiring bundle's own catalog, then from the others by priority. No two
// operators may provide one API or come from one package; installed CSVs no
// Subscription owns must stay. OLM picks, in that preference order, the
// first combination its search finds (see solver.go), and fails the whole
// namespace when none exists.
//
// What OLM itself fails with is an Answer with Unsatisfiable set; Resolve
// returns an error only when ctx ends or its search gives up (a problem
// built to make it try combinations without end).
func Resolve(ctx context.Context, q Question) (Answer, error) {
	if len(q.Subscriptions) == 0 && len(q.Installed) == 0 {
		return Answer{Operators: []Operator{}}, nil
	}
	b := newBuilder(q)
	// Installed CSVs first, as OLM does: they and their dependencies.
	b.expand(append([]*entry(nil), b.existing.entries...))
	for i, sub := range q.Subscriptions {
		b.subscriptionVars(i, sub)
	}
	if len(b.errs) > 0 {
		return b.failed(uniqueErrors(b.errs)), nil
	}
	b.invariants()
	p, anchors, units := b.problem()
	for _, u := range units {
		if !p.assign(u) {
			return b.unsatisfiable(), nil
		}
	}
	res := p.search(ctx, anchors, func(v int) [][]int { return b.vars[v].deps })
	if err := ctx.Err(); err != nil {
		return Answer{}, fmt.Errorf("%w: %w", errCancelled, err)
	}
	if res.gaveUp {
		return Answer{}, fmt.Errorf("the search for OLM's answer gave up after %d steps: the catalogs' requirements make too many combinations to try", maxSearchSteps)
	}
	if !res.sat {
		return b.unsatisfiable(), nil
	}
	return b.answer(p, res), nil
}

func newBuilder(q Question) *builder {
	ns := q.Namespace
	if ns == "" {
		ns = "default"
	}
	global := q.GlobalNamespace
	if global == "" {
		global = GlobalNamespace
	}
	b := &builder{q: q, ns: ns, byEntry: map[*entry]int{}, depCache: map[depKey]depResult{}, snapOf: map[*catalogIndex]*snapshot{}}
	for i, c := range q.Catalogs {
		cns := c.Namespace
		if cns == "" {
			cns = global
		}
		if cns != ns && cns != global {
			// A CatalogSource in another namespace is invisible here.
			continue
		}
		idx := indexOf(c.Catalog)
		if _, twice := b.snapOf[idx]; twice {
			// One catalog given under two names: each its own entries.
			idx = buildIndex(c.Catalog)
		}
		s := &snapshot{catalogIndex: idx, key: sourceKey{c.Name, cns}, priority: c.Priority, order: i}
		b.snapOf[idx] = s
		b.catalogs = append(b.catalogs, s)
	}
	b.existing = &snapshot{catalogIndex: newIndex(), key: sourceKey{existingName, ns}, order: -1}
	b.existing.installed = true
	b.snapOf[b.existing.catalogIndex] = b.existing
	owned := map[string]bool{}
	for _, s := range q.Subscriptions {
		if s.InstalledCSV != "" {
			owned[s.InstalledCSV] = true
		}
	}
	seen := map[string]bool{}
	for _, in := range q.Installed {
		if seen[in.CSV] {
			continue
		}
		seen[in.CSV] = true
		e := installedEntry(in, b.catalogs)
		e.subscribed = owned[in.CSV]
		b.existing.add(e)
	}
	// A Subscription's installed CSV is on the cluster even when the
	// question lists only the Subscription.
	for _, s := range q.Subscriptions {
		if s.InstalledCSV == "" || seen[s.InstalledCSV] {
			continue
		}
		seen[s.InstalledCSV] = true
		e := installedEntry(Installed{Package: s.Package, CSV: s.InstalledCSV}, b.catalogs)
		e.subscribed = true
		b.existing.add(e)
	}
	n := len(q.Subscriptions)
	b.subCands = make([][]int, n)
	b.subCurrent = make([]*entry, n)
	b.subCatalog = make([]*snapshot, n)
	b.subInvalid = make([]string, n)
	b.subVar = make([]int, n)
	return b
}

func uniqueErrors(errs []error) []error {
	seen := map[string]bool{}
	var out []error
	for _, e := range errs {
		if !seen[e.Error()] {
			seen[e.Error()] = true
			out = append(out, e)
		}
	}
	return out
}

// answer turns the search's guesses into operators.
func (b *builder) answer(p *problem, res searchResult) Answer {
	chosenBy := map[int]choice{}
	var chosen []int
	for _, g := range res.guesses {
		if g.v < 0 {
			continue
		}
		v := b.vars[g.v]
		if v.kind != varBundle || v.e.idx.installed {
			continue
		}
		if _, ok := chosenBy[g.v]; ok {
			continue
		}
		chosenBy[g.v] = g.c
		chosen = append(chosen, g.v)
	}
	ans := Answer{Operators: []Operator{}}
	taken := map[int]bool{}
	for i, sub := range b.q.Subscriptions {
		op := Operator{Package: sub.Package, Channel: sub.Channel, Catalog: sub.Catalog, CatalogNamespace: sub.CatalogNamespace}
		if cat := b.subCatalog[i]; cat != nil {
			op.Catalog, op.CatalogNamespace = cat.key.name, cat.key.namespace
		}
		for _, id := range chosen {
			if !taken[id] && b.subscriptionOwns(i, b.vars[id].e) {
				taken[id] = true
				e := b.vars[id].e
				name := e.name
				op.Bundle = &name
				op.Channel = e.channel
				op.Catalog, op.CatalogNamespace = b.snap(e).key.name, b.snap(e).key.namespace
				op.Reasons = b.subscriptionReasons(p, i, id)
				if w := b.deprecation(e); w != "" {
					op.Reasons = append(op.Reasons, w)
				}
				break
			}
		}
		if op.Bundle == nil {
			op.Reasons = b.stayReasons(p, i)
		}
		ans.Operators = append(ans.Operators, op)
	}
	for _, id := range chosen {
		if taken[id] {
			continue
		}
		e := b.vars[id].e
		name := e.name
		reasons := b.dependencyReasons(p, id, chosenBy[id])
		if w := b.deprecation(e); w != "" {
			reasons = append(reasons, w)
		}
		ans.Operators = append(ans.Operators, Operator{
			Package: e.pkg, Bundle: &name, Channel: e.channel,
			Catalog: b.snap(e).key.name, CatalogNamespace: b.snap(e).key.namespace,
			Dependency: true, Reasons: reasons,
		})
	}
	return ans
}

// subscriptionOwns is OLM's test for a resolved bundle being a
// Subscription's (rather than a dependency that gets a Subscription of its
// own): same package, the Subscription's channel if it names one, and its
// catalog.
func (b *builder) subscriptionOwns(i int, e *entry) bool {
	sub := b.q.Subscriptions[i]
	if e.pkg != sub.Package {
		return false
	}
	if sub.Channel != "" && e.channel != sub.Channel {
		return false
	}
	return b.subCatalog[i] == nil || b.subCatalog[i] == b.snap(e)
}

// failed is the answer when OLM's resolver returns an error before
// solving (a catalog it cannot order, a property it cannot parse).
func (b *builder) failed(errs []error) Answer {
	ans := Answer{Operators: []Operator{}, Unsatisfiable: true}
	msg := "OLM cannot resolve the namespace: " + joinErrors(errs)
	for i, sub := range b.q.Subscriptions {
		op := Operator{Package: sub.Package, Channel: sub.Channel, Catalog: sub.Catalog, CatalogNamespace: sub.CatalogNamespace}
		if cat := b.subCatalog[i]; cat != nil {
			op.Catalog, op.CatalogNamespace = cat.key.name, cat.key.namespace
		}
		op.Reasons = []string{msg}
		ans.Operators = append(ans.Operators, op)
	}
	return ans
}
