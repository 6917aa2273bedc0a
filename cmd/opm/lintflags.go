package main

import (
	"strings"

	"github.com/blang/semver/v4"
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/validate"
)

// lintFlags are the flags that bundle validate and csv lint share.
type lintFlags struct {
	Output     string
	Select     []string
	Skip       []string
	FailOn     string
	K8sVersion string
}

func (l *lintFlags) add(cmd *cobra.Command) {
	addOutputFlag(cmd, &l.Output)
	f := cmd.Flags()
	f.StringSliceVar(&l.Select, "select", nil, "run only these rule ids (comma-separated, repeatable)")
	f.StringSliceVar(&l.Skip, "skip", nil, "never run these rule ids (comma-separated, repeatable)")
	f.StringVar(&l.FailOn, "fail-on", "error", "least severe finding that fails the run: error, warning or info")
	f.StringVar(&l.K8sVersion, "k8s-version", "", "Kubernetes version the bundles target, for deprecated-API rules (default: each CSV's minKubeVersion)")
}

// options checks the flags and turns them into validate.Options.
func (l *lintFlags) options(a *app) (validate.Options, error) {
	var opts validate.Options
	if err := a.checkOutput(l.Output); err != nil {
		return opts, err
	}
	failOn, err := validate.ParseSeverity(l.FailOn)
	if err != nil {
		return opts, usageErrorf("invalid --fail-on %q%s: use error, warning or info", l.FailOn, a.from("fail-on"))
	}
	if v := strings.TrimSpace(l.K8sVersion); v != "" {
		if _, err := semver.ParseTolerant(strings.TrimPrefix(v, "v")); err != nil {
			return opts, usageErrorf("invalid --k8s-version %q%s: want a Kubernetes version such as 1.25 or 1.25.0", l.K8sVersion, a.from("k8s-version"))
		}
	}
	opts = validate.Options{
		Select:     ruleIDs(l.Select),
		Skip:       ruleIDs(l.Skip),
		FailOn:     failOn,
		K8sVersion: strings.TrimSpace(l.K8sVersion),
	}
	if err := opts.CheckRuleIDs(); err != nil {
		return opts, &ExitError{Code: exitUsage, Err: err}
	}
	return opts, nil
}

// ruleIDs cleans a --select/--skip list: spaces trimmed, empty entries
// dropped.
func ruleIDs(in []string) []string {
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

// render prints a result: JSON to stdout, or the text report to stderr.
// It returns errFindings when the result failed.
func (a *app) render(res *validate.Result, l *lintFlags, failOn validate.Severity, noun string) error {
	if l.Output == outputJSON {
		if err := validate.WriteJSON(a.streams.Out, res); err != nil {
			return &ExitError{Code: exitUsage, Err: err}
		}
	} else {
		t := newTheme(a.streams.ErrOut, a.streams.ErrTTY)
		if err := validate.WriteText(a.streams.ErrOut, res, validate.TextOptions{Styles: t.validateStyles(), FailOn: failOn, Noun: noun}); err != nil {
			return &ExitError{Code: exitUsage, Err: err}
		}
	}
	if !res.Passed {
		return errFindings
	}
	return nil
}
