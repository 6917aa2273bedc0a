package catalogql

import (
	"fmt"

	"github.com/graphql-go/graphql/language/ast"
	"github.com/graphql-go/graphql/language/parser"
)

// catalogd's bounds on a query, checked before it runs.
const (
	maxDepth   = 10
	maxAliases = 50
	maxFields  = 500
)

// checkComplexity refuses a query that does not parse, nests selections
// deeper than maxDepth, or selects more than maxFields fields or maxAliases
// aliases in all (each operation counting the fragments it spreads once),
// with catalogd's messages; and, before graphql-go parses or validates it,
// a document of a shape it would recurse on without bound (shape.go).
func checkComplexity(query string) error {
	if err := checkNesting(query); err != nil {
		return err
	}
	doc, err := parser.Parse(parser.ParseParams{Source: query})
	if err != nil {
		return fmt.Errorf("query parse error: %w", err)
	}
	if err := checkOperations(doc); err != nil {
		return err
	}
	return checkFragments(doc)
}

// checkOperations is catalogd's own walk of the operations.
func checkOperations(doc *ast.Document) error {
	w := &walker{fragments: map[string]*ast.FragmentDefinition{}}
	for _, d := range doc.Definitions {
		if f, ok := d.(*ast.FragmentDefinition); ok {
			w.fragments[f.Name.Value] = f
		}
	}
	for _, d := range doc.Definitions {
		if op, ok := d.(*ast.OperationDefinition); ok {
			w.spread = map[string]bool{}
			if err := w.walk(op.SelectionSet, 1); err != nil {
				return err
			}
		}
	}
	return nil
}

type walker struct {
	fields, aliases int
	fragments       map[string]*ast.FragmentDefinition
	spread          map[string]bool // in the current operation
}

func (w *walker) walk(set *ast.SelectionSet, depth int) error {
	if set == nil {
		return nil
	}
	if depth > maxDepth {
		return fmt.Errorf("query exceeds maximum depth of %d", maxDepth)
	}
	for _, sel := range set.Selections {
		var next *ast.SelectionSet
		switch s := sel.(type) {
		case *ast.Field:
			if w.fields++; w.fields > maxFields {
				return fmt.Errorf("query exceeds maximum field count of %d", maxFields)
			}
			if s.Alias != nil && s.Alias.Value != "" {
				if w.aliases++; w.aliases > maxAliases {
					return fmt.Errorf("query exceeds maximum alias count of %d", maxAliases)
				}
			}
			next = s.SelectionSet
		case *ast.InlineFragment:
			next = s.SelectionSet
		case *ast.FragmentSpread:
			if w.spread[s.Name.Value] {
				continue
			}
			w.spread[s.Name.Value] = true
			f, ok := w.fragments[s.Name.Value]
			if !ok {
				continue
			}
			next = f.SelectionSet
		}
		if err := w.walk(next, depth+1); err != nil {
			return err
		}
	}
	return nil
}
