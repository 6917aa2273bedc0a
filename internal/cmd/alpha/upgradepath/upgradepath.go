// Package upgradepath is `opm alpha upgrade-path`: the bundles OLM
// installs one after the other from a version, by OLM v0's or OLM v1's
// rules, and which bundles a catalog must keep for a range of versions.
package upgradepath

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/catalogflag"
	"github.com/opmkit/opm/internal/cmd/catalogsource"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/fbc/graph/pathtext"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/printable"
	"github.com/opmkit/opm/internal/resolve"
	"github.com/opmkit/opm/internal/resolve/pathcheck"
)

// Options are the flags and arguments of opm alpha upgrade-path.
type Options struct {
	Source     string
	Package    string
	Channel    string
	From, To   string
	FromRange  string
	OLMv1      bool
	AnyChannel bool
	Output     string
	Image      image.Options
	// Catalogs provide dependencies beside Source; Dependencies asks
	// OLM v0's resolver about each step (default: when Catalogs are
	// given or the package's bundles declare a dependency).
	Catalogs     []catalogflag.Spec
	Dependencies bool
	depsSet      bool
}

// NewCmd is `opm alpha upgrade-path`; runF, when not nil, runs instead of
// Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "upgrade-path SOURCE [--package PACKAGE] --from VERSION|BUNDLE [--to VERSION|BUNDLE]",
		Short: "Print the bundles OLM installs one after the other from a version, and why each",
		Long: `Print, on stdout, the bundles OLM would install one after the other from
--from (a bundle name or a version) up to where it stops (the channel
head) or to --to, each with the edge that allows the step: replaces, skips,
or a skipRange covering the version. When --to is not reached, say why
(skipped, in another channel, jumped over by a skipRange, older, no edge)
and exit 1. A --from version that no bundle has and that no entry upgrades
from (by replaces, skips or skipRange) exits 1 too, naming the versions
nearest it. --package may be left out when the catalog has one package.

By default the rules are OLM v0's, on the channel a subscription names
(--channel, else the package's default channel): of the entries that
replace or skip the installed bundle or whose skipRange covers its version,
OLM installs the one nearest the channel head, and never one that another
entry skips. --any-channel lets each step take the newest next step of any
channel, as a subscription moved between channels. --olmv1 follows OLM
v1: each step is the bundle operator-controller's resolver picks for a
ClusterExtension (CatalogProvided, every channel or --channel) with the
previous one installed (opm alpha resolve --olmv1 answers the same way):
the highest version among the installed one and its successors by
replaces, skips or skipRange, deprecated bundles last. The path ends where
it stays; where it resolves nothing (--channel leaves out the installed
bundle, a version it cannot read, a bundle declaring a dependency), its
error is printed and the exit status is 1.

Dependencies: with --catalog (repeatable: SOURCE[=PRIORITY] or
name=NAME,source=SOURCE[,priority=N], catalogs that provide dependencies),
or --dependencies (the default when the package's bundles declare one),
each step is also asked of OLM v0's resolver, with the step's bundle
installed: a step whose requirements cannot be met is marked refused, with
the reasons, and the exit status is 1.

--from-range RANGE (instead of --from) prints the bundles to keep so that
every bundle whose version is in RANGE still upgrades to the head as it
does now.

SOURCE is anything opm render reads as a catalog: a sqlite database file,
a file-based catalog directory, or an index image of either kind.
docs/upgrade-graph.md describes the rules.`,
		Example: `  opm alpha upgrade-path catalog/ --package etcd --from 0.9.0
  opm alpha upgrade-path index.db --package etcd --channel clusterwide-alpha --from etcdoperator.v0.9.0 --to 0.9.4-clusterwide
  opm alpha upgrade-path quay.io/me/index:4 --package demo --from 1.0.0 --olmv1 -o json
  opm alpha upgrade-path catalog/ --package demo --from-range '>=1.0.0 <2.0.0'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Source = args[0]
			opts.depsSet = cmd.Flags().Changed("dependencies")
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	output.AddFlag(cmd, &opts.Output)
	fl := cmd.Flags()
	fl.StringVar(&opts.Package, "package", "", "the package (default: the catalog's package, when it has one)")
	fl.StringVar(&opts.Channel, "channel", "", "the subscription's channel (OLM v0: default channel when empty; OLM v1: every channel)")
	fl.StringVar(&opts.From, "from", "", "the installed bundle: its name or its version")
	fl.StringVar(&opts.To, "to", "", "stop at this bundle (name or version), or say why OLM does not reach it")
	fl.StringVar(&opts.FromRange, "from-range", "", "print the bundles to keep so that every version in this range (e.g. '>=1.0.0 <2.0.0') still reaches the head")
	fl.BoolVar(&opts.OLMv1, "olmv1", false, "follow OLM v1's (operator-controller's) successor rules instead of OLM v0's")
	fl.BoolVar(&opts.AnyChannel, "any-channel", false, "OLM v0: let each step take the newest next step of any channel of the package")
	fl.Var(catalogflag.Value{Specs: &opts.Catalogs}, "catalog", "a catalog providing dependencies (repeatable): "+catalogflag.Usage)
	fl.BoolVar(&opts.Dependencies, "dependencies", false, "ask OLM v0's resolver about each step, dependencies included (default: when --catalog is given or the package's bundles declare a dependency)")
	cmd.MarkFlagsMutuallyExclusive("from", "from-range")
	cmd.MarkFlagsMutuallyExclusive("to", "from-range")
	cmd.MarkFlagsOneRequired("from", "from-range")
	opts.Image.AddFlags(fl)
	return cmd
}

// Run loads the catalog and prints the path, or the bundles to keep.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if err := output.Check(opts.Output, f.From(output.FlagName)); err != nil {
		return err
	}
	if err := opts.Image.Validate(); err != nil {
		return exit.Usagef("%v", err)
	}
	if opts.AnyChannel && opts.OLMv1 {
		return exit.Usagef("--any-channel is OLM v0's; OLM v1 takes every channel unless --channel names one")
	}
	if (opts.OLMv1 || opts.FromRange != "") && (len(opts.Catalogs) > 0 || opts.Dependencies) {
		return exit.Usagef("--catalog and --dependencies ask OLM v0's resolver about the steps of a path: not with --olmv1 (OLM v1 installs no dependencies) or --from-range")
	}
	c, err := catalogsource.NewOpener(f, opts.Image, fbc.RenderOptions{}).Open(ctx, opts.Source, catalogsource.Catalogs...)
	if err != nil {
		return indexio.Interrupted(ctx, err)
	}
	if opts.Package, err = c.ResolvePackage(opts.Package); err != nil {
		return exit.Usagef("%s: %v", opts.Source, err)
	}
	p, err := graph.NewPackage(c.Catalog, opts.Package)
	if err != nil {
		return exit.Usagef("%s: %v", opts.Source, err)
	}
	t := f.IO.ErrTheme()
	for _, g := range p.Channels {
		for _, w := range g.Warnings {
			fmt.Fprintf(f.IO.ErrOut, "%s %s\n", t.WarningPrefix(), printable.Text(w))
		}
	}
	q := graph.PathQuery{From: opts.From, To: opts.To, Channel: opts.Channel, AnyChannel: opts.AnyChannel, OLMv1: opts.OLMv1}
	if opts.OLMv1 {
		// Each step is operator-controller's answer with the previous
		// bundle installed; no --channel is every channel (Fields: none).
		q.ResolveV1 = resolve.ExtensionSteps(ctx, resolve.Catalog{Name: catalogflag.NameOf(opts.Source), Catalog: c.Catalog}, opts.Package, strings.Fields(opts.Channel))
	}
	if opts.FromRange != "" {
		k, err := p.KeepForRange(q, opts.FromRange)
		if err != nil {
			return pathErr(opts, err)
		}
		if opts.Output == output.JSON {
			err = output.WriteJSON(f.IO.Out, k)
		} else {
			err = writeKeep(f.IO.Out, k)
		}
		return writeErr(err)
	}
	path, err := p.Path(q)
	if err != nil {
		return pathErr(opts, err)
	}
	if path.To == "" {
		// Without --to the path goes to a head: it is reached when it
		// ends at one.
		path.Reached = path.AtHead
	}
	if len(path.Steps) == 0 && !path.AtHead && !p.HasBundle(opts.From) {
		if v, err := semver.ParseTolerant(opts.From); err == nil && !p.HasVersion(v) {
			return exit.With(exit.Failed, fmt.Errorf("%s, package %s: no bundle has version %s and no entry upgrades from it (by replaces, skips or skipRange): OLM installs nothing from it; %s",
				opts.Source, opts.Package, v, p.Nearest(path.Channels, v)))
		}
	}
	check, err := checkSteps(ctx, f, opts, c.Catalog, path)
	if err != nil {
		return err
	}
	if opts.Output == output.JSON {
		err = output.WriteJSON(f.IO.Out, struct {
			*graph.Path
			Resolver *pathcheck.Check `json:"resolver,omitempty"`
		}{path, check})
	} else {
		err = writePath(f.IO.Out, p, path)
		if err == nil && check != nil {
			_, err = io.WriteString(f.IO.Out, check.Text())
		}
	}
	if err != nil {
		return writeErr(err)
	}
	if path.Error != "" || (check != nil && check.Refused > 0 && path.To != "") {
		// operator-controller resolves nothing at some step, or OLM v0
		// does not walk the path to --to.
		return exit.Findings
	}
	if path.To != "" && !path.Reached {
		// The answer is printed; the status says "not reachable" to
		// scripts, as a failed check does.
		return exit.Findings
	}
	return nil
}

// checkSteps asks OLM v0's resolver about each step of path, when
// dependencies count (see Options.Dependencies); nil when they do not.
func checkSteps(ctx context.Context, f *factory.Factory, opts *Options, c *fbc.Catalog, path *graph.Path) (*pathcheck.Check, error) {
	if opts.OLMv1 || len(path.Steps) == 0 || (opts.depsSet && !opts.Dependencies) ||
		(!opts.Dependencies && len(opts.Catalogs) == 0 && !pathcheck.DeclaresDependencies(c, opts.Package)) {
		return nil, nil
	}
	specs, err := catalogflag.Named(append([]catalogflag.Spec{{Source: opts.Source}}, opts.Catalogs...))
	if err != nil {
		return nil, exit.Usagef("%v", err)
	}
	t := f.IO.ErrTheme()
	others, err := catalogflag.Open(ctx, f, opts.Image, specs[1:], func(src, w string) {
		fmt.Fprintf(f.IO.ErrOut, "%s %s: %s\n", t.WarningPrefix(), src, printable.Text(w))
	})
	if err != nil {
		return nil, indexio.Interrupted(ctx, err)
	}
	cats := append([]resolve.Catalog{{Name: specs[0].Name, Catalog: c}}, others...)
	check, err := pathcheck.Path(ctx, cats, opts.Package, opts.Channel, path)
	if err != nil {
		return nil, indexio.Interrupted(ctx, err)
	}
	return check, nil
}

// pathErr is a usage error (a bundle, channel or range that is not
// there), or a failure when the catalog's channel is one OLM v0 refuses.
func pathErr(opts *Options, err error) error {
	var oe *graph.OrderError
	if errors.As(err, &oe) {
		return exit.With(exit.Failed, fmt.Errorf("%s, package %s: %w", opts.Source, opts.Package, err))
	}
	return exit.Usagef("%v", err)
}

func writeErr(err error) error {
	if err == nil {
		return nil
	}
	return exit.With(exit.Usage, err)
}

// writePath prints the steps as a numbered list under a heading line,
// then where the path ends or why --to is not reached.
func writePath(w io.Writer, p *graph.Package, path *graph.Path) error {
	_, err := io.WriteString(w, pathtext.Of(p, path).String())
	return err
}

// writeKeep prints the bundles to keep, oldest first, each with the
// versions of the range that pass through it.
func writeKeep(w io.Writer, k *graph.Keep) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %s, %s: to keep every version in %q upgrading to the head, keep %s:\n",
		k.Package, pathtext.Semantics(k.Semantics), pathtext.ChannelWord(k.Channels), k.Range, printable.Count(len(k.Bundles), "bundle", "bundles"))
	for _, kb := range k.Bundles {
		fmt.Fprintf(&b, "  %s (%s)", printable.Name(kb.Name), kb.Version)
		switch {
		case kb.ChainOnly:
			b.WriteString("  for the replaces chain OLM v0 orders the channel by")
		case len(kb.For) == 1 && kb.For[0] == kb.Name:
			b.WriteString("  the head")
		default:
			fmt.Fprintf(&b, "  on the path from %s", printable.Name(strings.Join(kb.For, ", ")))
		}
		b.WriteString("\n")
	}
	if len(k.Stranded) > 0 {
		fmt.Fprintf(&b, "No path to a head from %s, whatever is kept.\n", printable.Name(strings.Join(k.Stranded, ", ")))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
