package resolve

import "context"

// This file holds the constraint problem OLM v0 builds and the search its
// solver runs over it. OLM's solver does not look for just any solution:
// it walks "choices" in order (each Subscription's candidates, then each
// chosen bundle's dependencies, breadth first), guessing the first
// candidate of each that unit propagation does not refute, backtracking to
// the latest guess when a later one (or the final satisfiability check)
// fails. The installed set is the guesses of the first complete walk that
// is satisfiable. Solve below reproduces that walk, its quirks included:
// a choice whose candidates have all failed is passed over (not a reason
// to backtrack by itself), and keeps its exhausted position when an
// earlier, unrelated guess is retried.

// lit is a literal: variable v as 2v (true) or 2v+1 (false).
type lit int32

func pos(v int) lit       { return lit(2 * v) }
func neg(v int) lit       { return lit(2*v + 1) }
func (l lit) v() int      { return int(l >> 1) }
func (l lit) isNeg() bool { return l&1 == 1 }
func (l lit) not() lit    { return l ^ 1 }

// problem is a set of clauses over boolean variables plus at-most-one
// groups, with unit propagation that can be undone level by level.
type problem struct {
	nvars   int
	clauses [][]lit
	occurs  [][]int32 // per literal: the clauses it appears in
	groups  [][]int   // at-most-one groups of variables
	inGroup [][]int32 // per variable: its groups
	// assignment: 0 unassigned, 1 true, -1 false
	val   []int8
	trail []int
	marks []int // trail length at each level
}

func newProblem(nvars int) *problem {
	return &problem{nvars: nvars, occurs: make([][]int32, 2*nvars), inGroup: make([][]int32, nvars), val: make([]int8, nvars)}
}

func (p *problem) addClause(ls ...lit) {
	c := int32(len(p.clauses))
	p.clauses = append(p.clauses, ls)
	for _, l := range ls {
		p.occurs[l] = append(p.occurs[l], c)
	}
}

func (p *problem) addAtMostOne(vs []int) {
	g := int32(len(p.groups))
	p.groups = append(p.groups, vs)
	for _, v := range vs {
		p.inGroup[v] = append(p.inGroup[v], g)
	}
}

func (p *problem) value(l lit) int8 {
	x := p.val[l.v()]
	if l.isNeg() {
		return -x
	}
	return x
}

// assign sets l true and propagates; false on a conflict (the assignments
// made stay on the trail until the level is undone).
func (p *problem) assign(l lit) bool {
	switch p.value(l) {
	case 1:
		return true
	case -1:
		return false
	}
	queue := []lit{l}
	p.set(l)
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		// Clauses where cur's negation appears may have become unit.
		for _, ci := range p.occurs[cur.not()] {
			unassigned, sat := lit(-1), false
			n := 0
			for _, m := range p.clauses[ci] {
				switch p.value(m) {
				case 1:
					sat = true
				case 0:
					n++
					unassigned = m
				}
				if sat {
					break
				}
			}
			if sat {
				continue
			}
			if n == 0 {
				return false
			}
			if n == 1 {
				p.set(unassigned)
				queue = append(queue, unassigned)
			}
		}
		if !cur.isNeg() {
			for _, g := range p.inGroup[cur.v()] {
				for _, w := range p.groups[g] {
					if w == cur.v() {
						continue
					}
					switch p.val[w] {
					case 1:
						return false
					case 0:
						p.set(neg(w))
						queue = append(queue, neg(w))
					}
				}
			}
		}
	}
	return true
}

func (p *problem) set(l lit) {
	if l.isNeg() {
		p.val[l.v()] = -1
	} else {
		p.val[l.v()] = 1
	}
	p.trail = append(p.trail, l.v())
}

// test opens a level and assumes l: what OLM's solver calls Test.
func (p *problem) test(l lit) bool {
	p.marks = append(p.marks, len(p.trail))
	return p.assign(l)
}

// untest undoes the latest level.
func (p *problem) untest() {
	m := p.marks[len(p.marks)-1]
	p.marks = p.marks[:len(p.marks)-1]
	for _, v := range p.trail[m:] {
		p.val[v] = 0
	}
	p.trail = p.trail[:m]
}

