// Package validate is `opm validate`: the catalog-* rules over a
// file-based catalog directory.
package validate

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/lintflags"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/validate"
)

// SARIF is the -o value for a SARIF 2.1.0 log.
const SARIF = "sarif"

// Options are the flags and argument of opm validate.
type Options struct {
	Dir string
	lintflags.Flags
}

// NewCmd is `opm validate`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "validate DIR",
		Short: "Check a file-based catalog directory",
		Long: `Check the file-based catalog in DIR with the catalog-* rules (opm bundle
validate --list-rules lists them): syntax of every file, unique packages,
channels and bundles, default channels that exist, channel entries that name
bundles of the package, one head per channel, no cycles, bundle properties.

--select olmv1 (or --select default,olmv1 for both) checks what OLM v1's
operator-controller refuses or limits: dependency properties, bundles without
the AllNamespaces install mode, owned API services, webhooks (docs/olmv1.md).

Findings are printed as bundle validate prints them (rule, severity, file,
line, hint); the exit status is 1 when a finding at or above --fail-on was
found, 2 when DIR cannot be read.`,
		Example: `  opm validate catalog/
  opm validate catalog/ -o sarif > catalog.sarif`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Output, "output", "o", output.Text, "output format: text, json or sarif (json and sarif go to stdout)")
	fl.StringSliceVar(&opts.Select, "select", nil, "run only these rule ids or rule sets (default, olmv1; comma-separated, repeatable)")
	fl.StringSliceVar(&opts.Skip, "skip", nil, "never run these rule ids (comma-separated, repeatable)")
	fl.StringVar(&opts.FailOn, "fail-on", "error", "least severe finding that fails the run: error, warning or info")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{output.Text, output.JSON, SARIF}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions([]string{"error", "warning", "info"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Run validates the catalog and renders the report.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	format := opts.Output
	if format == SARIF {
		// lintflags knows text and json; SARIF is written here.
		opts.Output = output.Text
	}
	vopts, err := opts.Options(f)
	if err != nil {
		if format != SARIF && format != output.Text && format != output.JSON {
			return exit.Usagef("invalid --output %q%s: use text, json or sarif", format, f.From("output"))
		}
		return err
	}
	st, err := os.Stat(opts.Dir)
	if err != nil {
		return exit.With(exit.Usage, fmt.Errorf("validate %s: %w", opts.Dir, err))
	}
	if !st.IsDir() {
		return exit.Usagef("validate %s: not a directory (give the catalog's root directory)", opts.Dir)
	}
	// An unreadable directory is an I/O error, not a finding.
	if _, err := os.ReadDir(opts.Dir); err != nil {
		return exit.With(exit.Usage, fmt.Errorf("validate %s: %w", opts.Dir, err))
	}
	c, loadErr := fbc.LoadDir(opts.Dir)
	var findings []validate.Finding
	if loadErr != nil {
		findings = fbc.LoadFindings(loadErr)
	}
	if c != nil {
		findings = append(findings, fbc.Validate(c)...)
		for _, r := range validate.Rules() {
			if r.Set == validate.SetOLMv1 && vopts.Enabled(r.ID) {
				findings = append(findings, fbc.ValidateOLMv1(c)...)
				break
			}
		}
	}
	if err := exit.IfInterrupted(ctx); err != nil {
		return err
	}
	kept := findings[:0]
	for _, fd := range findings {
		if vopts.Enabled(fd.Rule) {
			kept = append(kept, fd)
		}
	}
	res := validate.NewResult([]validate.BundleReport{{Path: opts.Dir, Findings: kept}}, vopts.FailOn)
	if format == SARIF {
		v := f.Version()
		if err := validate.WriteSARIF(f.IO.Out, res, validate.SARIFOptions{Version: v.Version}); err != nil {
			return exit.With(exit.Usage, err)
		}
		if !res.Passed {
			return exit.Findings
		}
		return nil
	}
	return opts.Render(f, res, vopts.FailOn, "catalog")
}
