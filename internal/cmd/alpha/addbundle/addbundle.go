// Package addbundle is `opm alpha template add-bundle`: a bundle image put
// into a catalog template (basic or semver), or into every template of a
// catalog repository's mapping, by editing the templates' text.
package addbundle

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/atomicfile"
	"github.com/opmkit/opm/internal/catalogrepo"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/group"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
	tmpladd "github.com/opmkit/opm/internal/fbc/template/addbundle"
	"github.com/opmkit/opm/internal/fbc/template/bundleimages"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/iostreams"
	"github.com/opmkit/opm/internal/printable"
)

// Options are the flags and arguments of add-bundle.
type Options struct {
	Template string
	// All, with Mapping, edits every template the mapping names.
	All     bool
	Mapping string
	Image   string
	// NoCSVEdges: a basic template's entry does not take the CSV's
	// replaces, skips and olm.skipRange.
	NoCSVEdges bool
	tmpladd.Options
	Pull image.Options
}

// NewGroupCmd is `opm alpha template`.
func NewGroupCmd(f *factory.Factory) *cobra.Command {
	return group.New("template", "Edit catalog templates (add-bundle)", NewCmd(f, nil))
}

// NewCmd is `opm alpha template add-bundle`; runF, when not nil, runs
// instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "add-bundle [TEMPLATE] --image REF",
		Short: "Add a bundle image to a catalog template (basic or semver), or to every template of a mapping",
		Long: `Add the bundle image REF to a catalog template, editing the file in place:
the lines added take the indentation and quoting of the lines around them;
key order, comments, blank lines and flow or block style stay as they were.

A basic template gets an olm.bundle entry for the image (when missing) and
an entry in each --channel (the package's default channel when none is
given; a channel that does not exist is created, in the file's style). The
entry's edges are the bundle CSV's spec.replaces, spec.skips and
olm.skipRange annotation, as an index built from the same image has them;
--replaces, --skips and --skip-range given instead replace them all, and
--no-csv-edges ignores the CSV. With no edge either way the entry replaces
the channel's head (in a new channel: the default channel's head). Each
edge added is said, with where it came from. An entry that would leave a
channel with two heads is refused, saying which edge fixes it. A semver template gets the image under each --channel archetype
(candidate, fast or stable; candidate when none is given): its edges come
from the versions.

Adding a bundle that is there already changes nothing. The image is pulled
once to read the bundle's name, package and version. --all --mapping
ci.yaml edits every template a catalog repository's mapping names
(catalog-templates/ beside it): all of them, or none when one fails.`,
		Example: `  opm alpha template add-bundle catalog-templates/basic.yaml --image quay.io/me/op-bundle:v0.3.0
  opm alpha template add-bundle basic.yaml --image quay.io/me/op-bundle:v0.3.0 --channel stable,fast --skip-range '>=0.1.0 <0.3.0'
  opm alpha template add-bundle --all --mapping operators/op/ci.yaml --image quay.io/me/op-bundle:v0.3.0`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Template = args[0]
			}
			switch {
			case opts.All && opts.Template != "":
				return exit.Usagef("--all edits the templates --mapping names: give no TEMPLATE")
			case opts.All && opts.Mapping == "":
				return exit.Usagef("--all needs --mapping ci.yaml")
			case !opts.All && opts.Template == "":
				return exit.Usagef("give a TEMPLATE, or --all --mapping ci.yaml")
			case !opts.All && opts.Mapping != "":
				return exit.Usagef("--mapping is for --all")
			case opts.Image == "":
				return exit.Usagef("--image: the bundle image to add is required")
			}
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Image, "image", "", "the bundle image to add")
	fl.StringSliceVar(&opts.Channels, "channel", nil, "channels (basic) or archetypes (semver: candidate, fast, stable) to add it to (repeat, or separate with commas)")
	fl.StringVar(&opts.Replaces, "replaces", "", "basic: the bundle the new entry replaces (default: the channel's head)")
	fl.StringSliceVar(&opts.Skips, "skips", nil, "basic: bundles the new entry skips")
	fl.StringVar(&opts.SkipRange, "skip-range", "", "basic: the new entry's skipRange, e.g. '>=0.1.0 <0.3.0'")
	fl.BoolVar(&opts.NoCSVEdges, "no-csv-edges", false, "basic: do not take the entry's edges from the bundle's CSV (replaces, skips, olm.skipRange)")
	fl.BoolVar(&opts.All, "all", false, "edit every template --mapping names")
	fl.StringVar(&opts.Mapping, "mapping", "", "a catalog repository's ci.yaml (with --all)")
	opts.Pull.AddFlags(fl)
	return cmd
}

// Run pulls the bundle, edits every template, and writes those that
// changed once all are edited.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if err := opts.Pull.Validate(); err != nil {
		return exit.Usagef("%v", err)
	}
	templates := []string{opts.Template}
	if opts.All {
		repo, err := catalogrepo.Load(opts.Mapping)
		if err != nil {
			return exit.With(exit.Failed, err)
		}
		templates = nil
		seen := map[string]bool{}
		for _, m := range repo.Mappings {
			if p := repo.TemplatePath(m); !seen[p] {
				// Edited in place: a template a link keeps outside the
				// repository is not the repository's to edit.
				if err := atomicfile.CheckInside(repo.TemplateBase(), p); err != nil {
					return exit.With(exit.Failed, fmt.Errorf("template %s: %w\nno template was changed", m.Template, err))
				}
				seen[p] = true
				templates = append(templates, p)
			}
		}
	}
	datas := make([][]byte, len(templates))
	for i, t := range templates {
		// Bounded as render-template's read of the same file.
		data, err := iostreams.ReadFile(ctx, t, iostreams.DefaultMaxInput)
		if err != nil {
			return exit.With(exit.Failed, fmt.Errorf("read template: %w", err))
		}
		datas[i] = data
	}
	r := bundleimages.New(func() (*image.Client, error) { return f.ImageClient(opts.Pull) }, fbc.RenderOptions{})
	blob, err := r.Render(ctx, opts.Image)
	if err != nil {
		return indexio.Interrupted(ctx, exit.With(exit.Failed, fmt.Errorf("bundle image %s %w", opts.Image, err)))
	}
	b := tmpladd.Bundle{Name: blob.Name, Package: blob.Package, Image: opts.Image}
	if v, err := graph.Version(blob); err == nil {
		b.Version = v.String()
	}
	add := opts.Options
	if !opts.NoCSVEdges {
		if add.CSV, err = tmpladd.CSVEdges(blob.CSV); err != nil {
			return exit.With(exit.Failed, fmt.Errorf("bundle image %s: %w; give the edges (--replaces, --skips, --skip-range) or --no-csv-edges", opts.Image, err))
		}
	}
	results := make([]*tmpladd.Result, len(templates))
	for i, t := range templates {
		res, err := tmpladd.Add(t, datas[i], b, add)
		if err != nil {
			return exit.With(exit.Failed, fmt.Errorf("add %s: %w\nno template was changed", b.Name, err))
		}
		results[i] = res
	}
	for i, t := range templates {
		if !results[i].Changed {
			fmt.Fprintf(f.IO.ErrOut, "%s: %s is there already; nothing to change\n", printable.Name(t), printable.Name(b.Name))
			continue
		}
		if err := atomicfile.WriteFile(t, results[i].Data); err != nil {
			return exit.With(exit.Failed, fmt.Errorf("write %s: %w", t, err))
		}
		for _, c := range results[i].Changes {
			fmt.Fprintf(f.IO.ErrOut, "%s: %s\n", printable.Name(t), printable.Text(c))
		}
	}
	return nil
}
