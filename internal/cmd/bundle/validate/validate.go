// Package validate is `opm bundle validate`.
package validate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/cmd/bundlesource"
	"github.com/opmkit/opm/internal/cmd/config"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/lintflags"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/iostreams"
	"github.com/opmkit/opm/internal/printable"
	"github.com/opmkit/opm/internal/validate"
)

// Options are the flags and arguments of opm bundle validate.
type Options struct {
	lintflags.Flags
	Paths     []string
	ListRules bool
	FromFiles bool
	// CIYAML is --ci-yaml: the operator's ci.yaml for --select community.
	CIYAML string
	Image  image.Options
	Load   bundle.LoadOptions
}

// NewCmd is `opm bundle validate`; runF, when not nil, runs instead of Run
// (tests of flag parsing).
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "validate PATH|IMAGE...",
		Short: "Validate bundle directories and bundle images",
		Long: `Validate one or more bundle directories (manifests/ and metadata/) or bundle
images, all in one run: a shell glob over a whole operators repository works.

An argument that is an existing directory is a directory; anything else is
an image reference: a registry (quay.io/org/bundle:v1, docker://...),
oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE. An image's
labels are checked against its metadata/annotations.yaml (rule image-labels),
then the same rules run as for a directory. Images are pulled several at a
time, with a progress count (on a terminal one line redrawn, elsewhere
a plain line at most every 5 seconds). An image that cannot be pulled is a
bundle-load error in its report (exit 2); in the text report a reason of
its registry's that several images share (it did not answer, it wants
credentials) is said once after the report, with the images.

A directory that is not a bundle itself is not searched for bundles, except
for one bundle nested up to three levels down (a repository's bundle/
directory); give version directories (operators/etcd/*/), not the package.

With --from-files the arguments are files, as a pre-commit hook or
git diff --name-only gives them: every bundle directory holding one of them
is validated, and files in no bundle are ignored.

Exit status: 0 when no finding fails the run (see --fail-on), 1 when some do,
2 for a usage or I/O error (bad flag, unknown rule, unreadable path).`,
		Example: `  opm bundle validate ./bundle
  opm bundle validate operators/*/*/ --fail-on warning
  opm bundle validate quay.io/org/etcd-bundle:0.9.4 oci:./layout:0.9.5
  opm bundle validate ./bundle -o json | jq '.bundles[].findings[]'
  opm bundle validate --list-rules
  opm bundle validate --from-files $(git diff --cached --name-only)`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	opts.Add(cmd, output.Text, output.JSON, output.SARIF)
	cmd.Flags().BoolVar(&opts.ListRules, "list-rules", false, "list the validation rules (id, severity, scope, what it checks) and exit")
	_ = cmd.Flags().SetAnnotation("list-rules", config.NoEnvAnnotation, []string{"true"})
	cmd.Flags().BoolVar(&opts.FromFiles, "from-files", false, "the arguments are files: validate the bundle directories that hold them (for pre-commit hooks)")
	_ = cmd.Flags().SetAnnotation("from-files", config.NoEnvAnnotation, []string{"true"})
	cmd.Flags().StringVar(&opts.CIYAML, "ci-yaml", "", "the operator's ci.yaml for the community rules (updateGraph; default: the ci.yaml beside the bundle directories)")
	opts.Image.AddFlags(cmd.Flags())
	bundlesource.AddFlags(cmd.Flags(), &opts.Load)
	return cmd
}

