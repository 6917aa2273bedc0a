// Package rm is `opm registry rm`: upstream opm's spelling of
// `opm index rm --database`.
package rm

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/factory"
	indexrm "github.com/opmkit/opm/internal/cmd/index/rm"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/cmd/registry/add"
)

// NewCmd is `opm registry rm`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*indexrm.Options) error) *cobra.Command {
	opts := &indexrm.Options{}
	var debug bool
	cmd := &cobra.Command{
		Use:   "rm -o PKG1,PKG2 [-d DATABASE]",
		Short: "Remove packages from a database file (opm index rm --database)",
		Long: `Remove whole packages, with their channels and bundles, from a sqlite
database file in one transaction. This is 'opm index rm --database' with
upstream opm's flag names and short letters.`,
		Example: `  opm registry rm -d index.db -o etcd,prometheus`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return indexrm.Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Database, "database", "d", add.DefaultDatabase, "database file to change")
	fl.StringSliceVarP(&opts.Operators, "packages", "o", nil, "comma-separated package names to remove (required)")
	_ = cmd.MarkFlagRequired("packages")
	fl.BoolVar(&opts.Permissive, "permissive", false, "accepted for compatibility with upstream opm (a removal has nothing to skip)")
	fl.BoolVar(&debug, "debug", false, "print more detail on stderr")
	fl.StringVar(&opts.Output, "output", output.Text, "output format: text or json (json goes to stdout)")
	return cmd
}
