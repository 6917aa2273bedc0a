// Package prune is `opm alpha mirror prune`: the manifests at a mirror
// registry that no kept report or catalog needs, listed and with
// --confirm deleted (internal/mirror).
package prune

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/cmd/catalogsource"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/mirror"
)

// Options are the flags of opm alpha mirror prune.
type Options struct {
	To             string
	Keep           []string
	Confirm        bool
	MaxNestedPaths int
	Concurrency    int
	Output         string
	Image          image.Options
}

// NewCmd is `opm alpha mirror prune`; runF, when not nil, runs instead
// of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "prune --to REGISTRY[/PREFIX] --keep (REPORT | CATALOG-IMAGE)... [--confirm]",
		Short: "List, and with --confirm delete, the manifests at a mirror registry that no kept report or catalog needs",
		Long: `List the manifests at the mirror registry --to REGISTRY[/PREFIX] that no
kept report or catalog needs, and delete them with --confirm. Without
--confirm nothing is deleted (a dry run).

Each --keep is a report of opm alpha mirror (a file: opm-mirror.json or
one kept beside it, or the artifact each run to a registry pushes to
PREFIX/` + mirror.ReportsRepo + `, tagged TIME-CATALOG and, for the latest run of
a catalog, CATALOG), or a catalog image as mirrored at the
registry (REGISTRY/PREFIX/org/catalog:tag). What stays is computed from
the kept catalogs themselves, read at the registry and their images
mapped as the mirror maps them (give the runs' --max-nested-paths), and
from the kept reports (additional images, signatures): a stale or missing
report never lets prune delete what a kept catalog needs. A manifest an
index kept anywhere at the registry lists is never deleted.

What may go is found in the repositories under PREFIX the registry lists
(/v2/_catalog) and those the reports name: their tags, and the manifests
earlier runs pushed by digest only, as the reports kept at
PREFIX/` + mirror.ReportsRepo + ` name them. Each is listed with why it is
unneeded. The reports themselves are kept. Mirror under a prefix of its
own, and do not prune while a mirror run writes there.

Deleting a manifest frees no space until the registry collects garbage
(docker-registry: registry garbage-collect CONFIG). A registry that does
not allow deletion (docker-registry without storage.delete.enabled)
is named, with what to enable, before anything is deleted.`,
		Example: `  opm alpha mirror prune --to mirror.example:5000/olm --keep mirror.example:5000/olm/olm/operators:v2
  opm alpha mirror prune --to mirror.example:5000/olm --keep mirror.example:5000/olm/` + mirror.ReportsRepo + `:20261207T213000Z-operators-v2 --confirm`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.To, "to", "", "the mirror registry, and the path prefix, to prune: REGISTRY[/PREFIX]")
	fl.StringArrayVar(&opts.Keep, "keep", nil, "a report (file or artifact at the registry) or a catalog image at the registry whose images stay (repeat for more)")
	fl.BoolVar(&opts.Confirm, "confirm", false, "delete what is listed (without it nothing is deleted)")
	fl.IntVar(&opts.MaxNestedPaths, "max-nested-paths", 0, "the --max-nested-paths of the mirror runs, which maps a kept catalog's images to their repositories")
	fl.IntVar(&opts.Concurrency, "concurrency", 4, "how many requests go to the registry at once (what is listed and deleted does not depend on it)")
	fl.StringVarP(&opts.Output, "output", "o", output.Text, "output format: text or json (on stdout)")
	opts.Image.AddFlags(fl)
	return cmd
}

// Run prunes.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if err := output.Check(opts.Output, f.From("output")); err != nil {
		return err
	}
	if opts.To == "" {
		return exit.Usagef("give --to REGISTRY[/PREFIX], the mirror registry to prune")
	}
	if len(opts.Keep) == 0 {
		return exit.Usagef("give --keep REPORT or --keep CATALOG-IMAGE: what stays at %s (prune never guesses)", opts.To)
	}
	if opts.Concurrency < 1 {
		return exit.Usagef("--concurrency must be at least 1")
	}
	if err := mirror.CheckNested(opts.To, opts.MaxNestedPaths); err != nil {
		return exit.Usagef("%v", err)
	}
	if err := opts.Image.Validate(); err != nil {
		return exit.Usagef("%v", err)
	}
	cl, err := f.ImageClient(opts.Image)
	if err != nil {
		return exit.With(exit.Usage, err)
	}
	if !opts.Confirm {
		fmt.Fprintf(f.IO.ErrOut, "dry run: nothing is deleted without --confirm\n")
	}
	rep, err := mirror.Prune(ctx, cl, mirror.PruneOptions{
		To: opts.To, MaxNestedPaths: opts.MaxNestedPaths, Keep: opts.Keep, Confirm: opts.Confirm,
		Concurrency: opts.Concurrency,
		Warn:        func(w string) { fmt.Fprintf(f.IO.ErrOut, "warning: %s\n", w) },
		Images: func(ctx context.Context, ref string) ([]catalogimages.Image, error) {
			images, refused, err := listImages(ctx, f, opts.Image, ref)
			if err != nil {
				return nil, err
			}
			if len(refused) > 0 {
				return nil, catalogimages.RefusedError(ref, refused)
			}
			return images, nil
		},
	})
	if rep != nil && (err == nil || !errors.Is(err, mirror.ErrNothingDeleted) || len(rep.Unneeded) > 0) {
		if opts.Output == output.JSON {
			if werr := output.WriteJSON(f.IO.Out, rep); werr != nil && err == nil {
				err = werr
			}
		} else {
			mirror.WritePruneText(f.IO.ErrOut, f.IO.ErrTheme(), rep)
		}
	}
	if err != nil {
		return exit.With(exit.Failed, err)
	}
	return nil
}

// listImages lists the images the catalog at ref needs, read part by
// part, and those it names outside a registry.
func listImages(ctx context.Context, f *factory.Factory, o image.Options, ref string) ([]catalogimages.Image, []catalogimages.Refused, error) {
	l := catalogimages.NewLister("")
	add := func(c *fbc.Catalog) error { l.Add(c); return nil }
	if _, err := catalogsource.NewOpener(f, o, fbc.RenderOptions{}).OpenEach(ctx, ref, add, catalogsource.DatabaseImage, catalogsource.CatalogImage); err != nil {
		return nil, nil, err
	}
	return l.Images(), l.Refused(), nil
}
