// Package prunestranded is `opm index prune-stranded`, and the code of
// `opm registry prune-stranded`.
package prunestranded

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/index/indexflags"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/printable"
)

// Options are the flags of opm index prune-stranded.
type Options struct {
	Database           string
	Output             string
	ContainerToolGiven bool
	indexflags.ImageOptions
}

// NewCmd is `opm index prune-stranded`; runF, when not nil, runs instead
// of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "prune-stranded (--from-index IMAGE --tag IMAGE | --database FILE)",
		Short: "Drop the bundles no channel reaches from an index image or database",
		Long: `Remove stranded bundles, which no channel refers to (left behind by upstream
opm's non-atomic adds, overwrites and removals), in one transaction. As
upstream, a deprecated bundle stays while its package is in the index.

The image flags work as for index prune.`,
		Example: `  opm index prune-stranded -f quay.io/me/index:3 -t quay.io/me/index:3-clean
  opm index prune-stranded --database index.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ContainerToolGiven = cmd.Flags().Changed("container-tool")
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Database, "database", "", "a sqlite index database file to prune instead of an image")
	fl.StringVar(&opts.Output, "output", output.Text, "output format: text or json (json goes to stdout)")
	opts.AddBuildFlags(fl)
	return cmd
}

// Run removes the stranded bundles.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if err := output.Check(opts.Output, f.From("output")); err != nil {
		return err
	}
	if err := opts.UpstreamContainerTool(opts.ContainerToolGiven); err != nil {
		return err
	}
	return indexio.Change(ctx, f, &opts.ImageOptions, opts.Database, opts.Output,
		indexio.ChangeWords{Verb: "prune stranded bundles of", Purpose: "prune"},
		func(db *index.DB) (*index.PruneStrandedResult, error) { return db.PruneStranded(ctx) }, write)
}

func write(f *factory.Factory, target string, res *index.PruneStrandedResult) {
	fmt.Fprintf(f.IO.ErrOut, "removed %s from %s\n", printable.Count(len(res.Removed), "stranded bundle", "stranded bundles"), printable.Name(target))
	for _, b := range res.Removed {
		fmt.Fprintf(f.IO.ErrOut, "  %s\n", printable.Name(b.Name))
	}
	t := f.IO.ErrTheme()
	for _, w := range res.Warnings {
		fmt.Fprintf(f.IO.ErrOut, "%s %s\n", t.NotePrefix(), printable.Text(w))
	}
}
