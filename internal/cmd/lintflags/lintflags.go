// Package lintflags holds the flags that bundle validate, bundle build and
// csv lint share (-o, --select, --skip, --fail-on, --k8s-version), their
// checking into validate.Options, and the rendering of a validate result.
package lintflags

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/openshift"
	"github.com/opmkit/opm/internal/validate"
)

// Flags are the shared lint flags.
type Flags struct {
	Output     string
	Select     []string
	Skip       []string
	FailOn     string
	K8sVersion string
	// AllowedRegistries is --allowed-registries (image-registry-allowed).
	AllowedRegistries []string
	// Categories is --categories: a JSON file {"categories": [...]} of the
	// categories operatorhub-categories accepts instead of the standard
	// ones; OPERATOR_BUNDLE_CATEGORIES names it when the flag is not set,
	// as it does for operator-sdk.
	Categories string
	// OCPVersion is --ocp-version, for the openshift rules.
	OCPVersion string

	// formats are the -o values the command accepts.
	formats []string
}

// Project addresses written into SARIF logs.
const (
	InformationURI = "https://github.com/opmkit/opm"
	RulesDocURI    = "https://github.com/opmkit/opm/blob/main/docs/validation.md"
)

// Add adds the flags to cmd; formats are its -o values (text and json
// when none are given; bundle validate and csv lint add sarif).
func (l *Flags) Add(cmd *cobra.Command, formats ...string) {
	if len(formats) == 0 {
		formats = []string{output.Text, output.JSON}
	}
	l.formats = formats
	output.AddFlag(cmd, &l.Output, formats...)
	f := cmd.Flags()
	f.StringSliceVar(&l.Select, "select", nil, "run only these rule ids or rule sets ("+strings.Join(validate.Sets, ", ")+"; comma-separated, repeatable)")
	f.StringSliceVar(&l.Skip, "skip", nil, "never run these rule ids (comma-separated, repeatable)")
	f.StringVar(&l.FailOn, "fail-on", "error", "least severe finding that fails the run: error, warning or info")
	f.StringVar(&l.K8sVersion, "k8s-version", "", "Kubernetes version the bundles target, for deprecated-API rules (default: each CSV's minKubeVersion)")
	f.StringVar(&l.Categories, "categories", "", "JSON file {\"categories\": [...]} of the categories operatorhub-categories accepts instead of the standard ones (default: the file $OPERATOR_BUNDLE_CATEGORIES names)")
	f.StringVar(&l.OCPVersion, "ocp-version", "", "OpenShift release the bundles target, for the openshift rules (default: each bundle's com.redhat.openshift.versions range)")
	f.StringSliceVar(&l.AllowedRegistries, "allowed-registries", nil, "registries (host[:port] or host/path prefixes) that pull specs may name; runs image-registry-allowed")
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions([]string{"error", "warning", "info"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("select", CompleteRuleIDs)
	_ = cmd.RegisterFlagCompletionFunc("skip", CompleteRuleIDs)
}

// CompleteRuleIDs completes a --select/--skip value with the ids of the
// validation rules, each described by its summary. Ids already in the
// comma-separated value are not offered again.
func CompleteRuleIDs(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	prefix := ""
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		prefix = toComplete[:i+1]
	}
	have := map[string]bool{}
	for _, id := range strings.Split(prefix, ",") {
		have[strings.TrimSpace(id)] = true
	}
	var out []cobra.Completion
	for _, set := range validate.Sets {
		if !have[set] {
			out = append(out, cobra.CompletionWithDesc(prefix+set, "rule set"))
		}
	}
	for _, r := range validate.Rules() {
		if !have[r.ID] {
			out = append(out, cobra.CompletionWithDesc(prefix+r.ID, r.What))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// Options checks the flags and turns them into validate.Options; f names
// where a bad value came from.
func (l *Flags) Options(f *factory.Factory) (validate.Options, error) {
	var opts validate.Options
	formats := l.formats
	if len(formats) == 0 {
		formats = []string{output.Text, output.JSON}
	}
	if err := output.CheckOneOf(l.Output, f.From("output"), formats...); err != nil {
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
	ocp := strings.TrimSpace(l.OCPVersion)
	if ocp != "" {
		if _, err := openshift.ParseRelease(ocp); err != nil {
			return opts, exit.Usagef("invalid --ocp-version %q%s: %v", l.OCPVersion, f.From("ocp-version"), err)
		}
	}
	categories, err := l.categories(f)
	if err != nil {
		return opts, err
	}
	opts = validate.Options{
		Select:     RuleIDs(l.Select),
		Skip:       RuleIDs(l.Skip),
		FailOn:     failOn,
		K8sVersion: strings.TrimSpace(l.K8sVersion),

		AllowedRegistries: RuleIDs(l.AllowedRegistries),
		Categories:        categories,
		OCPVersion:        ocp,
	}
	if err := opts.CheckRuleIDs(); err != nil {
		return opts, exit.With(exit.Usage, err)
	}
	return opts, nil
}

// categories reads the custom category list of --categories, or of the
// file OPERATOR_BUNDLE_CATEGORIES names; nil when neither is given.
func (l *Flags) categories(f *factory.Factory) ([]string, error) {
	path, from := l.Categories, f.From("categories")
	if path == "" && f.LookupEnv != nil {
		if v, ok := f.LookupEnv("OPERATOR_BUNDLE_CATEGORIES"); ok && v != "" {
			path, from = v, " (from OPERATOR_BUNDLE_CATEGORIES)"
		}
	}
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, exit.Usagef("custom categories%s: %v", from, err)
	}
	var doc struct {
		Categories *[]string `json:"categories"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, exit.Usagef("custom categories %s%s: %v; want {\"categories\": [\"Database\", ...]}", path, from, err)
	}
	if doc.Categories == nil {
		return nil, exit.Usagef("custom categories %s%s: no \"categories\" list; want {\"categories\": [\"Database\", ...]}", path, from)
	}
	return append([]string{}, *doc.Categories...), nil
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

// Render prints a result: JSON or SARIF to stdout, or the text report to
// stderr. It returns exit.Findings when the result failed.
func (l *Flags) Render(f *factory.Factory, res *validate.Result, failOn validate.Severity, noun string) error {
	switch l.Output {
	case output.JSON:
		if err := validate.WriteJSON(f.IO.Out, res); err != nil {
			return exit.With(exit.Usage, err)
		}
	case output.SARIF:
		if err := WriteSARIF(f, res); err != nil {
			return exit.With(exit.Usage, err)
		}
	default:
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

// WriteSARIF writes res as a SARIF log to stdout, with this build's
// version and file locations relative to the working directory (the
// repository root, when run from there as code scanning expects).
func WriteSARIF(f *factory.Factory, res *validate.Result) error {
	wd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("working directory for SARIF locations: %w", err)
	}
	return validate.WriteSARIF(f.IO.Out, res, validate.SARIFOptions{
		Version:        f.Version().Version,
		InformationURI: InformationURI,
		RulesDocURI:    RulesDocURI,
		BaseDir:        wd,
	})
}
