// Package validate is `opm validate`: the catalog-* rules over a
// file-based catalog directory or index image.
package validate

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/fbcflags"
	"github.com/opmkit/opm/internal/cmd/lintflags"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/gcbudget"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/validate"
)

// Formats of -o besides text and json (opm's report).
const (
	// SARIF is a SARIF 2.1.0 log.
	SARIF = "sarif"
	// YAML is opm's report (as -o json writes it) in YAML.
	YAML = "yaml"
	// UpstreamJSON and UpstreamYAML are upstream opm's `validate -o json|yaml`
	// result: {"passed": bool, "error": {"message": "..."}}, error left out
	// when the catalog passed, for scripts written against upstream.
	UpstreamJSON = "upstream-json"
	UpstreamYAML = "upstream-yaml"
)

// formats are the -o values, in the order help lists them.
var formats = []string{output.Text, output.JSON, YAML, SARIF, UpstreamJSON, UpstreamYAML}

// Options are the flags and argument of opm validate.
type Options struct {
	// Dir is the catalog (directory or index image) to check; Dirs, when
	// set, are several, each reported on its own.
	Dir  string
	Dirs []string
	lintflags.Flags
	Limits fbc.Limits
	// Image is how an index image given instead of DIR is pulled.
	Image image.Options
}

// NewCmd is `opm validate`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "validate DIR|IMAGE...",
		Short: "Check a file-based catalog directory or index image",
		Long: `Check the file-based catalog in DIR with the catalog-* rules (opm bundle
validate --list-rules lists them): syntax of every file, unique packages,
channels and bundles, default channels that exist, channel entries that name
bundles of the package, one head per channel, no cycles, bundle properties.

IMAGE, an index image (pulled as render pulls it), is checked the same way:
its file-based catalog (the directory its
operators.operatorframework.io.index.configs.v1 label names, also when it
holds a sqlite database too), or else its sqlite database, rendered.

--ocp-version 4.17 (or later) refuses olm.bundle.object properties, which
catalogs for those OpenShift releases replace with olm.csv.metadata;
--allowed-registries quay.io,registry.example.com checks every bundle image
and related image against those registries.

--select olmv1 (or --select default,olmv1 for both) checks what OLM v1's
operator-controller refuses or limits: dependency properties, bundles without
the AllNamespaces install mode, owned API services, webhooks (docs/olmv1.md);
for an IMAGE also olmv1-catalog-image: catalogd refuses an image without the
configs label, such as a sqlite-only index image.

Several catalogs (opm validate catalogs/*) are checked in one run, each
reported on its own with its verdict, and the run fails when one does.

Findings are printed as bundle validate prints them (rule, severity, file,
line, hint); the exit status is 1 when a finding at or above --fail-on was
found, 2 when DIR or IMAGE cannot be read.

Machine-readable output goes to stdout: -o json (opm's report: passed, and
each finding with rule, severity, file, line, field, message and hint),
-o yaml (the same in YAML), -o sarif (SARIF 2.1.0), and -o upstream-json or
-o upstream-yaml: upstream opm's {"passed": bool, "error": {"message": "..."}}
(what upstream's validate -o json|yaml prints; the message lists the failing
findings, one a line).`,
		Example: `  opm validate catalog/
  opm validate quay.io/me/index:v1 --select default,olmv1
  opm validate catalog/ -o sarif > catalog.sarif
  opm validate catalog/ -o upstream-json | jq -e .passed
  opm validate catalogs/*                     # every OpenShift catalog of a repository
  opm validate catalogs/v4.17 --ocp-version 4.17 --allowed-registries registry.redhat.io`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			if len(args) > 1 {
				opts.Dirs = args
			}
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Output, "output", "o", output.Text, "output format: text, json, yaml, sarif, upstream-json or upstream-yaml (all but text go to stdout)")
	fl.StringSliceVar(&opts.Select, "select", nil, "run only these rule ids or rule sets (default, olmv1; comma-separated, repeatable)")
	fl.StringSliceVar(&opts.Skip, "skip", nil, "never run these rule ids (comma-separated, repeatable)")
	fl.StringVar(&opts.FailOn, "fail-on", "error", "least severe finding that fails the run: error, warning or info")
	fl.StringVar(&opts.OCPVersion, "ocp-version", "", "OpenShift release the catalog is for (4.17 and later: no olm.bundle.object; runs catalog-openshift-csv-metadata)")
	fl.StringSliceVar(&opts.AllowedRegistries, "allowed-registries", nil, "registries (host[:port] or host/path prefixes) that bundle and related images may name; runs catalog-image-registry-allowed")
	opts.Image.AddFlags(fl)
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions([]string{"error", "warning", "info"}, cobra.ShellCompDirectiveNoFileComp))
	fbcflags.AddLimitFlags(fl, &opts.Limits)
	return cmd
}

