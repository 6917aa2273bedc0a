package semver

import (
	"fmt"
	"io"

	"github.com/opmkit/opm/internal/fbc"
	cataloggraph "github.com/opmkit/opm/internal/fbc/graph"
)

// Mermaid draws a rendered catalog's channels as upstream's
// `alpha render-template -o mermaid` does: graph.WriteMermaid with v0
// semantics, channels in catalog order and no filter (the one writer both
// render commands use).
// Unparseable skipRanges are left out and reported in warn (which may be
// nil), one "warning: " line each.
func Mermaid(w io.Writer, c *fbc.Catalog, warn io.Writer) error {
	warnings, err := cataloggraph.WriteMermaid(w, c, cataloggraph.MermaidOptions{V0Semantics: true, CatalogOrder: true})
	if err != nil {
		return fmt.Errorf("mermaid: %w", err)
	}
	if warn != nil {
		for _, s := range warnings {
			fmt.Fprintf(warn, "warning: %s\n", s)
		}
	}
	return nil
}
