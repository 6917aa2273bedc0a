package validate

import (
	"fmt"
	"strings"
)

// CatalogMarkdown renders the rule catalog as the Markdown table that
// docs/validation.md carries between its BEGIN/END RULES markers.
func CatalogMarkdown() string {
	var b strings.Builder
	for _, r := range Rules() {
		fmt.Fprintf(&b, "### `%s`\n\n", r.ID)
		fmt.Fprintf(&b, "- **Severity:** %s\n", r.Severity)
		fmt.Fprintf(&b, "- **Applies to:** %s\n", scopeText(r))
		if r.Set != "" {
			fmt.Fprintf(&b, "- **Set:** `%s`, runs only when selected (`--select %s` or the rule id)\n", r.Set, r.Set)
		}
		for _, a := range r.AlsoIn {
			fmt.Fprintf(&b, "- **Also in:** `%s` (runs when that set is selected too)\n", a)
		}
		fmt.Fprintf(&b, "- **What:** %s\n", r.What)
		fmt.Fprintf(&b, "- **Why:** %s\n", r.Why)
		fmt.Fprintf(&b, "- **Fix:** %s\n\n", r.Fix)
	}
	return b.String()
}

func scopeText(r *Rule) string {
	switch r.Scope {
	case ScopeCSV:
		return "the CSV alone (runs in `opm csv lint` on any CSV file)"
	case ScopeBundle:
		return "a whole bundle (`opm bundle validate`, and `opm csv lint` when the CSV sits in a bundle)"
	case ScopeCatalog:
		return "a file-based catalog (`opm validate`)"
	}
	return "several bundles of one package validated in the same run"
}
