// Package migrate is `opm migrate`.
package migrate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/catalogproblems"
	"github.com/opmkit/opm/internal/cmd/catalogsource"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/fbcflags"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/cmd/render"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbcsource"
	"github.com/opmkit/opm/internal/gcbudget"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/printable"
	"github.com/opmkit/opm/internal/validate"
)

// Targets of --to.
const (
	ToFBC    = "fbc"
	ToSQLite = "sqlite"
)

// Options are the flags and arguments of opm migrate.
type Options struct {
	Source       string
	Dest         string
	Output       string
	MigrateLevel string
	To           string
	Force        bool
	Permissive   bool
	Image        image.Options
	Limits       fbc.Limits
}

// NewCmd is `opm migrate`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "migrate SOURCE DEST",
		Short: "Convert a sqlite index (or a file-based catalog) to a file-based catalog, or back with --to sqlite",
		Long: `Convert a catalog between its two formats.

By default SOURCE is a sqlite index database file or sqlite index image (only
its database layer is fetched), or a file-based catalog directory or image,
and DEST a directory: each package is written to DEST/<package>/catalog.json
(or .yaml with -o yaml), as upstream opm migrate does. A file-based catalog
keeps its deprecations and blobs of other schemas; --migrate-level rewrites
its bundles as it does rendered ones.

With --to sqlite, SOURCE is a file-based catalog directory or FBC index image
and DEST the index database file to create (schema 13, what opm index and
opm registry serve use). The catalog must validate (opm validate); every
property is kept where opm serve answers it, and deprecations and custom
schemas in a table of opm's own (docs/fbc.md).

A sqlite index whose bundles make an invalid catalog (a skipRange that is
not a semver range, say) is refused with every problem listed at once;
--permissive writes the catalog anyway, to fix it there.

DEST is written whole or not at all: the result is built beside it and moved
into place. An existing non-empty DEST is refused unless --force. A DEST that
is SOURCE, holds it or lies inside it is refused even with --force (symbolic
links resolved): replacing it would delete the source.`,
		Example: `  opm migrate index.db catalog/
  opm migrate quay.io/me/index:3 catalog/ -o yaml
  opm migrate old-catalog/ catalog/ --migrate-level bundle-object-to-csv-metadata
  opm migrate --to sqlite catalog/ index.db`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Source, opts.Dest = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	render.AddFormatFlag(cmd, &opts.Output)
	fl := cmd.Flags()
	fl.StringVar(&opts.MigrateLevel, "migrate-level", "", "rewrite rendered bundles: none, or bundle-object-to-csv-metadata")
	fl.StringVar(&opts.To, "to", ToFBC, "what to write: fbc (a catalog directory) or sqlite (an index database file)")
	fl.BoolVar(&opts.Permissive, "permissive", false, catalogproblems.PermissiveUsage)
	fl.BoolVar(&opts.Force, "force", false, "replace a non-empty DEST directory or an existing DEST file")
	_ = cmd.RegisterFlagCompletionFunc("to", cobra.FixedCompletions([]string{ToFBC, ToSQLite}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("migrate-level", cobra.FixedCompletions([]string{string(fbc.MigrateNone), string(fbc.MigrateCSVMetadata)}, cobra.ShellCompDirectiveNoFileComp))
	opts.Image.AddFlags(fl)
	fbcflags.AddLimitFlags(fl, &opts.Limits)
	return cmd
}

// Run converts the source.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	format, err := render.CheckFormat(f, "output", opts.Output)
	if err != nil {
		return err
	}
	level, err := fbc.ParseMigrateLevel(opts.MigrateLevel)
	if err != nil {
		return exit.Usagef("--migrate-level%s: %v", f.From("migrate-level"), err)
	}
	defer gcbudget.Batch()()
	o := catalogsource.NewOpener(f, opts.Image, fbc.RenderOptions{Migrate: level})
	o.Limits = opts.Limits
	switch opts.To {
	case ToFBC:
		// A package at a time into a temporary tree, moved into place once
		// the catalog is known to validate (or --permissive): memory holds
		// a package, not the catalog.
		dw, err := fbc.NewDirWriter(opts.Dest, fbc.WriteDirOptions{Format: format, Force: opts.Force, Sources: []string{opts.Source}})
		if err != nil {
			return exit.With(exit.Failed, withForceHint(err, opts.Force))
		}
		defer dw.Abort()
		packages := 0
		var checks fbc.Checks
		var writeErr error
		accept := []catalogsource.Kind{catalogsource.Database, catalogsource.DatabaseImage, catalogsource.CatalogDir, catalogsource.CatalogImage}
		kind, err := o.Each(ctx, opts.Source, accept, func(k catalogsource.Kind, c *fbc.Catalog, warnings []string) error {
			for _, w := range warnings {
				// Warnings quote names from the index: escaped.
				fmt.Fprintf(f.IO.ErrOut, "%s %s: %s\n", f.IO.ErrTheme().NotePrefix(), printable.Name(opts.Source), printable.Text(w))
			}
			packages += len(c.PackageNames())
			if k == catalogsource.Database || k == catalogsource.DatabaseImage {
				checks.Add(c)
			}
			writeErr = dw.Add(c)
			return writeErr
		})
		if writeErr != nil {
			return exit.With(exit.Failed, withForceHint(writeErr, opts.Force))
		}
		if err != nil {
			return indexio.Interrupted(ctx, fmt.Errorf("migrate %s: %w", opts.Source, err))
		}
		var problems catalogproblems.Problems
		problems.AddCheck(opts.Source, kind, checks.Err())
		if err := problems.Report(f, "migrate "+opts.Source, opts.Permissive); err != nil {
			return err
		}
		if err := dw.Commit(); err != nil {
			return exit.With(exit.Failed, withForceHint(err, opts.Force))
		}
		fmt.Fprintf(f.IO.ErrOut, "wrote %d package(s) of %s to %s\n", packages, opts.Source, opts.Dest)
	case ToSQLite:
		var packages, bundles int
		if st, serr := os.Stat(opts.Source); serr == nil && st.IsDir() && !fbcsource.IsBundleDir(opts.Source) {
			// A catalog directory is converted a package at a time.
			n, err := fbc.DirToIndex(ctx, opts.Source, opts.Dest, fbc.ToIndexOptions{Force: opts.Force, Sources: []string{opts.Source}}, fbc.LoadOptions{Limits: opts.Limits})
			var le *fbc.CatalogLoadError
			if errors.As(err, &le) {
				return indexio.Interrupted(ctx, fmt.Errorf("migrate %s: load catalog %s: %w\n(`opm validate %s` lists every problem)", opts.Source, opts.Source, le.Err, opts.Source))
			}
			if err != nil {
				return toSQLiteError(ctx, f, opts, err)
			}
			packages, bundles = n.Packages, n.Bundles
		} else {
			c, err := o.Open(ctx, opts.Source, catalogsource.CatalogDir, catalogsource.CatalogImage)
			if err != nil {
				return indexio.Interrupted(ctx, fmt.Errorf("migrate %s: %w", opts.Source, err))
			}
			if err := fbc.ToIndex(ctx, c.Catalog, opts.Dest, fbc.ToIndexOptions{Force: opts.Force, Sources: []string{opts.Source}}); err != nil {
				return toSQLiteError(ctx, f, opts, err)
			}
			packages, bundles = len(c.PackageNames()), len(c.Bundles)
		}
		fmt.Fprintf(f.IO.ErrOut, "wrote %s, %s of %s to %s\n", printable.Count(packages, "package", "packages"), printable.Count(bundles, "bundle", "bundles"), opts.Source, opts.Dest)
	default:
		return exit.Usagef("invalid --to %q%s: use fbc or sqlite", opts.To, f.From("to"))
	}
	return nil
}

// toSQLiteError renders a failed conversion to sqlite: a catalog that does
// not validate as one report of every problem, as opm validate prints it.
func toSQLiteError(ctx context.Context, f *factory.Factory, opts *Options, err error) error {
	var ie *fbc.InvalidError
	if errors.As(err, &ie) {
		res := validate.NewResult([]validate.BundleReport{{Path: opts.Source, Findings: ie.Findings}}, validate.Error)
		_ = validate.WriteText(f.IO.ErrOut, res, validate.TextOptions{Styles: f.IO.ErrTheme().ValidateStyles(), Noun: "catalog"})
		return exit.With(exit.Failed, fmt.Errorf("migrate %s: the catalog does not validate (%s above); nothing was written", opts.Source, printable.Count(len(ie.Findings), "problem", "problems")))
	}
	return indexio.Interrupted(ctx, withForceHint(err, opts.Force))
}

// withForceHint says how to replace a destination that was refused, unless
// --force was given already (then another process won a race to it).
func withForceHint(err error, force bool) error {
	if !force && (errors.Is(err, os.ErrExist) || strings.Contains(err.Error(), "not empty")) {
		return fmt.Errorf("%w (or replace it with --force)", err)
	}
	return err
}
