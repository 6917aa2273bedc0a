package resolve

import (
	"context"
	"reflect"
	"testing"
)

// picked lists the variables the search guessed, in order.
func picked(r searchResult) []int {
	var out []int
	for _, g := range r.guesses {
		if g.v >= 0 {
			out = append(out, g.v)
		}
	}
	return out
}

// The search takes candidates in order, backs off a candidate whose
// dependencies cannot be met, and walks choices breadth first.
func TestSearchOrder(t *testing.T) {
	// 0: subscription; 1, 2: its candidates; 3: what 1 needs (prohibited);
	// 4: what 2 needs.
	deps := map[int][][]int{0: {{1, 2}}, 1: {{3}}, 2: {{4}}}
	p := newProblem(5)
	p.addClause(neg(0), pos(1), pos(2))
	p.addClause(neg(1), pos(3))
	p.addClause(neg(2), pos(4))
	if !p.assign(neg(3)) {
		t.Fatal("baseline")
	}
	r := p.search(context.Background(), []int{0}, func(v int) [][]int { return deps[v] })
	if !r.sat || !reflect.DeepEqual(picked(r), []int{0, 2, 4}) {
		t.Fatalf("got %v %v, want [0 2 4]", r.sat, picked(r))
	}
}

// Two anchors compete for one package: the first anchor's first candidate
// wins; the second takes what is left.
func TestSearchAtMostOne(t *testing.T) {
	// 0, 1: subscriptions; 2, 3: candidates of 0; 4: candidate of 1;
	// 2 and 4 are one package.
	deps := map[int][][]int{0: {{2, 3}}, 1: {{4}}}
	p := newProblem(5)
	p.addClause(neg(0), pos(2), pos(3))
	p.addClause(neg(1), pos(4))
	p.addAtMostOne([]int{2, 4})
	r := p.search(context.Background(), []int{0, 1}, func(v int) [][]int { return deps[v] })
	if !r.sat || !reflect.DeepEqual(picked(r), []int{0, 1, 3, 4}) {
		t.Fatalf("got %v %v, want [0 1 3 4]", r.sat, picked(r))
	}
}

// Nothing satisfies: the search says so.
func TestSearchUnsatisfiable(t *testing.T) {
	deps := map[int][][]int{0: {{1}}}
	p := newProblem(2)
	p.addClause(neg(0), pos(1))
	p.addClause(neg(1))
	if !p.assign(neg(1)) {
		t.Fatal("baseline")
	}
	if r := p.search(context.Background(), []int{0}, func(v int) [][]int { return deps[v] }); r.sat {
		t.Fatalf("got %v, want unsatisfiable", picked(r))
	}
}
