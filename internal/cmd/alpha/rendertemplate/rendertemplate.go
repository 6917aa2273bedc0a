// Package rendertemplate is `opm alpha render-template`: a catalog template
// (basic, semver or substitutes) rendered into a file-based catalog, its
// bundle images pulled through one image client, several at once.
package rendertemplate

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/alpha/rendermapping"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/fbcflags"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/fbc/template"
	"github.com/opmkit/opm/internal/fbc/template/bundleimages"
	"github.com/opmkit/opm/internal/fbc/template/templates"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/iostreams"
)

// FormatMermaid is the -o value that draws the channels instead.
const FormatMermaid = "mermaid"

// Options are the flags and arguments of opm alpha render-template.
type Options struct {
	// Type is basic, semver or substitutes; "" detects it from the schema.
	Type string
	// File is the template file; "-" (or "") is standard input.
	File         string
	Output       string
	MigrateLevel string
	Image        image.Options
	// MaxInput bounds the template read (--max-input-size); <= 0: none.
	MaxInput int64
	// Mapping is a catalog repository's ci.yaml: render every template it
	// maps into every catalog (see internal/catalogrepo).
	Mapping string
	// OutputDir, with Mapping, is where catalogs go instead of the
	// repository's catalogs/ directory.
	OutputDir string
	// outputSet says -o was given (with Mapping, yaml is the default).
	outputSet bool
}

// NewCmd is `opm alpha render-template`; runF, when not nil, runs instead
// of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "render-template [TYPE] [FILE|-]",
		Short: "Render a catalog template (basic, semver or substitutes) into a file-based catalog",
		Long: `Render a catalog template into file-based catalog blobs on stdout, pulling
every bundle image it names (several at once, through one image client; a
progress line on a terminal, plain lines every few seconds elsewhere).

TYPE is basic, semver or substitutes; without it, the type
comes from the template's schema (` + template.SchemaBasic + `,
` + template.SchemaSemver + `, ` + template.SchemaSubstitutes + `). FILE is a YAML or
JSON template; without it, or with -, the template is read from stdin. A
FILE named like a TYPE needs the TYPE before it.

  basic        a file-based catalog whose olm.bundle entries give only their
               image: each becomes the bundle's rendered blob
  semver       channels generated from the bundles' versions
               (candidate/fast/stable, by major or minor version)
  substitutes  a file-based catalog plus substitutions [{name: IMAGE, base:
               BUNDLE}]: the image's bundle takes the base's place in every
               channel

A template with a syntax error, an unknown field or an image that cannot be
pulled fails with the file, line and field at fault, and prints nothing.

--mapping FILE renders a whole catalog repository package (the community
operator repositories' layout): FILE is operators/<package>/ci.yaml, whose
fbc.catalog_mapping maps each template under catalog-templates/ (beside it)
to catalogs named for OpenShift versions. Each catalog is rendered with the
bundle format its version needs (olm.csv.metadata from v4.17,
olm.bundle.object before), validated, and written to
catalogs/<catalog>/<package>/catalog.yaml of the repository (--output-dir to
write elsewhere): all catalogs, or none when one fails. Each bundle image is
pulled once for all catalogs.`,
		Example: `  opm alpha render-template basic catalog-templates/my-operator.yaml -o yaml > catalog/my-operator/catalog.yaml
  opm alpha render-template semver.yaml --migrate-level bundle-object-to-csv-metadata
  opm alpha render-template < template.yaml
  opm alpha render-template basic template.yaml -o mermaid
  opm alpha render-template --mapping operators/my-operator/ci.yaml`,
		Args: cobra.RangeArgs(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch len(args) {
			case 1:
				if isType(args[0]) {
					opts.Type = args[0]
				} else {
					opts.File = args[0]
				}
			case 2:
				opts.Type, opts.File = args[0], args[1]
				if !isType(opts.Type) {
					return exit.Usagef("unknown template type %q: use %s (or give only FILE to detect the type from its schema)", opts.Type, strings.Join(template.Types, ", "))
				}
			}
			opts.outputSet = cmd.Flags().Changed("output")
			if opts.Mapping != "" {
				if len(args) > 0 {
					return exit.Usagef("--mapping renders the templates its file names: give no TYPE or FILE")
				}
				if runF != nil {
					return runF(opts)
				}
				return rendermapping.Run(cmd.Context(), f, &rendermapping.Options{Mapping: opts.Mapping, OutputDir: opts.OutputDir,
					Output: opts.Output, OutputSet: opts.outputSet, MigrateLevel: opts.MigrateLevel, MaxInput: opts.MaxInput, Image: opts.Image})
			}
			if opts.OutputDir != "" {
				return exit.Usagef("--output-dir is where --mapping writes catalogs; without --mapping the catalog goes to stdout")
			}
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Mapping, "mapping", "", "render every template a catalog repository's ci.yaml maps (fbc.catalog_mapping) into every catalog it names, writing catalogs/<catalog>/<package>/catalog.yaml")
	fl.StringVar(&opts.OutputDir, "output-dir", "", "with --mapping: write <catalog>/<package>/ under this directory instead of the repository's catalogs/")
	fl.StringVarP(&opts.Output, "output", "o", string(fbc.FormatJSON), "output format: json, yaml, or mermaid (a flowchart of the channels)")
	_ = fl.SetAnnotation("output", output.DataFormatAnnotation, []string{"true"})
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{string(fbc.FormatJSON), string(fbc.FormatYAML), FormatMermaid}, cobra.ShellCompDirectiveNoFileComp))
	fl.StringVar(&opts.MigrateLevel, "migrate-level", "", "rewrite rendered bundles: none, or bundle-object-to-csv-metadata (one olm.csv.metadata property instead of the olm.bundle.object manifests)")
	_ = cmd.RegisterFlagCompletionFunc("migrate-level", cobra.FixedCompletions([]string{string(fbc.MigrateNone), string(fbc.MigrateCSVMetadata)}, cobra.ShellCompDirectiveNoFileComp))
	fbcflags.AddInputSizeFlag(fl, &opts.MaxInput, "template")
	opts.Image.AddFlags(fl)
	return cmd
}

