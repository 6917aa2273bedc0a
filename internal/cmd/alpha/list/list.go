// Package list is `opm alpha list packages|channels|bundles`: an index's
// contents as upstream opm's columns.
package list

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/catalogsource"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/fbcflags"
	"github.com/opmkit/opm/internal/cmd/group"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/index"
)

// What a list command lists.
const (
	Packages = "packages"
	Channels = "channels"
	Bundles  = "bundles"
)

// Options are the arguments of the list commands.
type Options struct {
	What    string
	Index   string
	Package string
	Image   image.Options
	Limits  fbc.Limits
}

// NewCmd is `opm alpha list` with its subcommands.
func NewCmd(f *factory.Factory) *cobra.Command {
	return group.New("list", "Print an index's packages, channels or bundles as columns",
		NewPackagesCmd(f, nil), NewChannelsCmd(f, nil), NewBundlesCmd(f, nil))
}

// NewPackagesCmd is `opm alpha list packages INDEX`.
func NewPackagesCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	return newCmd(f, runF, Packages, "packages INDEX", cobra.ExactArgs(1),
		"List the packages of an index: NAME, DISPLAY NAME, DEFAULT CHANNEL")
}

// NewChannelsCmd is `opm alpha list channels INDEX [PACKAGE]`.
func NewChannelsCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	return newCmd(f, runF, Channels, "channels INDEX [PACKAGE]", cobra.RangeArgs(1, 2),
		"List the channels of an index (or of one package): PACKAGE, CHANNEL, HEAD")
}

// NewBundlesCmd is `opm alpha list bundles INDEX [PACKAGE]`.
func NewBundlesCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	return newCmd(f, runF, Bundles, "bundles INDEX [PACKAGE]", cobra.RangeArgs(1, 2),
		"List the bundles of an index (or of one package), one row per bundle and channel")
}

func newCmd(f *factory.Factory, runF func(*Options) error, what, use string, args cobra.PositionalArgs, short string) *cobra.Command {
	opts := &Options{What: what}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long: short + `, as upstream opm's
'alpha list' printed them, on stdout. INDEX is a sqlite database file, a
file-based catalog directory, or an index image of either kind (of a sqlite
index image only the layer holding its database is fetched).`,
		Args: args,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Index = args[0]
			if len(args) > 1 {
				opts.Package = args[1]
			}
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	opts.Image.AddFlags(cmd.Flags())
	fbcflags.AddLimitFlags(cmd.Flags(), &opts.Limits)
	return cmd
}

// Run prints the list.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if err := opts.Image.Validate(); err != nil {
		return exit.Usagef("%v", err)
	}
	o := catalogsource.NewOpener(f, opts.Image, fbc.RenderOptions{})
	o.Limits = opts.Limits
	c, err := o.Open(ctx, opts.Index, catalogsource.Catalogs...)
	if err != nil {
		return indexio.Interrupted(ctx, err)
	}
	if slices.Contains(c.Warnings, index.RolledBackWarning(opts.Index)) {
		// As render and migrate say it; list's other warnings (what
		// rendering filled in) stay unsaid, as upstream's list.
		indexio.WarnRolledBack(f, opts.Index)
	}
	switch opts.What {
	case Packages:
		return listErr(opts, index.WritePackages(f.IO.Out, graph.ListPackages(c.Catalog)))
	case Channels:
		rows, err := graph.ListChannels(c.Catalog, opts.Package)
		if err == nil {
			err = index.WriteChannels(f.IO.Out, rows)
		}
		return listErr(opts, err)
	}
	rows, err := graph.ListBundles(c.Catalog, opts.Package)
	if err == nil {
		err = index.WriteBundles(f.IO.Out, rows)
	}
	return listErr(opts, err)
}

func listErr(opts *Options, err error) error {
	if err == nil {
		return nil
	}
	return exit.With(exit.Failed, fmt.Errorf("list %s of %s: %w", opts.What, opts.Index, err))
}
