package answertext

import (
	"fmt"
	"strings"

	"github.com/opmkit/opm/internal/printable"
	"github.com/opmkit/opm/internal/resolve"
)

// Extension is a ClusterExtension's answer in the JSON document: its
// name and the installed bundle, then operator-controller's answer.
type Extension struct {
	Name      string `json:"name"`
	Installed string `json:"installed,omitempty"`
	resolve.ExtensionAnswer
}

// ExtensionDocument is the -o json document of opm alpha resolve --olmv1.
type ExtensionDocument struct {
	Extensions []Extension `json:"extensions"`
}

// ExtensionsJSON is the document of the answers (answers[i] answers
// exts[i]).
func ExtensionsJSON(exts []resolve.ClusterExtension, answers []resolve.ExtensionAnswer) ExtensionDocument {
	doc := ExtensionDocument{Extensions: []Extension{}}
	for i, a := range answers {
		e := Extension{Name: exts[i].Name, ExtensionAnswer: a}
		if exts[i].Installed != nil {
			e.Installed = exts[i].Installed.Name
		}
		doc.Extensions = append(doc.Extensions, e)
	}
	return doc
}

// ExtensionsFailed is whether operator-controller resolves no bundle for
// one of the extensions.
func ExtensionsFailed(answers []resolve.ExtensionAnswer) bool {
	for _, a := range answers {
		if a.Bundle == nil {
			return true
		}
	}
	return false
}

// ExtensionsText is each extension's answer: what operator-controller
// installs (or its error), the reasons, then each bundle passed over
// with why.
func ExtensionsText(exts []resolve.ClusterExtension, answers []resolve.ExtensionAnswer) string {
	var b strings.Builder
	for i, a := range answers {
		ext := exts[i]
		if i > 0 {
			b.WriteString("\n")
		}
		name := printable.Name(ext.Name)
		if name == "" {
			name = "(unnamed)"
		}
		fmt.Fprintf(&b, "ClusterExtension %s, package %s, OLM v1:\n", name, printable.Name(a.Package))
		installed := ""
		if ext.Installed != nil {
			installed = ext.Installed.Name
		}
		switch {
		case a.Bundle == nil:
			fmt.Fprintf(&b, "  nothing resolved: %s\n", printable.Text(a.Error))
		case installed == *a.Bundle:
			fmt.Fprintf(&b, "  stays at %s%s\n", printable.Name(*a.Bundle), extFrom(a))
		case installed != "":
			fmt.Fprintf(&b, "  upgrade %s -> %s%s\n", printable.Name(installed), printable.Name(*a.Bundle), extFrom(a))
		default:
			fmt.Fprintf(&b, "  install %s%s\n", printable.Name(*a.Bundle), extFrom(a))
		}
		for _, r := range a.Reasons {
			fmt.Fprintf(&b, "      %s\n", printable.Text(r))
		}
		if len(a.PassedOver) > 0 {
			fmt.Fprintf(&b, "  passed over (%d):\n", len(a.PassedOver))
		}
		for _, p := range a.PassedOver {
			fmt.Fprintf(&b, "    %s (%s, catalog %s): %s\n", printable.Name(p.Bundle), printable.Name(p.Version), printable.Name(p.Catalog), printable.Text(p.Reason))
		}
	}
	return b.String()
}

func extFrom(a resolve.ExtensionAnswer) string {
	dep := ""
	if a.Deprecated {
		dep = ", deprecated"
	}
	return fmt.Sprintf(" (version %s, catalog %s%s)", printable.Name(a.Version), printable.Name(a.Catalog), dep)
}