// Run validates the bundles opts names and renders the report.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	vopts, err := opts.Options(f)
	if err != nil {
		return err
	}
	if opts.CIYAML != "" {
		if _, err := os.Stat(opts.CIYAML); err != nil {
			return exit.Usagef("--ci-yaml: %v", err)
		}
		vopts.CIYAML = opts.CIYAML
	}
	if opts.ListRules {
		if opts.Output == output.SARIF {
			return exit.Usagef("--list-rules prints text or json; -o sarif is for validation results")
		}
		return listRules(f, opts.Output)
	}
	paths := opts.Paths
	if opts.FromFiles {
		n := len(paths)
		if paths = BundleDirsOf(paths); len(paths) == 0 {
			switch opts.Output {
			case output.JSON:
				return output.WriteJSON(f.IO.Out, noBundlesReport{Passed: true, Bundles: []any{}})
			case output.SARIF:
				return lintflags.WriteSARIF(f, validate.NewResult(nil, vopts.FailOn))
			}
			fmt.Fprintf(f.IO.ErrOut, "note: %s in no bundle directory (one holding manifests/ and metadata/): nothing to validate\n", filesAre(n))
			return nil
		}
	}
	if !opts.FromFiles {
		// A shell glob over a repository (operators/*/*) also matches
		// files beside the bundles (ci.yaml): skipped, said once.
		var note string
		if paths, note = bundle.SkipFiles(paths); note != "" {
			fmt.Fprintln(f.IO.ErrOut, note)
		}
	}
	if len(paths) == 0 {
		// Not a cobra Args check: no argument is right with --list-rules and
		// for pre-commit's file lists.
		return exit.Usagef("no bundle given: opm bundle validate PATH...\nUsage: opm bundle validate PATH|IMAGE... [flags]\nRun 'opm bundle validate --help' for more.")
	}
	if err := opts.Image.Validate(); err != nil {
		return exit.Usagef("%v", err)
	}
	src := bundlesource.NewInputs(bundlesource.NewOpener(opts.Image, f.ImageClient), opts.Load)
	inputs := make([]validate.Input, 0, len(paths))
	var errs []error
	for _, p := range paths {
		in, err := src.Input(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		inputs = append(inputs, in)
	}
	if len(errs) > 0 {
		return exit.With(exit.Usage, errors.Join(errs...))
	}
	if src.Images > 0 {
		// Pulling is mostly waiting on the network: more at once than CPUs.
		vopts.Concurrency = max(imageConcurrency, runtime.GOMAXPROCS(0))
		src.Progress = output.Progress(f.IO, opts.Output, "pulled", src.Images)
	}
	if opts.Output == output.JSON || opts.Output == output.SARIF {
		// One document: it is written once every bundle is done.
		res := validate.Run(ctx, inputs, vopts)
		src.Progress.Finish()
		if err := exit.IfInterrupted(ctx); err != nil {
			return err
		}
		err = opts.Render(f, res, vopts.FailOn, "bundle")
	} else {
		// A registry's reason (it did not answer, it wants credentials)
		// is said once below, not in the report of each of its images.
		src.ShortShared = true
		err = streamText(ctx, f, inputs, vopts, src.Progress)
	}
	if n := src.Failed.Load(); n > 0 {
		// The report names each image that could not be opened (rule
		// bundle-load); that is an I/O error, not a verdict on a bundle.
		msg := printable.Count(int(n), "image", "images") + " could not be opened"
		for _, c := range src.SharedCauses() {
			msg += "\n  " + c
		}
		return exit.With(exit.Usage, errors.New(msg))
	}
	return err
}

// streamText validates inputs and prints each package's reports as soon as
// the package is done, then the summary line: on a whole catalog the first
// findings show at once, and no report is kept once printed. It returns
// exit.Findings when a finding fails the run.
func streamText(ctx context.Context, f *factory.Factory, inputs []validate.Input, vopts validate.Options, progress *iostreams.Progress) error {
	tw := validate.NewTextWriter(f.IO.ErrOut, validate.TextOptions{Styles: f.IO.ErrTheme().ValidateStyles(), FailOn: vopts.FailOn, Noun: "bundle"})
	var werr error
	validate.Stream(ctx, inputs, vopts, func(p validate.PackageReport) {
		// Images have no package before they are pulled, so every image
		// is pulled before the first package is printed: the progress line
		// is done by then.
		progress.Finish()
		if werr == nil && ctx.Err() == nil {
			werr = tw.Write(p.Bundles)
		}
	})
	progress.Finish()
	if err := exit.IfInterrupted(ctx); err != nil {
		return err
	}
	if werr == nil {
		werr = tw.Close()
	}
	if werr != nil {
		return exit.With(exit.Usage, werr)
	}
	if !tw.Passed() {
		return exit.Findings
	}
	return nil
}

// imageConcurrency is how many bundle images are pulled at once.
const imageConcurrency = 16

// listRules prints the rule catalog to stdout, where the user asked for it.
func listRules(f *factory.Factory, format string) error {
	rules := validate.Catalog()
	if format == output.JSON {
		return output.WriteJSON(f.IO.Out, rules)
	}
	return validate.WriteCatalogText(f.IO.Out, rules, f.IO.OutTheme().ValidateStyles())
}
