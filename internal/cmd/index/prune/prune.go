// Package prune is `opm index prune`, and the code of `opm registry prune`.
package prune

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

// Options are the flags of opm index prune.
type Options struct {
	Packages   []string
	Database   string
	Output     string
	Permissive bool
	// ContainerToolGiven says -c was on the command line (its podman
	// default only counts then).
	ContainerToolGiven bool
	indexflags.ImageOptions
}

// NewCmd is `opm index prune`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "prune --packages A,B (--from-index IMAGE --tag IMAGE | --database FILE)",
		Short: "Keep only the named packages of an index image or database",
		Long: `Remove every package not named in --packages, with its channels and bundles,
in one transaction. A named package the index does not hold is reported.

With --from-index F --tag T, only F's database layer is fetched, and T is F's
layers with the new database layer, as for index add and rm. --generate
writes database/index.db and index.Dockerfile instead; -c docker|podman
builds T with that tool. With --database FILE the file is changed.`,
		Example: `  opm index prune -p etcd,prometheus -f quay.io/me/index:3 -t quay.io/me/index:3-small
  opm index prune --database index.db -p etcd`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ContainerToolGiven = cmd.Flags().Changed("container-tool")
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVarP(&opts.Packages, "packages", "p", nil, "comma-separated packages to keep (required)")
	fl.StringVar(&opts.Database, "database", "", "a sqlite index database file to prune instead of an image")
	fl.BoolVar(&opts.Permissive, "permissive", false, "accepted for compatibility with upstream opm (a prune has nothing to skip: it is one transaction)")
	fl.StringVar(&opts.Output, "output", output.Text, "output format: text or json (json goes to stdout)")
	opts.AddBuildFlags(fl)
	return cmd
}

// Run prunes the index.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if err := output.Check(opts.Output, f.From("output")); err != nil {
		return err
	}
	if len(opts.Packages) == 0 {
		return exit.Usagef("--packages is required: the packages to keep")
	}
	if err := opts.UpstreamContainerTool(opts.ContainerToolGiven); err != nil {
		return err
	}
	return indexio.Change(ctx, f, &opts.ImageOptions, opts.Database, opts.Output,
		indexio.ChangeWords{Verb: "prune", Purpose: "prune"},
		func(db *index.DB) (*index.PruneResult, error) { return db.Prune(ctx, opts.Packages) }, write)
}

func write(f *factory.Factory, target string, res *index.PruneResult) {
	removed, bundles := "nothing", 0
	if res.Removed != nil {
		removed = strings.Join(res.Removed.Packages, ", ")
		bundles = len(res.Removed.Removed)
	}
	kept := strings.Join(res.Kept, ", ")
	if kept == "" {
		kept = "no package"
	}
	// Names come from the index: the line is shown with control characters escaped.
	fmt.Fprintln(f.IO.ErrOut, printable.Name(fmt.Sprintf("kept %s in %s; removed %s (%s)", kept, target, removed, printable.Count(bundles, "bundle", "bundles"))))
	t := f.IO.ErrTheme()
	warnings := res.Warnings
	if res.Removed != nil {
		warnings = append(warnings, res.Removed.Warnings...)
	}
	for _, w := range warnings {
		fmt.Fprintf(f.IO.ErrOut, "%s %s\n", t.NotePrefix(), printable.Text(w))
	}
}
