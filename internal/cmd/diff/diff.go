// Package diff is `opm diff OLD NEW`: what changed between two catalogs,
// for a pull-request review.
package diff

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/catalogdiff"
	"github.com/opmkit/opm/internal/cmd/catalogsource"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/fbcflags"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/printable"
)

// Markdown is the -o format for a pull-request comment, HTML a page with
// the changed channels' graphs drawn.
const (
	Markdown = "markdown"
	HTML     = "html"
)

// Options are the flags and arguments of opm diff.
type Options struct {
	Old, New string
	Output   string
	Packages []string
	ExitCode bool
	// FailOn are release gates (catalogdiff.Gates) whose violation exits 1.
	FailOn []string
	// Fragment compares only the packages NEW holds: NEW is a catalog
	// fragment meant to replace those packages of OLD (an index image).
	Fragment bool
	// Expand draws every bundle of an -o html picture as its own box.
	Expand bool
	Image  image.Options
	Limits fbc.Limits
}

// NewCmd is `opm diff`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "Show what changed between two catalogs: packages, bundles, channel heads, upgrade edges, deprecations",
		Long: `Compare two catalogs package by package and print what changed from OLD to
NEW: packages, channels and bundles added or removed, bundles whose blob
changed (image, properties, related images), default channels and channel
heads that moved, upgrade edges added or lost (replaces, skips, and the
edges a skipRange gives), bundles no upgrade path leads out of any more
(unreachable), and deprecations added, removed or reworded.

OLD and NEW are each a sqlite index database file, a file-based catalog
directory, or an index image of either kind (of a sqlite index image only the
layer holding its database is fetched); the two may be of different kinds.

-o text prints a tree on stdout, -o markdown a summary and sections for a
pull-request comment, -o json a document whose schema docs/diff.md
describes, -o html one self-contained page (no script, no external asset)
with the summary and, for each changed channel, its upgrade graph before
and after, edges lost drawn red and edges added green (runs of plain
replaces steps fold into one box and bundles an entry skips group beside
it, as render-graph draws; --expand draws every bundle as its own box).
With --exit-code the exit status is 1 when the catalogs differ
and 0 when they are equal, as git diff --exit-code.

Release gates: --fail-on removed exits 1 when anything of OLD that clusters
may run or upgrade through is missing from NEW (a package, channel, bundle,
channel entry or upgrade edge); --fail-on heads-moved-back when a channel's
head has a lower version in NEW; --fail-on any on any difference. Each
violation is a line on stderr (and in -o json and -o markdown). With
--fragment, NEW is a fragment of a catalog (some packages, whole) compared
with those packages of OLD only, as Konflux's pruning check compares a
fragment with its target index.`,
		Example: `  opm diff quay.io/me/index:3 catalog/
  opm diff index.db catalog/ --package etcd -o json | jq .summary
  opm diff origin-catalog/ catalog/ -o markdown > comment.md
  opm diff origin-catalog/ catalog/ -o html > diff.html
  opm diff quay.io/me/index:3 quay.io/me/index:4 --exit-code >/dev/null || echo changed
  opm diff registry.example.com/redhat/operator-index:v4.17 catalog/ --fragment --fail-on removed,heads-moved-back -o markdown > gate.md`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Old, opts.New = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	output.AddFlag(cmd, &opts.Output, output.Text, output.JSON, Markdown, HTML)
	fl := cmd.Flags()
	fbcflags.AddLimitFlags(fl, &opts.Limits)
	fl.StringSliceVar(&opts.Packages, "package", nil, "compare only these packages (repeat, or separate with commas)")
	fl.BoolVar(&opts.ExitCode, "exit-code", false, "exit 1 when the catalogs differ, 0 when they are equal")
	fl.StringSliceVar(&opts.FailOn, "fail-on", nil, "exit 1 when a release gate trips: "+strings.Join(catalogdiff.Gates, ", ")+" (repeat, or separate with commas)")
	fl.BoolVar(&opts.Fragment, "fragment", false, "NEW is a fragment: compare only the packages NEW holds")
	fl.BoolVar(&opts.Expand, "expand", false, "-o html: draw every bundle as its own box (no folded runs or skip groups)")
	opts.Image.AddFlags(fl)
	return cmd
}