// satisfiable decides whether the current assignment extends to a full
// one, leaving the assignment as it was. Every constraint OLM makes is
// satisfied by setting variables false except where a true variable needs
// a dependency, so the search tries false first.
func (p *problem) satisfiable(ctx context.Context, budget *int) bool {
	*budget--
	if *budget < 0 || ctx.Err() != nil {
		return false
	}
	// Find a clause not yet satisfied.
	for ci, c := range p.clauses {
		sat, open := false, lit(-1)
		for _, m := range c {
			switch p.value(m) {
			case 1:
				sat = true
			case 0:
				if open < 0 || (m.isNeg() && !open.isNeg()) {
					open = m
				}
			}
			if sat {
				break
			}
		}
		if sat {
			continue
		}
		if open < 0 {
			return false
		}
		_ = ci
		for _, l := range []lit{open, open.not()} {
			ok := p.test(l) && p.satisfiable(ctx, budget)
			p.untest()
			if ok {
				return true
			}
		}
		return false
	}
	return true
}

// choice is a list of candidate variables one of which must hold; index
// is the next candidate to try.
type choice struct {
	candidates []int
	index      int
	// from is the variable whose constraint made this choice (-1 for an
	// anchor), dep the index of that constraint among its dependencies.
	from, dep int
}

type guess struct {
	v        int // -1: none made (satisfied already, or candidates exhausted)
	c        choice
	children int
}

// searchResult is what the search found: the guesses in order, with the
// choice each answered.
type searchResult struct {
	sat     bool
	guesses []guess
	// gaveUp: the search took more than maxSearchSteps steps.
	gaveUp bool
}

// maxSearchSteps bounds the search: OLM's problems take a few steps per
// candidate; a catalog built to make the search backtrack without end
// gets an error instead.
const maxSearchSteps = 1 << 22

// dependencies gives, for a variable, its dependency lists in order.
type dependencies func(v int) [][]int

// search runs OLM's solver search from the anchors (its mandatory
// variables, in input order).
func (p *problem) search(ctx context.Context, anchors []int, deps dependencies) searchResult {
	for _, a := range anchors {
		if !p.assign(pos(a)) {
			return searchResult{}
		}
	}
	var queue []choice // unmade choices; front is queue[0]
	for _, a := range anchors {
		queue = append(queue, choice{candidates: []int{a}, from: -1})
	}
	var guesses []guess
	assumed := map[int]bool{}
	unsat := false
	budget := 1 << 16
	for steps := 0; ; steps++ {
		if ctx.Err() != nil {
			return searchResult{}
		}
		if steps > maxSearchSteps || budget < 0 {
			return searchResult{gaveUp: true}
		}
		if len(queue) == 0 && !unsat {
			if p.satisfiable(ctx, &budget) {
				break
			}
			unsat = true
		}
		if unsat {
			if len(guesses) == 0 {
				return searchResult{}
			}
			g := guesses[len(guesses)-1]
			guesses = guesses[:len(guesses)-1]
			if g.v >= 0 {
				delete(assumed, g.v)
				p.untest()
				unsat = false
			}
			queue = queue[:len(queue)-g.children]
			c := g.c
			if g.v >= 0 {
				c.index++
			}
			queue = append([]choice{c}, queue...)
			continue
		}
		c := queue[0]
		queue = queue[1:]
		g := guess{v: -1, c: c}
		if c.index < len(c.candidates) {
			g.v = c.candidates[c.index]
		}
		for _, cand := range c.candidates {
			if assumed[cand] {
				g.v = -1
				break
			}
		}
		if g.v < 0 {
			guesses = append(guesses, g)
			continue
		}
		for i, d := range deps(g.v) {
			if len(d) > 0 {
				g.children++
				queue = append(queue, choice{candidates: d, from: g.v, dep: i})
			}
		}
		guesses = append(guesses, g)
		assumed[g.v] = true
		if !p.test(pos(g.v)) {
			unsat = true
		}
	}
	return searchResult{sat: true, guesses: guesses}
}
