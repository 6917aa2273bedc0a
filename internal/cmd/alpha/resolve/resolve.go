// Package resolve is `opm alpha resolve`: what OLM v0's resolver installs
// or upgrades to for a namespace's Subscriptions against catalogs,
// dependencies included, and why.
package resolve

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/catalogflag"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/printable"
	resolver "github.com/opmkit/opm/internal/resolve"
	"github.com/opmkit/opm/internal/resolve/answertext"
	"github.com/opmkit/opm/internal/resolve/clusterstate"
)

// Options are the flags of opm alpha resolve.
type Options struct {
	Catalogs          []catalogflag.Spec
	Subscriptions     []string // PKG[/CHANNEL][@STARTING-CSV]
	SubscriptionFiles []string
	Installed         []string // PKG=CSV, or a file of CSVs
	Namespace         string
	OLMv1             bool
	ClusterExtension  string
	Output            string
	Image             image.Options
}

// resolveQuestion is the resolver; tests may replace it.
var resolveQuestion = resolver.Resolve

// NewCmd is `opm alpha resolve`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "resolve --catalog SOURCE[=PRIORITY]... (--subscription PKG[/CHANNEL][@CSV]... | --subscriptions FILE) [--installed PKG=CSV|FILE]... | --olmv1 --cluster-extension FILE",
		Short: "Print what OLM installs or upgrades for Subscriptions (dependencies included) or ClusterExtensions, and why",
		Long: `Print, on stdout, what OLM v0's resolver installs or upgrades next for
the Subscriptions of each namespace, against the catalogs given (each with
its priority, as a CatalogSource's spec.priority), with the operators
already installed: operator by operator, the dependencies it brings in,
and the reasons in words, including why nothing satisfies a requirement.

Subscriptions come from --subscription PKG[/CHANNEL][@STARTING-CSV]
(the package's default channel when none is named) or --subscriptions
FILE (as 'oc get subscriptions -A -o yaml' writes them: a List, one object
or several documents). Installed operators come from --installed PKG=CSV
or --installed FILE (as 'oc get csv -A -o yaml' writes them; copied CSVs
are left out). Objects with no namespace, and the flags', are in
--namespace (else the one namespace the files name, else default); with
--namespace, other namespaces are left out. Each namespace is one question.

--catalog SOURCE[=PRIORITY] takes a catalog directory, a sqlite database
or an index image; its CatalogSource name is the source's base name (an
image's repository's last component). A Subscription's spec.source must
name one: --catalog name=NAME,source=SOURCE[,priority=N][,namespace=NS]
names it (no namespace: the global catalog namespace).

--olmv1 --cluster-extension FILE answers as OLM v1's operator-controller
instead, for each ClusterExtension of FILE (spec.source.catalog's
packageName, version, channels, upgradeConstraintPolicy and selector;
status.install.bundle, the bundle installed), the catalogs being
ClusterCatalogs (PRIORITY as spec.priority): the bundle it installs, and
why each other bundle of the package was passed over.

Exit status: 0 when every namespace resolves, 1 when one does not (its
constraints cannot all be satisfied, or a new Subscription gets no
bundle; OLM v1: a ClusterExtension resolves to no bundle), 64 for a usage error (a bad flag or file: the file, line and
field are named). docs/upgrade-graph.md ("Will OLM install it?") has the
rules and what is not modelled.`,
		Example: `  opm alpha resolve --catalog catalog/ --subscription etcd/alpha
  opm alpha resolve --catalog quay.io/me/index:4=10 --catalog deps.db --subscription demo --installed prometheus=prometheusoperator.0.47.0 -o json
  oc get subscriptions -n ops -o yaml > subs.yaml; oc get csv -n ops -o yaml > csvs.yaml
  opm alpha resolve --catalog name=redhat-operators,source=registry.redhat.io/redhat/redhat-operator-index:v4.16 --subscriptions subs.yaml --installed csvs.yaml
  opm alpha resolve --olmv1 --cluster-extension argocd.yaml --catalog name=operatorhubio,source=quay.io/operatorhubio/catalog:latest`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	output.AddFlag(cmd, &opts.Output)
	fl := cmd.Flags()
	fl.Var(catalogflag.Value{Specs: &opts.Catalogs}, "catalog", catalogflag.Usage)
	fl.StringArrayVar(&opts.Subscriptions, "subscription", nil, "a Subscription: PKG[/CHANNEL][@STARTING-CSV] (repeatable)")
	fl.StringArrayVar(&opts.SubscriptionFiles, "subscriptions", nil, "a file of Subscriptions, as 'oc get subscriptions -o yaml' writes them (repeatable)")
	fl.StringArrayVar(&opts.Installed, "installed", nil, "an installed operator: PKG=CSV, or a file of ClusterServiceVersions as 'oc get csv -A -o yaml' writes them (repeatable)")
	fl.StringVarP(&opts.Namespace, "namespace", "n", "", "the namespace of the flags' Subscriptions and CSVs; only this namespace of the files")
	fl.BoolVar(&opts.OLMv1, "olmv1", false, "answer as OLM v1's operator-controller for --cluster-extension, the catalogs being ClusterCatalogs")
	fl.StringVar(&opts.ClusterExtension, "cluster-extension", "", "with --olmv1: a file of ClusterExtensions (one, a List or several documents; status.install.bundle is the installed bundle)")
	_ = cmd.MarkFlagRequired("catalog")
	cmd.MarkFlagsRequiredTogether("olmv1", "cluster-extension")
	for _, v0 := range []string{"subscription", "subscriptions", "installed", "namespace"} {
		cmd.MarkFlagsMutuallyExclusive("olmv1", v0)
	}
	opts.Image.AddFlags(fl)
	return cmd
}