// Run loads both catalogs, compares them and prints the result.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if err := output.CheckOneOf(opts.Output, f.From(output.FlagName), output.Text, output.JSON, Markdown, HTML); err != nil {
		return err
	}
	if err := opts.Image.Validate(); err != nil {
		return exit.Usagef("%v", err)
	}
	if _, err := (&catalogdiff.Result{}).CheckGates(opts.FailOn); err != nil {
		return exit.Usagef("--fail-on: %v", err)
	}
	o := catalogsource.NewOpener(f, opts.Image, fbc.RenderOptions{})
	o.Limits = opts.Limits
	oldC, err := open(ctx, f, o, opts.Old)
	if err != nil {
		return err
	}
	newC, err := open(ctx, f, o, opts.New)
	if err != nil {
		return err
	}
	pkgs := opts.Packages
	if opts.Fragment {
		pkgs = fragmentPackages(opts.Packages, newC)
	}
	res := catalogdiff.Compare(oldC, newC, catalogdiff.Options{Packages: pkgs})
	res.Old, res.New = opts.Old, opts.New
	violations, _ := res.CheckGates(opts.FailOn) // checked above
	if missing := missingPackages(opts.Packages, oldC, newC); len(missing) > 0 {
		fmt.Fprintf(f.IO.ErrOut, "%s --package %s: in neither catalog\n", f.IO.ErrTheme().WarningPrefix(), printable.Name(strings.Join(missing, ", ")))
	}
	switch opts.Output {
	case output.JSON:
		err = output.WriteJSON(f.IO.Out, res)
	case Markdown:
		err = catalogdiff.WriteMarkdown(f.IO.Out, res)
	case HTML:
		err = catalogdiff.WriteHTMLWith(f.IO.Out, res, oldC, newC, catalogdiff.HTMLOptions{Expand: opts.Expand})
	default:
		err = catalogdiff.WriteText(f.IO.Out, res, newStyles(f.IO.Out, f.IO.ColorEnabled(f.IO.OutTTY)))
	}
	if err != nil {
		return exit.With(exit.Usage, err)
	}
	if len(violations) > 0 {
		theme := f.IO.ErrTheme()
		for _, v := range violations {
			where := ""
			if v.Package != "" {
				where = printable.Name(v.Package)
				if v.Channel != "" {
					where += " channel " + printable.Name(v.Channel)
				}
				where += ": "
			}
			fmt.Fprintf(f.IO.ErrOut, "%s --fail-on %s: %s%s\n", theme.ErrorPrefix(), v.Gate, where, printable.Text(v.What))
		}
		return &exit.Error{Code: exit.Failed}
	}
	if opts.ExitCode && !res.Equal {
		return &exit.Error{Code: exit.Failed}
	}
	return nil
}

// fragmentPackages is what --fragment compares: the packages of the
// fragment (of those --package names, when given).
func fragmentPackages(want []string, fragment *catalogdiff.Catalog) []string {
	have := fragment.Packages()
	if len(want) == 0 {
		if len(have) == 0 {
			// Compare nothing, rather than everything.
			return []string{""}
		}
		return have
	}
	var out []string
	for _, p := range want {
		if fragment.Has(p) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return []string{""}
	}
	return out
}

// open reads a catalog part by part into one side of the diff.
func open(ctx context.Context, f *factory.Factory, o *catalogsource.Opener, arg string) (*catalogdiff.Catalog, error) {
	side := catalogdiff.NewCatalog()
	c, err := o.OpenEach(ctx, arg, side.Add, catalogsource.Catalogs...)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return nil, exit.Interrupt()
		}
		// Not 1: with --exit-code that says "the catalogs differ".
		return nil, exit.With(exit.Usage, fmt.Errorf("read %s: %w", arg, err))
	}
	for _, w := range c.Warnings {
		fmt.Fprintf(f.IO.ErrOut, "%s %s: %s\n", f.IO.ErrTheme().NotePrefix(), printable.Name(arg), printable.Text(w))
	}
	return side, nil
}

func missingPackages(want []string, old, new *catalogdiff.Catalog) []string {
	var out []string
	for _, p := range want {
		if !old.Has(p) && !new.Has(p) {
			out = append(out, p)
		}
	}
	return out
}

// newStyles colours the text tree on w when color is true (a terminal, no
// NO_COLOR).
func newStyles(w io.Writer, color bool) catalogdiff.Styles {
	if !color {
		return catalogdiff.PlainStyles()
	}
	r := lipgloss.NewRenderer(w)
	r.SetColorProfile(termenv.ANSI256)
	st := func(s lipgloss.Style) func(string) string { return func(x string) string { return s.Render(x) } }
	return catalogdiff.Styles{
		Added:   st(r.NewStyle().Foreground(lipgloss.Color("10"))),
		Removed: st(r.NewStyle().Foreground(lipgloss.Color("9"))),
		Changed: st(r.NewStyle().Foreground(lipgloss.Color("11"))),
		Warn:    st(r.NewStyle().Foreground(lipgloss.Color("9")).Bold(true)),
		Name:    st(r.NewStyle().Bold(true)),
		Dim:     st(r.NewStyle().Faint(true)),
	}
}
