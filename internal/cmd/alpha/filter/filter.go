// Package filter is `opm alpha filter SOURCE`: the part of a catalog a
// filter configuration keeps, still a valid catalog (internal/catalogfilter).
package filter

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/catalogfilter"
	"github.com/opmkit/opm/internal/cmd/catalogsource"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/printable"
	"github.com/opmkit/opm/internal/validate"
)

// Options are the flags and argument of opm alpha filter.
type Options struct {
	Source       string
	Config       string
	KeepPackages []string
	Output       string
	OutputDir    string
	Force        bool
	Explain      bool
	Image        image.Options
}

// NewCmd is `opm alpha filter`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "filter SOURCE (--config FILE | --keep-packages P,...)",
		Short: "Keep part of a catalog (packages, channels, versions) so that it stays a valid catalog",
		Long: `Filter the catalog SOURCE (a file-based catalog directory or image, a sqlite
database file or index image) and write what is kept as a file-based
catalog: on stdout (-o json or yaml) or into --output-dir.

--config FILE is operator-registry's FilterConfiguration
(apiVersion olm.operatorframework.io/v1alpha1: packages, each with an
optional defaultChannel and channels with a versionRange) or oc-mirror's
ImageSetConfiguration (the mirror.operators stanza: packages with
defaultChannel, minVersion, maxVersion and channels with minVersion and
maxVersion; full). --keep-packages keeps whole packages.

What is written always validates: a channel keeps one head (a bundle outside
the range that the range needs to reach it is kept, and said), a default
channel that is filtered out is an error naming the channels left,
deprecations and other blobs of what is kept stay. --explain lists on stderr
every bundle removed and why, and every bundle kept outside a range.
docs/filter.md compares the two anchors' semantics.`,
		Example: `  opm alpha filter quay.io/me/index:v1 --config filter.yaml --output-dir filtered/
  opm alpha filter catalog/ --keep-packages etcd,prometheus -o yaml
  opm alpha filter registry.redhat.io/redhat/redhat-operator-index:v4.16 --config imageset-config.yaml --explain`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Source = args[0]
			if (opts.Config == "") == (len(opts.KeepPackages) == 0) {
				return exit.Usagef("give --config FILE or --keep-packages (one of them)")
			}
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Config, "config", "", "a FilterConfiguration or ImageSetConfiguration file")
	fl.StringSliceVar(&opts.KeepPackages, "keep-packages", nil, "keep these packages whole (comma-separated)")
	fl.StringVarP(&opts.Output, "output", "o", "json", "output format on stdout: json or yaml")
	// -o names the catalog's format, not a machine report: errors stay text.
	_ = fl.SetAnnotation("output", output.DataFormatAnnotation, []string{"true"})
	fl.StringVar(&opts.OutputDir, "output-dir", "", "write the catalog into this directory (a file per package) instead of stdout")
	fl.BoolVar(&opts.Force, "force", false, "with --output-dir: replace a directory that is not empty")
	fl.BoolVar(&opts.Explain, "explain", false, "list every bundle removed, and every one kept outside a range, with the reason")
	opts.Image.AddFlags(fl)
	return cmd
}

// Run filters the catalog and writes what is kept.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	format, err := fbc.ParseFormat(opts.Output)
	if err != nil {
		return exit.Usagef("invalid --output %q%s: use json or yaml", opts.Output, f.From("output"))
	}
	if err := opts.Image.Validate(); err != nil {
		return exit.Usagef("%v", err)
	}
	cfg := &catalogfilter.Config{Kind: "--keep-packages"}
	if opts.Config != "" {
		data, err := os.ReadFile(opts.Config)
		if err != nil {
			return exit.With(exit.Usage, fmt.Errorf("read filter configuration: %w", err))
		}
		if cfg, err = catalogfilter.ParseConfig(opts.Config, data, opts.Source); err != nil {
			return exit.With(exit.Usage, err)
		}
	} else {
		for _, p := range opts.KeepPackages {
			cfg.Packages = append(cfg.Packages, catalogfilter.Package{Name: p})
		}
	}
	// Read part by part, holding only the packages cfg names: filtering a
	// few packages out of a large catalog then holds those, not the
	// catalog (22,000 bundles took 2 GB whole).
	sel := catalogfilter.NewSelection(cfg)
	if _, err := catalogsource.NewOpener(f, opts.Image, fbc.RenderOptions{}).OpenEach(ctx, opts.Source, sel.Add, catalogsource.Catalogs...); err != nil {
		return indexio.Interrupted(ctx, exit.With(exit.Usage, fmt.Errorf("read %s: %w", opts.Source, err)))
	}
	out, rep, err := sel.Filter()
	if err != nil {
		return exit.With(exit.Failed, fmt.Errorf("filter %s: %w\nnothing was written", opts.Source, err))
	}
	var errs []string
	for _, fd := range fbc.Validate(out) {
		if fd.Severity == validate.Error {
			errs = append(errs, fd.Message)
		}
	}
	if len(errs) > 0 {
		return exit.With(exit.Failed, fmt.Errorf("filter %s: the result does not validate (a bug in the filter; please report it): %v\nnothing was written", opts.Source, errs))
	}
	if opts.Explain {
		if err := rep.WriteExplain(f.IO.ErrOut); err != nil {
			return exit.With(exit.Failed, err)
		}
	}
	fmt.Fprintf(f.IO.ErrOut, "kept %s, %s, %s (%d removed, %d kept outside a range)\n",
		printable.Count(len(out.Packages), "package", "packages"), printable.Count(len(out.Channels), "channel", "channels"),
		printable.Count(len(out.Bundles), "bundle", "bundles"), len(rep.Removed), len(rep.Extra))
	if opts.OutputDir != "" {
		if err := fbc.WriteDir(opts.OutputDir, out, fbc.WriteDirOptions{Format: format, Force: opts.Force, Sources: []string{opts.Source}}); err != nil {
			return exit.With(exit.Failed, err)
		}
		return nil
	}
	if err := fbc.Write(f.IO.Out, out, format); err != nil {
		return exit.With(exit.Failed, err)
	}
	return nil
}
