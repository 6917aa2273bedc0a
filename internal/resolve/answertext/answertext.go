// Package answertext writes OLM v0 resolver answers for people (text) and
// scripts (the -o json document of opm alpha resolve), and says whether an
// answer is a failure.
package answertext

import (
	"fmt"
	"strings"

	"github.com/opmkit/opm/internal/printable"
	"github.com/opmkit/opm/internal/resolve"
)

// Failed is whether a namespace does not resolve, or a Subscription
// without an installed CSV gets no bundle (answers[i] answers qs[i]).
func Failed(qs []resolve.Question, answers []resolve.Answer) bool {
	for i, a := range answers {
		if a.Unsatisfiable {
			return true
		}
		for _, op := range a.Operators {
			if op.Bundle == nil && !op.Dependency && InstalledCSV(qs[i], op.Package) == "" {
				return true
			}
		}
	}
	return false
}

// InstalledCSV is the installed CSV of the Subscription to pkg in q, "".
func InstalledCSV(q resolve.Question, pkg string) string {
	for _, s := range q.Subscriptions {
		if s.Package == pkg {
			return s.InstalledCSV
		}
	}
	return ""
}

// Operator is an operator of the JSON document: the resolver's, with its
// namespace and the CSV installed now.
type Operator struct {
	Namespace string `json:"namespace"`
	resolve.Operator
	Installed string `json:"installed,omitempty"`
}

// Document is the JSON document: {"operators": [...]}, namespace by
// namespace; reasons are never null.
type Document struct {
	Operators []Operator `json:"operators"`
}

// JSON is the document of the answers.
func JSON(qs []resolve.Question, answers []resolve.Answer) Document {
	ops := []Operator{}
	for i, a := range answers {
		for _, op := range a.Operators {
			if op.Reasons == nil {
				op.Reasons = []string{}
			}
			ops = append(ops, Operator{Namespace: qs[i].Namespace, Operator: op, Installed: InstalledCSV(qs[i], op.Package)})
		}
	}
	return Document{ops}
}

// Text is each namespace's answer: a heading, then per operator what OLM
// does and, indented, the reasons.
func Text(qs []resolve.Question, answers []resolve.Answer) string {
	var b strings.Builder
	for i, a := range answers {
		q := qs[i]
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "namespace %s", printable.Name(q.Namespace))
		if a.Unsatisfiable {
			b.WriteString(": OLM resolves nothing (its constraints cannot all be satisfied)")
		}
		b.WriteString(":\n")
		for _, op := range a.Operators {
			b.WriteString(OperatorLine(q, op))
			for _, r := range op.Reasons {
				fmt.Fprintf(&b, "      %s\n", printable.Text(r))
			}
		}
	}
	return b.String()
}

// OperatorLine is what OLM does for one operator of q's answer:
// "  PKG: install|upgrade X -> Y|stays at X|nothing installed (channel C,
// catalog N)\n".
func OperatorLine(q resolve.Question, op resolve.Operator) string {
	name := printable.Name(op.Package)
	if op.Dependency {
		name += " (dependency)"
	}
	installed := InstalledCSV(q, op.Package)
	switch {
	case op.Bundle == nil && installed != "":
		return fmt.Sprintf("  %s: stays at %s\n", name, printable.Name(installed))
	case op.Bundle == nil:
		return fmt.Sprintf("  %s: nothing installed\n", name)
	case installed != "" && installed != *op.Bundle:
		return fmt.Sprintf("  %s: upgrade %s -> %s%s\n", name, printable.Name(installed), printable.Name(*op.Bundle), From(op, q.Namespace))
	case installed != "":
		return fmt.Sprintf("  %s: stays at %s%s\n", name, printable.Name(*op.Bundle), From(op, q.Namespace))
	}
	return fmt.Sprintf("  %s: install %s%s\n", name, printable.Name(*op.Bundle), From(op, q.Namespace))
}

// From is where an operator's bundle comes from: " (channel C, catalog
// N)", a catalog of namespace ns written NS/N.
func From(op resolve.Operator, ns string) string {
	cat := op.Catalog
	if op.CatalogNamespace != "" && op.CatalogNamespace == ns {
		// A namespace-local catalog; global ones go by name.
		cat = op.CatalogNamespace + "/" + cat
	}
	return fmt.Sprintf(" (channel %s, catalog %s)", printable.Name(op.Channel), printable.Name(cat))
}
