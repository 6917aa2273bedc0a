package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/validate"
)

func newBundleCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bundle",
		Short: "Work with operator bundles",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newBundleValidateCmd(a), newBundleGenerateCmd(a))
	return cmd
}

type bundleValidateOptions struct {
	lintFlags
	Paths     []string
	ListRules bool
	FromFiles bool
}

func newBundleValidateCmd(a *app) *cobra.Command {
	opts := &bundleValidateOptions{}
	cmd := &cobra.Command{
		Use:   "validate PATH...",
		Short: "Validate bundle directories",
		Long: `Validate one or more bundle directories (manifests/ and metadata/), all in
one run: a shell glob over a whole operators repository works.

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
	inputs := make([]validate.Input, 0, len(opts.Paths))
	var errs []error
	for _, p := range opts.Paths {
		in, err := inputFor(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		inputs = append(inputs, in)
	}
	if len(errs) > 0 {
		return &ExitError{Code: exitUsage, Err: errors.Join(errs...)}
	}
	res := validate.Run(ctx, inputs, vopts)
	if ctx.Err() != nil {
		return &ExitError{Code: exitInterrupted, Err: errors.New("interrupted")}
	}
	return a.render(res, &opts.lintFlags, vopts.FailOn, "bundle")
}

// inputFor turns a PATH argument into something to validate. Today that is
// a bundle directory; image references (docker://, oci:, a bare name) will
// be recognised here and opened with internal/image.
func inputFor(path string) (validate.Input, error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return validate.Input{}, fmt.Errorf("%s: no such directory", path)
	case err != nil:
		return validate.Input{}, err
	case !st.IsDir():
		return validate.Input{}, fmt.Errorf("%s: not a directory (a bundle is a directory holding manifests/ and metadata/; `opm csv lint` checks a lone CSV file)", path)
	}
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
