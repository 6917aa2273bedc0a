// Package inspect is `opm index inspect`.
package inspect

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/printable"
)

// Options are the flags and argument of opm index inspect.
type Options struct {
	Index  string
	Output string
	Image  image.Options
}

// NewCmd is `opm index inspect`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "inspect DATABASE|IMAGE",
		Short: "Show an index's packages, channels and upgrade graph",
		Long: `Show the packages, channels, heads and upgrade edges of a sqlite index
database file, or of an index image (only the layer holding its database is
fetched).`,
		Example: `  opm index inspect index.db
  opm index inspect quay.io/me/index:3 -o json | jq '.packages[].name'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Index = args[0]
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	output.AddFlag(cmd, &opts.Output)
	opts.Image.AddFlags(cmd.Flags())
	return cmd
}

// Run prints the index.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if err := output.Check(opts.Output, f.From("output")); err != nil {
		return err
	}
	db, done, err := indexio.Source(ctx, f, opts.Index, opts.Image)
	if err != nil {
		return indexio.Interrupted(ctx, err)
	}
	defer done()
	idx, err := db.Inspect(ctx)
	if err != nil {
		return exit.With(exit.Failed, err)
	}
	if opts.Output == output.JSON {
		return output.WriteJSON(f.IO.Out, idx)
	}
	if len(idx.Packages) == 0 {
		// An empty tree would look like a failure to read the index.
		fmt.Fprintf(f.IO.ErrOut, "%s %s: no packages (the index is empty; opm index add --database or --from-index adds bundles)\n", f.IO.ErrTheme().NotePrefix(), opts.Index)
		return nil
	}
	writeIndexTree(f.IO.Out, idx)
	return nil
}

// writeIndexTree prints package → channel → entries, each entry with what
// it replaces and skips.
func writeIndexTree(w io.Writer, idx *index.Index) {
	// Names come from the index: control characters shown escaped.
	pn := printable.Name
	for _, p := range idx.Packages {
		fmt.Fprintf(w, "%s (default channel %s)\n", pn(p.Name), pn(p.DefaultChannel))
		versions := map[string]string{}
		for _, b := range p.Bundles {
			versions[b.Name] = b.Version
		}
		for ci, c := range p.Channels {
			last := ci == len(p.Channels)-1
			branch, indent := "├── ", "│   "
			if last {
				branch, indent = "└── ", "    "
			}
			fmt.Fprintf(w, "%s%s (head %s)\n", branch, pn(c.Name), pn(c.Head))
			edges := map[string][]string{}
			for _, e := range c.Edges {
				edges[e.From] = append(edges[e.From], e.To)
			}
			for bi, b := range c.Bundles {
				leaf := "├── "
				if bi == len(c.Bundles)-1 {
					leaf = "└── "
				}
				line := pn(b)
				if v := versions[b]; v != "" {
					line += " " + pn(v)
				}
				if to := edges[b]; len(to) > 0 {
					line += " → " + pn(strings.Join(to, ", "))
				}
				fmt.Fprintf(w, "%s%s%s\n", indent, leaf, line)
			}
		}
	}
}
