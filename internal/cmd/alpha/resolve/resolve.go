// Package resolve is `opm alpha resolve`: what OLM v0's resolver installs
// or upgrades to for a namespace's Subscriptions against catalogs,
// dependencies included, and why.
package resolve

import (
	"context"
	"fmt"
	"io"

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
	Output            string
	Image             image.Options
}

// resolveQuestion is the resolver; tests may replace it.
var resolveQuestion = resolver.Resolve

// NewCmd is `opm alpha resolve`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "resolve --catalog SOURCE[=PRIORITY]... (--subscription PKG[/CHANNEL][@CSV]... | --subscriptions FILE) [--installed PKG=CSV|FILE]...",
		Short: "Print what OLM v0 installs or upgrades for Subscriptions, dependencies included, and why",
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

Exit status: 0 when every namespace resolves, 1 when one does not (its
constraints cannot all be satisfied, or a new Subscription gets no
bundle), 64 for a usage error (a bad flag or file: the file, line and
field are named). docs/upgrade-graph.md ("Will OLM install it?") has the
rules and what is not modelled.`,
		Example: `  opm alpha resolve --catalog catalog/ --subscription etcd/alpha
  opm alpha resolve --catalog quay.io/me/index:4=10 --catalog deps.db --subscription demo --installed prometheus=prometheusoperator.0.47.0 -o json
  oc get subscriptions -n ops -o yaml > subs.yaml; oc get csv -n ops -o yaml > csvs.yaml
  opm alpha resolve --catalog name=redhat-operators,source=registry.redhat.io/redhat/redhat-operator-index:v4.16 --subscriptions subs.yaml --installed csvs.yaml`,
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
	_ = cmd.MarkFlagRequired("catalog")
	cmd.MarkFlagsOneRequired("subscription", "subscriptions")
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
	st, err := clusterstate.Read(opts.Subscriptions, opts.SubscriptionFiles, opts.Installed)
	if err != nil {
		return exit.Usagef("%v", err)
	}
	t := f.IO.ErrTheme()
	catalogs, err := catalogflag.Open(ctx, f, opts.Image, opts.Catalogs, func(src, w string) {
		fmt.Fprintf(f.IO.ErrOut, "%s %s: %s\n", t.WarningPrefix(), src, printable.Text(w))
	})
	if err != nil {
		if ie := exit.IfInterrupted(ctx); ie != nil {
			return ie
		}
		// Status 1 means OLM does not resolve: a catalog that cannot be
		// read is a bad flag.
		return exit.Usagef("%v", err)
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