func isType(s string) bool {
	for _, t := range template.Types {
		if s == t {
			return true
		}
	}
	return false
}

// Run renders the template and prints the catalog; nothing is printed
// unless the whole template renders.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	var format fbc.Format
	if opts.Output != FormatMermaid {
		var err error
		if format, err = fbc.ParseFormat(opts.Output); err != nil {
			return exit.Usagef("invalid --output %q%s: use json, yaml or mermaid", opts.Output, f.From("output"))
		}
	}
	level, err := fbc.ParseMigrateLevel(opts.MigrateLevel)
	if err != nil {
		return exit.Usagef("--migrate-level%s: %v", f.From("migrate-level"), err)
	}
	if err := opts.Image.Validate(); err != nil {
		return exit.Usagef("%v", err)
	}
	data, source, err := iostreams.ReadInput(ctx, f.IO.In, opts.File, "template", opts.MaxInput)
	if err != nil {
		return exit.With(exit.Failed, err)
	}
	typ := opts.Type
	if typ == "" {
		if typ, err = template.Detect(source, data); err != nil {
			return exit.With(exit.Failed, err)
		}
	}

	// Parse first: a malformed template fails before anything is pulled.
	parsed, err := templates.Parse(typ, source, data)
	if err != nil {
		return exit.With(exit.Failed, err)
	}
	images, renderFn := parsed.Images, parsed.Render

	// The progress line counts the bytes of clients made from opts from
	// now on: make the run's one client after it.
	progress := indexio.StartPull(f, output.Text, bundleimages.Distinct(images), &opts.Image)
	// Related images in upstream's order: the catalog is compared with
	// upstream's byte for byte.
	b := bundleimages.New(func() (*image.Client, error) { return f.ImageClient(opts.Image) }, fbc.RenderOptions{Migrate: level, ImageOrder: true})
	b.RegistryOnly = true // what a template names, as a catalog: registry images only
	b.OnDone = progress.Step
	b.Prefetch(ctx, images)
	progress.Finish()
	if ctx.Err() != nil {
		return indexio.Interrupted(ctx, ctx.Err())
	}
	c, err := renderFn(ctx, b.Render)
	if err != nil {
		if ctx.Err() != nil {
			return indexio.Interrupted(ctx, err)
		}
		return exit.With(exit.Failed, fmt.Errorf("render %s template %s: %w\nnothing was printed", typ, source, err))
	}
	var buf bytes.Buffer
	if opts.Output == FormatMermaid {
		// One writer draws every template type's catalog, and render-graph's
		// graphs too; upstream's template drawing marks v0 semantics.
		warnings, err := graph.WriteMermaid(&buf, c, graph.MermaidOptions{V0Semantics: true, CatalogOrder: true})
		if err != nil {
			return exit.With(exit.Failed, fmt.Errorf("draw %s: mermaid: %w", source, err))
		}
		for _, w := range warnings {
			fmt.Fprintf(f.IO.ErrOut, "warning: %s\n", w)
		}
	} else {
		if err := fbc.Write(&buf, c, format); err != nil {
			return exit.With(exit.Failed, err)
		}
	}
	if _, err := f.IO.Out.Write(buf.Bytes()); err != nil {
		return exit.With(exit.Failed, err)
	}
	return nil
}
