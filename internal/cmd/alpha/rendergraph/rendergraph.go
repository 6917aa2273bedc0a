// Package rendergraph is `opm alpha render-graph`: a mermaid flowchart of
// each package's channels and upgrade edges, as upstream opm drew it.
package rendergraph

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/catalogsource"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/fbcflags"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/printable"
)

// Options are the flags and arguments of opm alpha render-graph.
type Options struct {
	Indexes     []string
	MinimumEdge string
	Package     string
	V0Semantics bool
	Image       image.Options
	Limits      fbc.Limits
}

// NewCmd is `opm alpha render-graph`; runF, when not nil, runs instead of
// Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "render-graph INDEX... [-p PACKAGE] [--minimum-edge BUNDLE]",
		Short: "Print the upgrade graph of each package of an index as a mermaid flowchart",
		Long: `Print, on stdout, a mermaid flowchart (graph LR) of every package of the index:
a subgraph per package and channel, bundles from the highest version down,
with their replaces, skips and skipRange edges, in the form upstream opm
printed. Deprecated packages and channels are filled grey and lilac,
deprecated bundles orange (olm.deprecations). With --draw-v0-semantics,
bundles OLM v0 skips over are outlined red and edges into them dashed.

INDEX is a sqlite database file, a file-based catalog directory or an index
image of either kind (of a sqlite index image only the layer holding its
database is fetched); several are drawn as one catalog, as upstream does.`,
		Example: `  opm alpha render-graph quay.io/me/index:3 -p etcd > etcd.mermaid
  opm alpha render-graph catalog/ --draw-v0-semantics`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Indexes = args
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fbcflags.AddLimitFlags(fl, &opts.Limits)
	fl.StringVar(&opts.MinimumEdge, "minimum-edge", "", "bundle name: leave out edges from bundles of lower versions")
	fl.StringVarP(&opts.Package, "package-name", "p", "", "draw only this package")
	fl.BoolVar(&opts.V0Semantics, "draw-v0-semantics", false, "mark bundles OLM v0 skips over (red outline) and the edges into them (dashed)")
	opts.Image.AddFlags(fl)
	return cmd
}

// Run draws the graphs.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if err := opts.Image.Validate(); err != nil {
		return exit.Usagef("%v", err)
	}
	o := catalogsource.NewOpener(f, opts.Image, fbc.RenderOptions{})
	o.Limits = opts.Limits
	all := &fbc.Catalog{}
	for _, arg := range opts.Indexes {
		c, err := o.Open(ctx, arg, catalogsource.Catalogs...)
		if err != nil {
			return indexio.Interrupted(ctx, err)
		}
		all.Merge(c.Catalog)
	}
	warnings, err := graph.WriteMermaid(f.IO.Out, all, graph.MermaidOptions{Package: opts.Package, MinimumEdge: opts.MinimumEdge, V0Semantics: opts.V0Semantics})
	if err != nil {
		return exit.With(exit.Failed, fmt.Errorf("render graph of %s: %w", strings.Join(opts.Indexes, ", "), err))
	}
	t := f.IO.ErrTheme()
	for _, w := range warnings {
		fmt.Fprintf(f.IO.ErrOut, "%s %s\n", t.NotePrefix(), printable.Text(w))
	}
	return nil
}
