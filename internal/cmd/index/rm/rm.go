// Package rm is `opm index rm`.
package rm

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/index/indexflags"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/printable"
)

// Options are the flags of opm index rm.
type Options struct {
	Operators  []string
	Database   string
	Output     string
	Permissive bool
	indexflags.ImageOptions
}

// NewCmd is `opm index rm`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "rm --operators A,B (--from-index IMAGE --tag IMAGE | --database FILE)",
		Short: "Remove packages from an index image or database",
		Long: `Remove packages, with their channels and bundles, from a sqlite index in one
transaction. APIs another package still provides or requires stay.

With --from-index F --tag T, only F's database layer is fetched, and T is F's
layers with the new database layer on top (replacing F's database layer when
it holds nothing but the database), as for index add. --generate writes
database/index.db and index.Dockerfile instead; --build-tool builds T with
docker or podman. With --database FILE the file is changed.`,
		Example: `  opm index rm --operators etcd --from-index quay.io/me/index:2 --tag quay.io/me/index:3
  opm index rm --database index.db --operators etcd,prometheus`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVarP(&opts.Operators, "operators", "o", nil, "comma-separated package names to remove")
	fl.StringVar(&opts.Database, "database", "", "a sqlite index database file to remove from instead of an image")
	fl.BoolVar(&opts.Permissive, "permissive", false, "accepted for compatibility with upstream opm (a removal has nothing to skip)")
	// -o is --operators here, as upstream; the output format has no short flag.
	fl.StringVar(&opts.Output, "output", output.Text, "output format: text or json (json goes to stdout)")
	opts.AddFlags(fl)
	return cmd
}

// Run removes the packages from the index.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if err := output.Check(opts.Output, f.From("output")); err != nil {
		return err
	}
	if len(opts.Operators) == 0 {
		return exit.Usagef("--operators is required: the package names to remove")
	}
	return indexio.Change(ctx, f, &opts.ImageOptions, opts.Database, opts.Output,
		indexio.ChangeWords{Verb: "remove from", Purpose: "remove from", OpenErrors: true},
		func(db *index.DB) (*index.RemoveResult, error) { return db.RemovePackages(ctx, opts.Operators) }, writeRemoveResult)
}

func writeRemoveResult(f *factory.Factory, target string, res *index.RemoveResult) {
	names := make([]string, len(res.Packages))
	for i, p := range res.Packages {
		names[i] = printable.Name(p)
	}
	fmt.Fprintf(f.IO.ErrOut, "removed %s (%s) from %s\n", strings.Join(names, ", "), printable.Count(len(res.Removed), "bundle", "bundles"), printable.Name(target))
	t := f.IO.ErrTheme()
	for _, warn := range res.Warnings {
		fmt.Fprintf(f.IO.ErrOut, "%s %s\n", t.NotePrefix(), printable.Text(warn))
	}
}
