// Package rendergraph is `opm alpha render-graph`: a mermaid flowchart of
// each package's channels and upgrade edges, as upstream opm drew it, or
// the same graph as a JSON document, a Graphviz digraph, or a picture
// (SVG, HTML) opm draws itself.
package rendergraph

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/catalogsource"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/fbcflags"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/fbc/graph/draw"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/printable"
)

// Options are the flags and arguments of opm alpha render-graph.
type Options struct {
	Indexes     []string
	MinimumEdge string
	MaximumEdge string
	Package     string
	Channel     string
	V0Semantics bool
	// Expand draws every bundle of an svg or html picture as its own box.
	Expand bool
	Output string
	Image  image.Options
	Limits fbc.Limits
}

// Formats of -o besides json.
const (
	Mermaid = "mermaid"
	Dot     = "dot"
	SVG     = "svg"
	HTML    = "html"
)

// NewCmd is `opm alpha render-graph`; runF, when not nil, runs instead of
// Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "render-graph INDEX... [-p PACKAGE] [--channel CHANNEL] [--minimum-edge BUNDLE] [--maximum-edge BUNDLE] [-o mermaid|json|dot|svg|html]",
		Short: "Print the upgrade graph of each package of an index as a mermaid flowchart, JSON, Graphviz, or a picture (SVG, HTML)",
		Long: `Print, on stdout, a mermaid flowchart (graph LR) of every package of the index:
a subgraph per package and channel, bundles from the highest version down,
with their replaces, skips and skipRange edges, in the form upstream opm
printed, but with generated node ids (names only in escaped labels) and
each skipRange as one edge from a node naming the bundles it covers. Deprecated packages and channels are filled grey and lilac,
deprecated bundles orange (olm.deprecations). With --draw-v0-semantics,
bundles OLM v0 skips over are outlined red and edges into them dashed.

--channel keeps only channels of that name; --maximum-edge leaves out the
bundles above the version of the bundle it names, as --minimum-edge leaves
out the edges from below. -o json prints the same graph as
a document (packages, channels with heads, bundles with versions,
deprecated and skipped marks, replaces and skips edges, and each skipRange
once with the runs of bundles it covers); -o dot a Graphviz digraph of it
(heads double-bordered, deprecated bundles orange, skipped ones red, skips
dashed, a skipRange one dotted edge from a note naming what it covers). -o svg draws the graph
itself, with no other tool and no network: one standalone SVG document, a
framed cluster per channel, newest bundles at the top, heads heavy-bordered,
deprecated bundles orange, skipped ones outlined red dashed, replaces
arrows solid, skips dashed blue, and each skipRange as a purple bracket
beside the graph spanning the bundles it covers. To stay readable at real
size, the bundles an entry skips that lead nowhere else are one box beside
it ("skipped by X"), and a run of plain replaces steps is one box
("A -> ... -> B, 16 bundles"); --expand draws every bundle as its own box.
-o html is one
self-contained page (inline SVG and CSS, no script) with a legend and a
section per channel. docs/upgrade-graph.md describes them all.

INDEX is a sqlite database file, a file-based catalog directory or an index
image of either kind (of a sqlite index image only the layer holding its
database is fetched); several are drawn as one catalog, as upstream does.`,
		Example: `  opm alpha render-graph quay.io/me/index:3 -p etcd > etcd.mermaid
  opm alpha render-graph catalog/ --draw-v0-semantics
  opm alpha render-graph catalog/ -p etcd --channel stable -o dot | dot -Tsvg > etcd.svg
  opm alpha render-graph catalog/ -p etcd -o svg > etcd.svg
  opm alpha render-graph catalog/ -p etcd -o html > etcd.html
  opm alpha render-graph index.db -o json | jq '.packages[].channels[].heads'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Indexes = args
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fbcflags.AddLimitFlags(fl, &opts.Limits)
	fl.StringVar(&opts.MinimumEdge, "minimum-edge", "", "bundle name: leave out edges from bundles of lower versions")
	fl.StringVar(&opts.MaximumEdge, "maximum-edge", "", "bundle name: leave out bundles of higher versions and their edges")
	fl.StringVarP(&opts.Package, "package-name", "p", "", "draw only this package")
	fl.StringVar(&opts.Channel, "channel", "", "draw only channels of this name")
	fl.BoolVar(&opts.V0Semantics, "draw-v0-semantics", false, "mark bundles OLM v0 skips over (red outline) and the edges into them (dashed)")
	fl.BoolVar(&opts.Expand, "expand", false, "-o svg|html: draw every bundle as its own box (no folded runs or skip groups)")
	output.AddFlag(cmd, &opts.Output, Mermaid, output.JSON, Dot, SVG, HTML)
	// Mermaid is upstream's output, and stays the default.
	opts.Output = Mermaid
	fl.Lookup(output.FlagName).DefValue = Mermaid
	opts.Image.AddFlags(fl)
	return cmd
}

// Run draws the graphs.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if err := output.CheckOneOf(opts.Output, f.From(output.FlagName), Mermaid, output.JSON, Dot, SVG, HTML); err != nil {
		return err
	}
	if err := opts.Image.Validate(); err != nil {
		return exit.Usagef("%v", err)
	}
	o := catalogsource.NewOpener(f, opts.Image, fbc.RenderOptions{})
	o.Limits = opts.Limits
	// Of a catalog directory only the package drawn is decoded.
	o.Package = opts.Package
	all := &fbc.Catalog{}
	for _, arg := range opts.Indexes {
		c, err := o.Open(ctx, arg, catalogsource.Catalogs...)
		if err != nil {
			return indexio.Interrupted(ctx, err)
		}
		all.Merge(c.Catalog)
	}
	warnings, err := write(f, all, opts)
	if err != nil {
		return exit.With(exit.Failed, fmt.Errorf("render graph of %s: %w", strings.Join(opts.Indexes, ", "), err))
	}
	t := f.IO.ErrTheme()
	for _, w := range warnings {
		fmt.Fprintf(f.IO.ErrOut, "%s %s\n", t.NotePrefix(), printable.Text(w))
	}
	return nil
}

func write(f *factory.Factory, c *fbc.Catalog, opts *Options) ([]string, error) {
	if opts.Output == Mermaid {
		return graph.WriteMermaid(f.IO.Out, c, graph.MermaidOptions{Package: opts.Package, Channel: opts.Channel, MinimumEdge: opts.MinimumEdge, MaximumEdge: opts.MaximumEdge, V0Semantics: opts.V0Semantics})
	}
	// Every format carries each skipRange once (Ranges), never an edge
	// per covered bundle: n² on a channel whose every entry skips all
	// before it.
	doc, warnings, err := graph.NewDocument(c, graph.GraphOptions{Package: opts.Package, Channel: opts.Channel, MinimumEdge: opts.MinimumEdge, MaximumEdge: opts.MaximumEdge, CompactRanges: true})
	if err != nil {
		return nil, err
	}
	switch opts.Output {
	case Dot:
		return warnings, graph.WriteDot(f.IO.Out, doc)
	case SVG:
		return warnings, draw.WriteSVGWith(f.IO.Out, doc, draw.Options{Expand: opts.Expand})
	case HTML:
		return warnings, draw.WriteHTMLWith(f.IO.Out, doc, draw.Options{Expand: opts.Expand})
	}
	return warnings, output.WriteJSON(f.IO.Out, doc)
}
