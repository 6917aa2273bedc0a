package catalogql

import (
	"fmt"
	"strings"

	"github.com/graphql-go/graphql/language/ast"
)

// Bounds on a document's shape, checked before graphql-go parses or
// validates it. graphql-go's parser, its validation rules and its printer
// recurse over nesting, and its overlapping-fields rule follows fragment
// spreads with no guard against cycles (a fragment that spreads itself
// overflows the stack, which kills the whole process) and once per path
// (a chain of fragments each spreading the next twice costs 2^n). catalogd,
// on the same graphql-go, has none of these bounds; queries within
// catalogd's own limits (depth 10, 500 fields, 50 aliases) stay well
// inside them.
const (
	// maxNesting bounds the braces, brackets and parentheses open at once
	// anywhere in the document (selections, list and object values).
	maxNesting = 256
	// maxFragmentChain bounds the fragments a spread can lead through.
	maxFragmentChain = 32
	// maxExpanded bounds the selections of any operation or fragment with
	// every fragment it spreads written out in its place, each time it is
	// spread: what validation and execution walk.
	maxExpanded = 5000
)

// checkNesting refuses a document nesting braces, brackets or parentheses
// deeper than maxNesting, by scanning its text (strings, block strings and
// comments skipped), before anything recurses over it. A document that does
// not lex is left to the parser to report.
func checkNesting(q string) error {
	depth := 0
	for i := 0; i < len(q); i++ {
		switch c := q[i]; c {
		case '#':
			for i < len(q) && q[i] != '\n' && q[i] != '\r' {
				i++
			}
		case '"':
			if strings.HasPrefix(q[i:], `"""`) {
				end := blockStringEnd(q, i+3)
				if end < 0 {
					return nil
				}
				i = end + 2
				continue
			}
			for i++; i < len(q) && q[i] != '"' && q[i] != '\n'; i++ {
				if q[i] == '\\' {
					i++
				}
			}
		case '{', '[', '(':
			if depth++; depth > maxNesting {
				return fmt.Errorf("query nests more than %d levels of braces, brackets or parentheses: flatten it (at byte %d)", maxNesting, i)
			}
		case '}', ']', ')':
			depth--
		}
	}
	return nil
}

// blockStringEnd is the index of the `"""` closing a block string whose
// text starts at i (`\"""` does not close it), or -1.
func blockStringEnd(q string, i int) int {
	for ; i+2 < len(q); i++ {
		if q[i] == '\\' && strings.HasPrefix(q[i+1:], `"""`) {
			i += 3
			continue
		}
		if strings.HasPrefix(q[i:], `"""`) {
			return i
		}
	}
	return -1
}

// checkFragments refuses, over every definition of the document (used or
// not: validation visits them all), a fragment that spreads itself through
// any path, a spread leading through more than maxFragmentChain fragments,
// and a definition that comes to more than maxExpanded selections once its
// fragments are written out. The cycle's message is the one graphql-go's
// NoFragmentCycles rule would give, had it been reached.
func checkFragments(doc *ast.Document) error {
	g := &fragmentGraph{spreads: map[string][]string{}, own: map[string]int{}}
	var ops []*ast.SelectionSet
	for _, d := range doc.Definitions {
		switch d := d.(type) {
		case *ast.FragmentDefinition:
			if d.Name == nil {
				continue
			}
			// Several definitions of a name are one node: validation reports
			// them, but may follow the spreads of either first.
			n, spreads := countSelections(d.SelectionSet)
			g.own[d.Name.Value] += n
			g.spreads[d.Name.Value] = append(g.spreads[d.Name.Value], spreads...)
			if _, ok := g.order[d.Name.Value]; !ok {
				g.names = append(g.names, d.Name.Value)
				if g.order == nil {
					g.order = map[string]int{}
				}
				g.order[d.Name.Value] = len(g.names)
			}
		case *ast.OperationDefinition:
			ops = append(ops, d.SelectionSet)
		}
	}
	if err := g.acyclic(); err != nil {
		return err
	}
	g.size, g.chain = map[string]int{}, map[string]int{}
	for _, name := range g.names {
		if g.chainOf(name) > maxFragmentChain {
			return fmt.Errorf("fragment %q leads through more than %d fragments: spread fewer fragments within fragments", name, maxFragmentChain)
		}
		if g.sizeOf(name) > maxExpanded {
			return fmt.Errorf("fragment %q comes to more than %d selections with the fragments it spreads written out: spread it less", name, maxExpanded)
		}
	}
	for _, set := range ops {
		n, spreads := countSelections(set)
		for _, s := range spreads {
			n += 1 + g.sizeOf(s)
		}
		if n > maxExpanded {
			return fmt.Errorf("query comes to more than %d selections with its fragments written out where they are spread: spread them less", maxExpanded)
		}
	}
	return nil
}

