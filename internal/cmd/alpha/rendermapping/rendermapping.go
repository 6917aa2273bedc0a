// Package rendermapping is `opm alpha render-template --mapping`: every
// template of a catalog repository's ci.yaml rendered into every catalog
// it maps (internal/catalogrepo).
package rendermapping

import (
	"context"
	"fmt"

	"github.com/opmkit/opm/internal/catalogrepo"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/template"
	"github.com/opmkit/opm/internal/fbc/template/bundleimages"
	"github.com/opmkit/opm/internal/fbc/template/templates"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/iostreams"
	"github.com/opmkit/opm/internal/printable"
)

// Options are render-template's flags that --mapping reads.
type Options struct {
	// Mapping is the ci.yaml.
	Mapping string
	// OutputDir, when set, is where catalogs go instead of the
	// repository's catalogs/ directory.
	OutputDir string
	// Output is -o; OutputSet says it was given (yaml is the default).
	Output       string
	OutputSet    bool
	MigrateLevel string
	MaxInput     int64
	Image        image.Options
}

// Run renders every template of a catalog repository's ci.yaml into
// every catalog it maps, validates each, and writes all of them or none.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	format := fbc.FormatYAML
	if opts.OutputSet {
		var err error
		if format, err = fbc.ParseFormat(opts.Output); err != nil {
			return exit.Usagef("invalid --output %q%s: --mapping writes json or yaml catalogs", opts.Output, f.From("output"))
		}
	}
	if opts.MigrateLevel != "" {
		return exit.Usagef("--migrate-level: with --mapping each catalog's OpenShift version decides (olm.csv.metadata from v4.%d)", catalogrepo.CSVMetadataFrom)
	}
	if err := opts.Image.Validate(); err != nil {
		return exit.Usagef("%v", err)
	}
	repo, err := catalogrepo.Load(opts.Mapping)
	if err != nil {
		return exit.With(exit.Failed, err)
	}
	// Every template parses, and every catalog has a place, before
	// anything is pulled.
	var jobs []catalogrepo.Job
	var images []string
	for _, m := range repo.Mappings {
		source := repo.TemplatePath(m)
		data, err := iostreams.ReadFile(ctx, source, opts.MaxInput)
		if err != nil {
			return exit.With(exit.Failed, fmt.Errorf("read template %s: %w", source, err))
		}
		typ, _ := catalogrepo.TemplateType(m.Type) // Load checked it
		t, err := templates.Parse(typ, source, data)
		if err != nil {
			return exit.With(exit.Failed, err)
		}
		for _, c := range m.Catalogs {
			if _, err := repo.CatalogDir(opts.OutputDir, c); err != nil {
				return exit.With(exit.Failed, err)
			}
		}
		jobs = append(jobs, catalogrepo.Job{Mapping: m, Source: source, Render: t.Render})
		images = append(images, t.Images...)
	}

	progress := indexio.StartPull(f, output.Text, bundleimages.Distinct(images), &opts.Image)
	b := bundleimages.New(func() (*image.Client, error) { return f.ImageClient(opts.Image) }, fbc.RenderOptions{Migrate: fbc.MigrateNone, ImageOrder: true})
	b.RegistryOnly = true // what a template names, as a catalog: registry images only
	b.KeepBundles = true
	b.OnDone = progress.Step
	b.Prefetch(ctx, images)
	progress.Finish()
	if ctx.Err() != nil {
		return indexio.Interrupted(ctx, ctx.Err())
	}
	renderAt := func(l fbc.MigrateLevel) template.RenderBundle { return b.RenderAt(l) }
	out, failures, err := repo.Render(ctx, jobs, renderAt, opts.OutputDir, format)
	if err != nil {
		return indexio.Interrupted(ctx, exit.With(exit.Failed, err))
	}
	if len(failures) > 0 {
		for _, msg := range failures {
			fmt.Fprintf(f.IO.ErrOut, "%s %s\n", f.IO.ErrTheme().ErrorPrefix(), printable.Text(msg))
		}
		total := 0
		for _, j := range jobs {
			total += len(j.Mapping.Catalogs)
		}
		return exit.With(exit.Failed, fmt.Errorf("%d of %s failed; nothing was written", total-len(out), printable.Count(total, "catalog", "catalogs")))
	}
	if err := catalogrepo.WriteAll(out); err != nil {
		return exit.With(exit.Failed, err)
	}
	for _, r := range out {
		what := "olm.bundle.object"
		if r.Level == fbc.MigrateCSVMetadata {
			what = "olm.csv.metadata"
		}
		fmt.Fprintf(f.IO.ErrOut, "wrote %s (%s, %s)\n", printable.Name(r.File), printable.Count(r.Bundles, "bundle", "bundles"), what)
	}
	return nil
}