// Run reads the state, asks the resolver for each namespace and prints
// the answers.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if err := output.Check(opts.Output, f.From(output.FlagName)); err != nil {
		return err
	}
	if err := opts.Image.Validate(); err != nil {
		return exit.Usagef("%v", err)
	}
	if opts.OLMv1 {
		return runOLMv1(ctx, f, opts)
	}
	if len(opts.Subscriptions)+len(opts.SubscriptionFiles) == 0 {
		return exit.Usagef("give --subscription or --subscriptions (or --olmv1 --cluster-extension)")
	}
	st, err := clusterstate.Read(opts.Subscriptions, opts.SubscriptionFiles, opts.Installed)
	if err != nil {
		return exit.Usagef("%v", err)
	}
	catalogs, err := openCatalogs(ctx, f, opts)
	if err != nil {
		return err
	}
	qs, err := st.Questions(catalogs, opts.Namespace)
	if err != nil {
		return exit.Usagef("%v", err)
	}
	if len(qs) == 0 {
		return exit.Usagef("no Subscription in namespace %s (--namespace): the files' Subscriptions are in other namespaces", opts.Namespace)
	}
	answers := make([]resolver.Answer, len(qs))
	for i, q := range qs {
		if answers[i], err = resolveQuestion(ctx, q); err != nil {
			if ie := exit.IfInterrupted(ctx); ie != nil {
				return ie
			}
			return exit.Usagef("namespace %s: %v", q.Namespace, err)
		}
	}
	if opts.Output == output.JSON {
		err = output.WriteJSON(f.IO.Out, answertext.JSON(qs, answers))
	} else {
		_, err = io.WriteString(f.IO.Out, answertext.Text(qs, answers))
	}
	if err != nil {
		return exit.With(exit.Usage, err)
	}
	if answertext.Failed(qs, answers) {
		// The answer is printed; the status tells scripts OLM would not
		// resolve something.
		return exit.Findings
	}
	return nil
}

// openCatalogs opens the --catalog catalogs, warnings to stderr.
func openCatalogs(ctx context.Context, f *factory.Factory, opts *Options) ([]resolver.Catalog, error) {
	t := f.IO.ErrTheme()
	catalogs, err := catalogflag.Open(ctx, f, opts.Image, opts.Catalogs, func(src, w string) {
		fmt.Fprintf(f.IO.ErrOut, "%s %s: %s\n", t.WarningPrefix(), src, printable.Text(w))
	})
	if err != nil {
		if ie := exit.IfInterrupted(ctx); ie != nil {
			return nil, ie
		}
		// Status 1 means OLM does not resolve: a catalog that cannot be
		// read is a bad flag.
		return nil, exit.Usagef("%v", err)
	}
	return catalogs, nil
}

// runOLMv1 answers as operator-controller for each ClusterExtension of
// the file, the catalogs being ClusterCatalogs.
func runOLMv1(ctx context.Context, f *factory.Factory, opts *Options) error {
	data, err := os.ReadFile(opts.ClusterExtension)
	if err != nil {
		return exit.Usagef("--cluster-extension: %v", err)
	}
	exts, err := resolver.ParseClusterExtension(data)
	if err != nil {
		return exit.Usagef("--cluster-extension %s: %v", opts.ClusterExtension, err)
	}
	if len(exts) == 0 {
		return exit.Usagef("--cluster-extension %s: no ClusterExtension in the file", opts.ClusterExtension)
	}
	catalogs, err := openCatalogs(ctx, f, opts)
	if err != nil {
		return err
	}
	answers := make([]resolver.ExtensionAnswer, len(exts))
	for i, ext := range exts {
		if answers[i], err = resolver.ResolveExtension(ctx, catalogs, ext); err != nil {
			if ie := exit.IfInterrupted(ctx); ie != nil {
				return ie
			}
			return exit.Usagef("ClusterExtension %s: %v", ext.Name, err)
		}
	}
	if opts.Output == output.JSON {
		err = output.WriteJSON(f.IO.Out, answertext.ExtensionsJSON(exts, answers))
	} else {
		_, err = io.WriteString(f.IO.Out, answertext.ExtensionsText(exts, answers))
	}
	if err != nil {
		return exit.With(exit.Usage, err)
	}
	if answertext.ExtensionsFailed(answers) {
		return exit.Findings
	}
	return nil
}
