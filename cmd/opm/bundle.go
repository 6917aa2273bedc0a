package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/validate"
)

func newBundleCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bundle",
		Short: "Work with operator bundles",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newBundleValidateCmd(a), newBundleGenerateCmd(a), newBundleBuildCmd(a))
	return cmd
}

type bundleValidateOptions struct {
	lintFlags
	Paths     []string
	ListRules bool
	FromFiles bool
	Image     image.Options
}

func newBundleValidateCmd(a *app) *cobra.Command {
	opts := &bundleValidateOptions{}
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
time, with a progress count on a terminal.

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
			return runBundleValidate(cmd.Context(), a, opts)
		},
	}
	opts.add(cmd)
	cmd.Flags().BoolVar(&opts.ListRules, "list-rules", false, "list the validation rules (id, severity, scope, what it checks) and exit")
	_ = cmd.Flags().SetAnnotation("list-rules", noEnvAnnotation, []string{"true"})
	cmd.Flags().BoolVar(&opts.FromFiles, "from-files", false, "the arguments are files: validate the bundle directories that hold them (for pre-commit hooks)")
	_ = cmd.Flags().SetAnnotation("from-files", noEnvAnnotation, []string{"true"})
	opts.Image.AddFlags(cmd.Flags())
	return cmd
}

func runBundleValidate(ctx context.Context, a *app, opts *bundleValidateOptions) error {
	vopts, err := opts.options(a)
	if err != nil {
		return err
	}
	if opts.ListRules {
		return a.listRules(opts.Output)
	}
	if opts.FromFiles {
		n := len(opts.Paths)
		if opts.Paths = bundleDirsOf(opts.Paths); len(opts.Paths) == 0 {
			if opts.Output == outputJSON {
				return writeJSON(a.streams.Out, noBundlesReport{Passed: true, Bundles: []any{}})
			}
			fmt.Fprintf(a.streams.ErrOut, "note: %s in no bundle directory (one holding manifests/ and metadata/): nothing to validate\n", filesAre(n))
			return nil
		}
	}
	if len(opts.Paths) == 0 {
		return usageErrorf("no bundle given: opm bundle validate PATH...\nRun 'opm bundle validate --help' for usage.")
	}
	if err := opts.Image.Validate(); err != nil {
		return usageErrorf("%v", err)
	}
	src := &imageInputs{opener: &bundleOpener{imageOpts: opts.Image}}
	inputs := make([]validate.Input, 0, len(opts.Paths))
	var errs []error
	for _, p := range opts.Paths {
		in, err := src.inputFor(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		inputs = append(inputs, in)
	}
	if len(errs) > 0 {
		return &ExitError{Code: exitUsage, Err: errors.Join(errs...)}
	}
	if src.images > 0 {
		// Pulling is mostly waiting on the network: more at once than CPUs.
		vopts.Concurrency = max(imageConcurrency, runtime.GOMAXPROCS(0))
		if a.streams.ErrTTY {
			src.progress = newProgress(a.streams.ErrOut, "pulled", src.images)
		}
	}
	res := validate.Run(ctx, inputs, vopts)
	src.progress.finish()
	if ctx.Err() != nil {
		return &ExitError{Code: exitInterrupted, Err: errors.New("interrupted")}
	}
	err = a.render(res, &opts.lintFlags, vopts.FailOn, "bundle")
	if n := src.failed.Load(); n > 0 {
		// The report names each image that could not be opened (rule
		// bundle-load); that is an I/O error, not a verdict on a bundle.
		return &ExitError{Code: exitUsage, Err: fmt.Errorf("%d image(s) could not be opened", n)}
	}
	return err
}

// imageConcurrency is how many bundle images are pulled at once.
const imageConcurrency = 16

// imageInputs turns arguments into validate inputs, opening images through
// one bundleOpener (one client, so connections are reused).
type imageInputs struct {
	opener   *bundleOpener
	images   int
	progress *progress
	// failed counts images that could not be opened at all.
	failed atomic.Int64
}

// inputFor turns a PATH|IMAGE argument into something to validate: an
// existing directory is a bundle directory, anything else an image reference
// (a mistyped path is refused here, before any registry is asked).
func (s *imageInputs) inputFor(arg string) (validate.Input, error) {
	local, err := isLocal(arg)
	if err != nil {
		return validate.Input{}, err
	}
	if local {
		return dirInput(arg)
	}
	if err := checkArg(arg); err != nil {
		return validate.Input{}, err
	}
	s.images++
	return validate.Input{
		Path: arg,
		Load: func(ctx context.Context) (*bundle.Bundle, error) {
			ob, err := s.opener.Open(ctx, arg)
			defer s.progress.step()
			if ob == nil {
				if ctx.Err() == nil {
					s.failed.Add(1)
				}
				return nil, err
			}
			return ob.Bundle, err
		},
	}, nil
}

// dirInput is a bundle directory to validate.
func dirInput(path string) (validate.Input, error) {
	// Refuse an unreadable directory here, as an I/O error, rather than
	// reporting it as a finding.
	f, err := os.Open(path)
	if err == nil {
		_, err = f.ReadDir(1)
		f.Close()
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, io.EOF) {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return validate.Input{}, fmt.Errorf("%s: %w", path, err)
	}
	return validate.Input{
		Path: path,
		Load: func(context.Context) (*bundle.Bundle, error) { return bundle.LoadDir(path) },
	}, nil
}

// listRules prints the rule catalog to stdout, where the user asked for it.
func (a *app) listRules(output string) error {
	rules := validate.Catalog()
	if output == outputJSON {
		return writeJSON(a.streams.Out, rules)
	}
	t := newTheme(a.streams.Out, a.streams.OutTTY)
	return validate.WriteCatalogText(a.streams.Out, rules, t.validateStyles())
}