// Run validates the catalog and renders the report.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	format := opts.Output
	switch format {
	case SARIF, YAML, UpstreamJSON, UpstreamYAML:
		// lintflags knows text and json; these are written here.
		opts.Output = output.Text
	}
	vopts, err := opts.Options(f)
	if err != nil {
		known := false
		for _, k := range formats {
			known = known || k == format
		}
		if !known {
			return exit.Usagef("invalid --output %q%s: use text, json, yaml, sarif, upstream-json or upstream-yaml", format, f.From("output"))
		}
		return err
	}
	dirs := opts.Dirs
	if len(dirs) == 0 {
		dirs = []string{opts.Dir}
	}
	var reports []validate.BundleReport
	for _, dir := range dirs {
		findings, err := catalogFindings(ctx, f, opts, vopts, dir)
		if err != nil {
			return err
		}
		reports = append(reports, validate.BundleReport{Path: dir, Findings: findings})
	}
	return report(ctx, f, opts, vopts, format, reports)
}

// catalogFindings checks one catalog: an index image, or a directory.
func catalogFindings(ctx context.Context, f *factory.Factory, opts *Options, vopts validate.Options, dir string) ([]validate.Finding, error) {
	if isImage(dir) {
		return imageFindings(ctx, f, opts, vopts, dir)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, exit.With(exit.Usage, fmt.Errorf("validate %s: %w", dir, err))
	}
	if !st.IsDir() {
		return nil, exit.Usagef("validate %s: not a directory (give the catalog's root directory)", dir)
	}
	// An unreadable directory is an I/O error, not a finding.
	if _, err := os.ReadDir(dir); err != nil {
		return nil, exit.With(exit.Usage, fmt.Errorf("validate %s: %w", dir, err))
	}
	defer gcbudget.Batch()()
	publishing := func(c *fbc.Catalog) []validate.Finding { return fbc.ValidatePublishing(c, vopts) }
	findings, err := fbc.ValidateDir(ctx, dir, vopts.EnabledSet(validate.SetOLMv1), fbc.LoadOptions{Limits: opts.Limits}, publishing)
	if err := exit.IfInterrupted(ctx); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, exit.With(exit.Usage, fmt.Errorf("validate %s: %w", dir, err))
	}
	return findings, nil
}

// report keeps the findings of enabled rules and renders them as -o says.
func report(ctx context.Context, f *factory.Factory, opts *Options, vopts validate.Options, format string, reports []validate.BundleReport) error {
	if err := exit.IfInterrupted(ctx); err != nil {
		return err
	}
	for i := range reports {
		kept := []validate.Finding{}
		for _, fd := range reports[i].Findings {
			if vopts.Enabled(fd.Rule) {
				kept = append(kept, fd)
			}
		}
		reports[i].Findings = kept
	}
	res := validate.NewResult(reports, vopts.FailOn)
	var werr error
	switch format {
	case SARIF:
		v := f.Version()
		werr = validate.WriteSARIF(f.IO.Out, res, validate.SARIFOptions{Version: v.Version})
	case YAML:
		werr = validate.WriteYAML(f.IO.Out, res)
	case UpstreamJSON, UpstreamYAML:
		werr = validate.WriteUpstream(f.IO.Out, res, vopts.FailOn, format == UpstreamYAML)
	default:
		return opts.Render(f, res, vopts.FailOn, "catalog")
	}
	if werr != nil {
		return exit.With(exit.Usage, werr)
	}
	if !res.Passed {
		return exit.Findings
	}
	return nil
}
