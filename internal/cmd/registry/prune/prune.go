// Package prune is `opm registry prune`: upstream opm's spelling of
// `opm index prune --database`.
package prune

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/factory"
	indexprune "github.com/opmkit/opm/internal/cmd/index/prune"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/cmd/registry/add"
)

// NewCmd is `opm registry prune`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*indexprune.Options) error) *cobra.Command {
	opts := &indexprune.Options{}
	var debug bool
	cmd := &cobra.Command{
		Use:   "prune -p PKG1,PKG2 [-d DATABASE]",
		Short: "Keep only the named packages of a database file (opm index prune --database)",
		Long: `Remove every package not named in --packages from a sqlite database file, in
one transaction. This is 'opm index prune --database' with upstream opm's
flag names and short letters.`,
		Example: `  opm registry prune -d index.db -p etcd`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return indexprune.Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Database, "database", "d", add.DefaultDatabase, "database file to change")
	fl.StringSliceVarP(&opts.Packages, "packages", "p", nil, "comma-separated packages to keep (required)")
	_ = cmd.MarkFlagRequired("packages")
	fl.BoolVar(&opts.Permissive, "permissive", false, "accepted for compatibility with upstream opm (a prune is one transaction)")
	fl.BoolVar(&debug, "debug", false, "print more detail on stderr")
	fl.StringVar(&opts.Output, "output", output.Text, "output format: text or json (json goes to stdout)")
	return cmd
}
