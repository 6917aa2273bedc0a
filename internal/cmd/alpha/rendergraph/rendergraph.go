// Package rendergraph is `opm alpha render-graph`: a mermaid flowchart of
// each package's channels and upgrade edges, as upstream opm drew it.
package rendergraph

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/index"
)

// Options are the flags and arguments of opm alpha render-graph.
type Options struct {
	Indexes     []string
	MinimumEdge string
	Package     string
	Image       image.Options
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
printed. INDEX is a database file or an index image (only the layer holding
its database is fetched); several are drawn one after the other.`,
		Example: `  opm alpha render-graph quay.io/me/index:3 -p etcd > etcd.mermaid`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Indexes = args
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.MinimumEdge, "minimum-edge", "", "bundle name: leave out edges from bundles of lower versions")
	fl.StringVarP(&opts.Package, "package-name", "p", "", "draw only this package")
	opts.Image.AddFlags(fl)
	return cmd
}

// Run draws the graphs.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if err := opts.Image.Validate(); err != nil {
		return exit.Usagef("%v", err)
	}
	for _, arg := range opts.Indexes {
		db, done, err := indexio.Source(ctx, f, arg, opts.Image)
		if err != nil {
			return indexio.Interrupted(ctx, err)
		}
		res, err := db.RenderGraph(ctx, f.IO.Out, index.GraphOptions{Package: opts.Package, MinimumEdge: opts.MinimumEdge})
		done()
		if err != nil {
			return exit.With(exit.Failed, fmt.Errorf("render graph of %s: %w", arg, err))
		}
		t := f.IO.ErrTheme()
		for _, w := range res.Warnings {
			fmt.Fprintf(f.IO.ErrOut, "%s %s\n", t.NotePrefix(), w)
		}
	}
	return nil
}
