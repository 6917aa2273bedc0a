// Package lintflags holds the flags that bundle validate, bundle build and
// csv lint share (-o, --select, --skip, --fail-on, --k8s-version), their
// checking into validate.Options, and the rendering of a validate result.
package lintflags

import (
	"strings"

	"github.com/blang/semver/v4"
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/validate"
)

// Flags are the shared lint flags.
type Flags struct {
	Output     string
	Select     []string
	Skip       []string
	FailOn     string
	K8sVersion string
}

// Add adds the flags to cmd.
func (l *Flags) Add(cmd *cobra.Command) {
	output.AddFlag(cmd, &l.Output)
	f := cmd.Flags()
	f.StringSliceVar(&l.Select, "select", nil, "run only these rule ids (comma-separated, repeatable)")
	f.StringSliceVar(&l.Skip, "skip", nil, "never run these rule ids (comma-separated, repeatable)")
	f.StringVar(&l.FailOn, "fail-on", "error", "least severe finding that fails the run: error, warning or info")
	f.StringVar(&l.K8sVersion, "k8s-version", "", "Kubernetes version the bundles target, for deprecated-API rules (default: each CSV's minKubeVersion)")
}

// Options checks the flags and turns them into validate.Options; f names
// where a bad value came from.
func (l *Flags) Options(f *factory.Factory) (validate.Options, error) {
	var opts validate.Options
	if err := output.Check(l.Output, f.From("output")); err != nil {
		return opts, err
	}
	failOn, err := validate.ParseSeverity(l.FailOn)
	if err != nil {
		return opts, exit.Usagef("invalid --fail-on %q%s: use error, warning or info", l.FailOn, f.From("fail-on"))
	}
	if v := strings.TrimSpace(l.K8sVersion); v != "" {
		if _, err := semver.ParseTolerant(strings.TrimPrefix(v, "v")); err != nil {
			return opts, exit.Usagef("invalid --k8s-version %q%s: want a Kubernetes version such as 1.25 or 1.25.0", l.K8sVersion, f.From("k8s-version"))
		}
	}
	opts = validate.Options{
		Select:     RuleIDs(l.Select),
		Skip:       RuleIDs(l.Skip),
		FailOn:     failOn,
		K8sVersion: strings.TrimSpace(l.K8sVersion),
	}
	if err := opts.CheckRuleIDs(); err != nil {
		return opts, exit.With(exit.Usage, err)
	}
	return opts, nil
}

// RuleIDs cleans a --select/--skip list: spaces trimmed, empty entries
// dropped.
func RuleIDs(in []string) []string {
	var out []string
	for _, s := range in {
		for _, id := range strings.Split(s, ",") {
			if id = strings.TrimSpace(id); id != "" {
				out = append(out, id)
			}
		}
	}
	return out
}

// Render prints a result: JSON to stdout, or the text report to stderr.
// It returns exit.Findings when the result failed.
func (l *Flags) Render(f *factory.Factory, res *validate.Result, failOn validate.Severity, noun string) error {
	if l.Output == output.JSON {
		if err := validate.WriteJSON(f.IO.Out, res); err != nil {
			return exit.With(exit.Usage, err)
		}
	} else {
		t := f.IO.ErrTheme()
		if err := validate.WriteText(f.IO.ErrOut, res, validate.TextOptions{Styles: t.ValidateStyles(), FailOn: failOn, Noun: noun}); err != nil {
			return exit.With(exit.Usage, err)
		}
	}
	if !res.Passed {
		return exit.Findings
	}
	return nil
}
