// Package list is `opm alpha list packages|channels|bundles`: an index's
// contents as upstream opm's columns.
package list

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/catalogsource"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/fbcflags"
	"github.com/opmkit/opm/internal/cmd/group"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/gcbudget"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/index"
)

// What a list command lists.
const (
	Packages = "packages"
	Channels = "channels"
	Bundles  = "bundles"
	Images   = "images"
)

// Options are the arguments of the list commands.
type Options struct {
	What    string
	Index   string
	Package string
	Output  string
	// OLMv1 says of each bundle (or package) whether OLM v1's
	// operator-controller installs it, and why not.
	OLMv1 bool
	// Pull reads bundles the catalog has no manifests for from their
	// images (with OLMv1).
	Pull   bool
	Image  image.Options
	Limits fbc.Limits
}

// NewCmd is `opm alpha list` with its subcommands.
func NewCmd(f *factory.Factory) *cobra.Command {
	return group.New("list", "Print an index's packages, channels or bundles as columns",
		NewPackagesCmd(f, nil), NewChannelsCmd(f, nil), NewBundlesCmd(f, nil), NewImagesCmd(f, nil))
}

// NewPackagesCmd is `opm alpha list packages INDEX`.
func NewPackagesCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	cmd := newCmd(f, runF, Packages, "packages INDEX", cobra.ExactArgs(1),
		"List the packages of an index: NAME, DISPLAY NAME, DEFAULT CHANNEL")
	cmd.Long += `

With --olmv1, each package says how many of its bundles OLM v1's
operator-controller installs and whether its default channel's head is one
of them (see list bundles --olmv1); -o json carries no icons.`
	return cmd
}

// NewChannelsCmd is `opm alpha list channels INDEX [PACKAGE]`.
func NewChannelsCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	return newCmd(f, runF, Channels, "channels INDEX [PACKAGE]", cobra.RangeArgs(1, 2),
		"List the channels of an index (or of one package): PACKAGE, CHANNEL, HEAD")
}

// NewImagesCmd is `opm alpha list images INDEX [PACKAGE]`.
func NewImagesCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	cmd := newCmd(f, runF, Images, "images INDEX [PACKAGE]", cobra.RangeArgs(1, 2),
		"List every image a catalog (or one package) needs: bundle images and their related images")
	cmd.Long += `

One row per image: an image pinned by digest is listed once, however many
bundles, names or repositories list it (the others under "also" in -o
json), with every use (package, bundle, and as what: the bundle's own image
or a related image and its name). Nothing is pulled but INDEX itself.`
	cmd.Example = `  opm alpha list images catalog/
  opm alpha list images quay.io/me/index:1 etcd -o json | jq -r '.[].image'`
	return cmd
}

// NewBundlesCmd is `opm alpha list bundles INDEX [PACKAGE]`.
func NewBundlesCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	cmd := newCmd(f, runF, Bundles, "bundles INDEX [PACKAGE]", cobra.RangeArgs(1, 2),
		"List the bundles of an index (or of one package), one row per bundle and channel")
	cmd.Long += `

With --olmv1, one row per bundle says whether OLM v1's operator-controller
installs it (INSTALLABLE yes or no; "yes?" when the catalog cannot tell
everything) and why not: a declared dependency, owned API services, install
modes without AllNamespaces, webhooks (installed only where a certificate
provider, cert-manager or OpenShift's service CA, is configured), and the
bundle checks it shares with OLM v0. It reads the bundle's manifests from
olm.bundle.object properties; a catalog with olm.csv.metadata only cannot
say whether a bundle has webhooks: --pull reads those bundles' images.
-o json gives each bundle's installable boolean and its reasons.`
	cmd.Example = `  opm alpha list bundles catalog/ --olmv1
  opm alpha list bundles quay.io/me/index:1 etcd --olmv1 --pull -o json | jq '.[] | select(.installable)'`
	return cmd
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
	output.AddFlag(cmd, &opts.Output)
	if what == Bundles || what == Packages {
		cmd.Flags().BoolVar(&opts.OLMv1, "olmv1", false, "say whether OLM v1's operator-controller installs each bundle, and why not")
		cmd.Flags().BoolVar(&opts.Pull, "pull", false, "with --olmv1: read bundles the catalog has no manifests for (olm.csv.metadata only) from their images")
	}
	opts.Image.AddFlags(cmd.Flags())
	fbcflags.AddLimitFlags(cmd.Flags(), &opts.Limits)
	return cmd
}

// Run prints the list.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if err := output.Check(opts.Output, f.From(output.FlagName)); err != nil {
		return err
	}
	if err := opts.Image.Validate(); err != nil {
		return exit.Usagef("%v", err)
	}
	if opts.Pull && !opts.OLMv1 {
		return exit.Usagef("--pull reads bundle images for --olmv1; add --olmv1")
	}
	o := catalogsource.NewOpener(f, opts.Image, fbc.RenderOptions{})
	o.Limits = opts.Limits
	if st, err := os.Stat(opts.Index); err == nil && st.IsDir() && !opts.OLMv1 && opts.What != Images {
		return listEach(ctx, f, o, opts)
	}
	c, err := o.Open(ctx, opts.Index, catalogsource.Catalogs...)
	if err != nil {
		return indexio.Interrupted(ctx, err)
	}
	if slices.Contains(c.Warnings, index.RolledBackWarning(opts.Index)) {
		// As render and migrate say it; list's other warnings (what
		// rendering filled in) stay unsaid, as upstream's list.
		indexio.WarnRolledBack(f, opts.Index)
	}
	if opts.OLMv1 {
		return listErr(opts, runOLMv1(ctx, f, opts, c.Catalog))
	}
	if opts.What == Images {
		return listErr(opts, writeImages(f, opts, c.Catalog))
	}
	rows, err := graph.RowsOf(c.Catalog, opts.Package)
	if err != nil {
		return listErr(opts, err)
	}
	return writeRows(f, opts, rows)
}

// listEach prints packages, channels or bundles of a catalog directory
// read a package at a time: the list is the one of the catalog read
// whole, byte for byte.
func listEach(ctx context.Context, f *factory.Factory, o *catalogsource.Opener, opts *Options) error {
	defer gcbudget.Batch()() // the live heap is a few packages: collect less often
	rows := &graph.Rows{Package: opts.Package}
	_, err := o.Each(ctx, opts.Index, catalogsource.Catalogs, func(_ catalogsource.Kind, c *fbc.Catalog, _ []string) error {
		return rows.Add(c)
	})
	if err != nil {
		return indexio.Interrupted(ctx, err)
	}
	return writeRows(f, opts, rows)
}

// writeRows prints the rows gathered, whole catalog or package by package.
func writeRows(f *factory.Factory, opts *Options, rows *graph.Rows) error {
	if err := rows.Done(); err != nil {
		return listErr(opts, err)
	}
	v, text := any(rows.Bundles), func() error { return index.WriteBundles(f.IO.Out, rows.Bundles) }
	switch opts.What {
	case Packages:
		v, text = rows.Packages, func() error { return index.WritePackages(f.IO.Out, rows.Packages) }
	case Channels:
		v, text = rows.Channels, func() error { return index.WriteChannels(f.IO.Out, rows.Channels) }
	}
	if opts.Output == output.JSON {
		return listErr(opts, output.WriteJSON(f.IO.Out, v))
	}
	return listErr(opts, text())
}

func listErr(opts *Options, err error) error {
	if err == nil {
		return nil
	}
	return exit.With(exit.Failed, fmt.Errorf("list %s of %s: %w", opts.What, opts.Index, err))
}
