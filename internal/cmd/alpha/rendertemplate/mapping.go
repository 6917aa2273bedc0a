package rendertemplate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/opmkit/opm/internal/catalogrepo"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/template/bundleimages"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/printable"
	"github.com/opmkit/opm/internal/validate"
)

// rendered is one catalog of a mapping, ready to write.
type rendered struct {
	catalog, dir, file string
	level              fbc.MigrateLevel
	bundles            int
	data               []byte
}

// RunMapping renders every template of a catalog repository's ci.yaml into
// every catalog it maps, validates each, and writes all of them or none.
func RunMapping(ctx context.Context, f *factory.Factory, opts *Options) error {
	format := fbc.FormatYAML
	if opts.outputSet {
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
	type job struct {
		m      catalogrepo.Mapping
		source string
		render renderFunc
	}
	// Every template parses, and every catalog has a place, before
	// anything is pulled.
	var jobs []job
	var images []string
	for _, m := range repo.Mappings {
		path := repo.TemplatePath(m)
		data, source, err := readInput(ctx, f, path, opts.MaxInput)
		if err != nil {
			return exit.With(exit.Failed, err)
		}
		typ, _ := catalogrepo.TemplateType(m.Type) // Load checked it
		imgs, fn, err := parseTemplate(typ, source, data)
		if err != nil {
			return exit.With(exit.Failed, err)
		}
		for _, c := range m.Catalogs {
			if _, err := repo.CatalogDir(opts.OutputDir, c); err != nil {
				return exit.With(exit.Failed, err)
			}
		}
		jobs = append(jobs, job{m: m, source: source, render: fn})
		images = append(images, imgs...)
	}

	progress := indexio.StartPull(f, output.Text, bundleimages.Distinct(images), &opts.Image)
	b := bundleimages.New(func() (*image.Client, error) { return f.ImageClient(opts.Image) }, fbc.RenderOptions{Migrate: fbc.MigrateNone, ImageOrder: true})
	b.KeepBundles = true
	b.OnDone = progress.Step
	b.Prefetch(ctx, images)
	progress.Finish()
	if ctx.Err() != nil {
		return indexio.Interrupted(ctx, ctx.Err())
	}

	var out []rendered
	var failures []string
	for _, j := range jobs {
		for _, cat := range j.m.Catalogs {
			level, _ := catalogrepo.MigrateLevel(cat) // Load checked it
			dir, _ := repo.CatalogDir(opts.OutputDir, cat)
			c, err := j.render(ctx, b.RenderAt(level))
			if err != nil {
				if ctx.Err() != nil {
					return indexio.Interrupted(ctx, err)
				}
				failures = append(failures, fmt.Sprintf("catalog %s: render %s: %v", cat, j.source, err))
				continue
			}
			var problems []string
			for _, fd := range fbc.Validate(c) {
				if fd.Severity == validate.Error {
					problems = append(problems, fd.Message)
				}
			}
			if len(problems) > 0 {
				failures = append(failures, fmt.Sprintf("catalog %s (from %s) does not validate:\n  %s", cat, j.source, strings.Join(problems, "\n  ")))
				continue
			}
			var buf bytes.Buffer
			if err := fbc.Write(&buf, c, format); err != nil {
				return exit.With(exit.Failed, err)
			}
			out = append(out, rendered{catalog: cat, dir: dir, file: filepath.Join(dir, "catalog."+string(format)), level: level, bundles: len(c.Bundles), data: buf.Bytes()})
		}
	}
	if len(failures) > 0 {
		for _, msg := range failures {
			fmt.Fprintf(f.IO.ErrOut, "%s %s\n", f.IO.ErrTheme().ErrorPrefix(), printable.Text(msg))
		}
		return exit.With(exit.Failed, fmt.Errorf("%d of %d catalogs failed; nothing was written", len(failures), len(failures)+len(out)))
	}
	if err := writeAll(out); err != nil {
		return exit.With(exit.Failed, err)
	}
	for _, r := range out {
		format := "olm.bundle.object"
		if r.level == fbc.MigrateCSVMetadata {
			format = "olm.csv.metadata"
		}
		fmt.Fprintf(f.IO.ErrOut, "wrote %s (%d bundles, %s)\n", printable.Name(r.file), r.bundles, format)
	}
	return nil
}

// writeAll writes every catalog beside its place first, then moves each
// into place: a failure while writing leaves every catalog as it was.
func writeAll(out []rendered) error {
	var temps []string
	cleanup := func() {
		for _, t := range temps {
			_ = os.Remove(t)
		}
	}
	for _, r := range out {
		if err := os.MkdirAll(r.dir, 0o755); err != nil {
			cleanup()
			return fmt.Errorf("write catalog %s: %w; nothing was written", r.catalog, err)
		}
		tmp, err := os.CreateTemp(r.dir, ".catalog-*")
		if err != nil {
			cleanup()
			return fmt.Errorf("write catalog %s: %w; nothing was written", r.catalog, err)
		}
		temps = append(temps, tmp.Name())
		_, werr := tmp.Write(r.data)
		if cerr := tmp.Close(); werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = os.Chmod(tmp.Name(), 0o644)
		}
		if werr != nil {
			cleanup()
			return fmt.Errorf("write catalog %s: %w; nothing was written", r.catalog, werr)
		}
	}
	for i, r := range out {
		if err := os.Rename(temps[i], r.file); err != nil {
			cleanup()
			return fmt.Errorf("write catalog %s: %w (catalogs before it in the mapping were written)", r.catalog, err)
		}
	}
	return nil
}
