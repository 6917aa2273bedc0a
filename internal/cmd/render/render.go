// Package render is `opm render`.
package render

import (
	"context"
	"fmt"
	"io"
	"os"
	"text/template"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/catalogproblems"
	"github.com/opmkit/opm/internal/cmd/catalogsource"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/fbcflags"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/gcbudget"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/printable"
)

// Options are the flags and arguments of opm render.
type Options struct {
	Sources      []string
	Output       string
	MigrateLevel string
	Permissive   bool
	// MigrateAll is --migrate: every migration (the last level).
	MigrateAll       bool
	ImageRefTemplate string
	Image            image.Options
	Limits           fbc.Limits
}

// NewCmd is `opm render`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "render SOURCE...",
		Short: "Print catalogs and bundles as a file-based catalog",
		Long: `Print each SOURCE as file-based catalog blobs on stdout, all sources in one
stream. A SOURCE is a sqlite index database file, a file-based catalog
directory (printed back normalized), a bundle directory, or an image: a
sqlite index image (only its database layer is fetched), a file-based catalog
index image (the directory its operators.operatorframework.io.index.configs.v1
label names) or a bundle image, through any transport opm reads (registry,
oci:, oci-archive:, docker-archive:).

A sqlite index whose bundles make an invalid catalog (a skipRange that is
not a semver range, say) is refused, as upstream refuses it, with every
problem listed at once; --permissive writes the catalog anyway, to fix it
there.

A bundle directory has no image reference; --alpha-image-ref-template gives
it one, a Go template over the bundle's {{.Package}}, {{.Name}} (the CSV
name) and {{.Version}}, so a catalog can be rendered before its bundle images
are pushed.`,
		Example: `  opm render index.db > catalog.json
  opm render quay.io/me/index:3 -o yaml
  opm render ./bundle quay.io/me/op-bundle:v1.2.0 --migrate-level bundle-object-to-csv-metadata
  opm render ./bundle --alpha-image-ref-template 'quay.io/me/{{.Package}}-bundle:v{{.Version}}'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Sources = args
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	AddFormatFlag(cmd, &opts.Output)
	cmd.Flags().BoolVar(&opts.Permissive, "permissive", false, catalogproblems.PermissiveUsage)
	cmd.Flags().StringVar(&opts.MigrateLevel, "migrate-level", "", "rewrite rendered bundles: none, or bundle-object-to-csv-metadata (one olm.csv.metadata property instead of the olm.bundle.object manifests)")
	_ = cmd.RegisterFlagCompletionFunc("migrate-level", cobra.FixedCompletions([]string{string(fbc.MigrateNone), string(fbc.MigrateCSVMetadata)}, cobra.ShellCompDirectiveNoFileComp))
	cmd.Flags().BoolVar(&opts.MigrateAll, "migrate", false, "run every migration (the same as the last --migrate-level)")
	cmd.MarkFlagsMutuallyExclusive("migrate", "migrate-level")
	cmd.Flags().StringVar(&opts.ImageRefTemplate, "alpha-image-ref-template", "", "image reference of bundles rendered from directories: a Go template over {{.Package}}, {{.Name}} and {{.Version}}")
	opts.Image.AddFlags(cmd.Flags())
	fbcflags.AddLimitFlags(cmd.Flags(), &opts.Limits)
	return cmd
}

// AddFormatFlag adds -o/--output json|yaml, the format of catalog files.
func AddFormatFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVarP(p, "output", "o", string(fbc.FormatJSON), "catalog format: json or yaml")
	// -o json is the catalog's format, not a report: a failure must not
	// append an error object to a catalog stream.
	_ = cmd.Flags().SetAnnotation("output", output.DataFormatAnnotation, []string{"true"})
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{string(fbc.FormatJSON), string(fbc.FormatYAML)}, cobra.ShellCompDirectiveNoFileComp))
}

// CheckFormat parses a catalog format flag's value.
func CheckFormat(f *factory.Factory, flag, v string) (fbc.Format, error) {
	format, err := fbc.ParseFormat(v)
	if err != nil {
		return "", exit.Usagef("invalid --%s %q%s: use json or yaml", flag, v, f.From(flag))
	}
	return format, nil
}

// Run renders every source and prints the result.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	format, err := CheckFormat(f, "output", opts.Output)
	if err != nil {
		return err
	}
	level, err := fbc.ParseMigrateLevel(opts.MigrateLevel)
	if err != nil {
		return exit.Usagef("--migrate-level%s: %v", f.From("migrate-level"), err)
	}
	if opts.MigrateAll {
		level = fbc.MigrateCSVMetadata
	}
	defer gcbudget.Batch()()
	o := catalogsource.NewOpener(f, opts.Image, fbc.RenderOptions{Migrate: level})
	o.Limits = opts.Limits
	if opts.ImageRefTemplate != "" {
		tmpl, err := template.New("image-ref-template").Option("missingkey=error").Parse(opts.ImageRefTemplate)
		if err != nil {
			return exit.Usagef("invalid --alpha-image-ref-template%s: %v", f.From("alpha-image-ref-template"), err)
		}
		o.ImageRefTemplate = tmpl
	}
	if len(opts.Sources) == 1 {
		return renderOne(ctx, f, o, opts.Sources[0], format, opts.Permissive)
	}
	all := &fbc.Catalog{}
	var problems catalogproblems.Problems
	for _, src := range opts.Sources {
		c, err := o.Open(ctx, src)
		if err != nil {
			return indexio.Interrupted(ctx, fmt.Errorf("render %s: %w", src, err))
		}
		for _, w := range c.Warnings {
			// Warnings quote names from the index: escaped.
			fmt.Fprintf(f.IO.ErrOut, "%s %s: %s\n", f.IO.ErrTheme().NotePrefix(), printable.Name(src), printable.Text(w))
		}
		problems.Add(src, c)
		all.Merge(c.Catalog)
	}
	if err := problems.Report(f, "render", opts.Permissive); err != nil {
		return err
	}
	if err := fbc.Write(f.IO.Out, all, format); err != nil {
		return exit.With(exit.Failed, err)
	}
	return nil
}

// renderOne renders one source a package at a time where the source allows
// (memory holds a package, not the catalog), into an unlinked temporary
// file: a sqlite source's problems are only known at the end, and a
// refused catalog prints nothing, as when the catalog was whole.
func renderOne(ctx context.Context, f *factory.Factory, o *catalogsource.Opener, src string, format fbc.Format, permissive bool) error {
	spool, err := os.CreateTemp("", "opm-render-*")
	if err != nil {
		return exit.With(exit.Failed, err)
	}
	_ = os.Remove(spool.Name()) // gone once closed, however opm ends
	defer spool.Close()
	w, err := fbc.NewWriter(spool, format)
	if err != nil {
		return exit.With(exit.Failed, err)
	}
	var checks fbc.Checks
	var writeErr error
	kind, err := o.Each(ctx, src, nil, func(k catalogsource.Kind, c *fbc.Catalog, warnings []string) error {
		for _, w := range warnings {
			fmt.Fprintf(f.IO.ErrOut, "%s %s: %s\n", f.IO.ErrTheme().NotePrefix(), printable.Name(src), printable.Text(w))
		}
		if k == catalogsource.Database || k == catalogsource.DatabaseImage {
			checks.Add(c)
		}
		writeErr = w.Add(c)
		return writeErr
	})
	if writeErr != nil {
		return exit.With(exit.Failed, writeErr)
	}
	if err != nil {
		return indexio.Interrupted(ctx, fmt.Errorf("render %s: %w", src, err))
	}
	var problems catalogproblems.Problems
	problems.AddCheck(src, kind, checks.Err())
	if err := problems.Report(f, "render", permissive); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return exit.With(exit.Failed, err)
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return exit.With(exit.Failed, err)
	}
	if _, err := io.Copy(f.IO.Out, spool); err != nil {
		return exit.With(exit.Failed, fmt.Errorf("write catalog: %w", err))
	}
	return nil
}
