// Package filter is `opm index filter`: opm alpha filter's result as an
// index image (or database), as index prune writes one.
package filter

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/catalogfilter"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/index/indexflags"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/printable"
)

// Options are the flags of opm index filter.
type Options struct {
	Config             string
	Database           string
	Output             string
	Explain            bool
	ContainerToolGiven bool
	indexflags.ImageOptions
}

// NewCmd is `opm index filter`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "filter --config FILE (--from-index IMAGE --tag IMAGE | --database FILE)",
		Short: "Keep the part of an index image a filter configuration names, as a valid index",
		Long: `Filter an index as opm alpha filter does (a FilterConfiguration or an
ImageSetConfiguration: packages, channels, version ranges; every channel
keeps one head; docs/filter.md) and write the result as index prune does:
with --from-index F --tag T, T is F's layers with the catalog layer
replaced (--catalog-format fbc|sqlite|both; a file-based catalog carries
its serve cache, rebuilt, so the catalog pod starts without a cache error);
with --database FILE the file is changed. Nothing is written when the
filter fails. --explain lists on stderr every bundle removed and why, and
every bundle kept outside a range, as opm alpha filter --explain does.`,
		Example: `  opm index filter --config filter.yaml -f quay.io/me/index:3 -t quay.io/me/index:3-small
  opm index filter --config imageset-config.yaml -f quay.io/me/index:3 -t quay.io/me/index:3-fbc --catalog-format fbc`,
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
	fl.StringVar(&opts.Config, "config", "", "a FilterConfiguration or ImageSetConfiguration file (required)")
	fl.StringVar(&opts.Database, "database", "", "a sqlite index database file to filter instead of an image")
	fl.StringVar(&opts.Output, "output", output.Text, "output format: text or json (json goes to stdout)")
	fl.BoolVar(&opts.Explain, "explain", false, "list every bundle removed, and every one kept outside a range, with the reason")
	opts.AddBuildFlags(fl)
	fl.StringVar(&opts.CatalogFormat, indexflags.FlagCatalogFormat, "", "what the index image carries: sqlite, fbc (a file-based catalog with its serve cache) or both (default: the --from-index image's format)")
	return cmd
}

// Run filters the index.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if err := output.Check(opts.Output, f.From("output")); err != nil {
		return err
	}
	if opts.Config == "" {
		return exit.Usagef("--config is required: the filter configuration")
	}
	if err := opts.UpstreamContainerTool(opts.ContainerToolGiven); err != nil {
		return err
	}
	data, err := os.ReadFile(opts.Config)
	if err != nil {
		return exit.With(exit.Usage, fmt.Errorf("read filter configuration: %w", err))
	}
	cfg, err := catalogfilter.ParseConfig(opts.Config, data, opts.FromIndex)
	if err != nil {
		return exit.With(exit.Usage, err)
	}
	return indexio.Change(ctx, f, &opts.ImageOptions, opts.Database, opts.Output,
		indexio.ChangeWords{Verb: "filter", Purpose: "filter"},
		func(db *index.DB) (*catalogfilter.Report, error) { return catalogfilter.FilterDB(ctx, db, cfg) },
		func(f *factory.Factory, target string, rep *catalogfilter.Report) {
			if opts.Explain {
				_ = rep.WriteExplain(f.IO.ErrOut) // stderr: nothing to do when it fails
			}
			fmt.Fprintf(f.IO.ErrOut, "filtered %s: %s\n", printable.Name(target), rep.Counts())
		})
}