type fragmentGraph struct {
	names   []string            // in document order
	order   map[string]int      // 1 + index in names
	spreads map[string][]string // the fragments each spreads, directly
	own     map[string]int      // each one's selections, spreads not expanded
	size    map[string]int      // memo of sizeOf
	chain   map[string]int      // memo of chainOf
}

// acyclic finds a cycle of spreads, depth first without recursion (the
// chain may be as long as the document allows).
func (g *fragmentGraph) acyclic() error {
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	type frame struct {
		name string
		next int
	}
	for _, root := range g.names {
		if state[root] != unseen {
			continue
		}
		path := []frame{{name: root}}
		state[root] = onPath
		for len(path) > 0 {
			top := &path[len(path)-1]
			if top.next == len(g.spreads[top.name]) {
				state[top.name] = done
				path = path[:len(path)-1]
				continue
			}
			next := g.spreads[top.name][top.next]
			top.next++
			if _, defined := g.order[next]; !defined {
				continue // unknown fragment: validation names it
			}
			switch state[next] {
			case onPath:
				var via []string
				for i := len(path) - 1; i >= 0 && path[i].name != next; i-- {
					via = append([]string{path[i].name}, via...)
				}
				// graphql-go's NoFragmentCycles words, capital and full stop.
				if len(via) == 0 {
					return fmt.Errorf(`Cannot spread fragment "%s" within itself.`, next) //nolint:staticcheck // graphql-go's message
				}
				return fmt.Errorf(`Cannot spread fragment "%s" within itself via %s.`, next, strings.Join(via, ", ")) //nolint:staticcheck // graphql-go's message
			case unseen:
				state[next] = onPath
				path = append(path, frame{name: next})
			}
		}
	}
	return nil
}

// sizeOf is a fragment's selections with its spreads written out (each
// spread counting one besides), saturating past maxExpanded. The graph is
// acyclic and its chains short when this is called.
func (g *fragmentGraph) sizeOf(name string) int {
	if n, ok := g.size[name]; ok {
		return n
	}
	n := g.own[name]
	for _, s := range g.spreads[name] {
		if _, defined := g.order[s]; defined {
			n += 1 + g.sizeOf(s)
		}
		if n > maxExpanded {
			break
		}
	}
	n = min(n, maxExpanded+1)
	g.size[name] = n
	return n
}

// chainOf is the most fragments a spread of name leads through, itself
// included, saturating past maxFragmentChain.
func (g *fragmentGraph) chainOf(name string) int {
	if n, ok := g.chain[name]; ok {
		return n
	}
	g.chain[name] = maxFragmentChain + 1 // while being computed (no cycles)
	n := 1
	for _, s := range g.spreads[name] {
		if _, defined := g.order[s]; defined {
			n = max(n, 1+g.chainOf(s))
		}
		if n > maxFragmentChain {
			break
		}
	}
	n = min(n, maxFragmentChain+1)
	g.chain[name] = n
	return n
}

// countSelections counts the fields and inline fragments under set (at any
// depth; nesting is bounded by checkNesting) and lists the fragments it
// spreads, once per spread.
func countSelections(set *ast.SelectionSet) (int, []string) {
	n := 0
	var spreads []string
	var walk func(*ast.SelectionSet)
	walk = func(set *ast.SelectionSet) {
		if set == nil {
			return
		}
		for _, sel := range set.Selections {
			switch s := sel.(type) {
			case *ast.Field:
				n++
				walk(s.SelectionSet)
			case *ast.InlineFragment:
				n++
				walk(s.SelectionSet)
			case *ast.FragmentSpread:
				if s.Name != nil {
					spreads = append(spreads, s.Name.Value)
				}
			}
		}
	}
	walk(set)
	return n, spreads
}
