// Package prunestranded is `opm registry prune-stranded`: upstream opm's
// spelling of `opm index prune-stranded --database`.
package prunestranded

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/factory"
	indexps "github.com/opmkit/opm/internal/cmd/index/prunestranded"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/cmd/registry/add"
)

// NewCmd is `opm registry prune-stranded`; runF, when not nil, runs
// instead of Run.
func NewCmd(f *factory.Factory, runF func(*indexps.Options) error) *cobra.Command {
	opts := &indexps.Options{}
	var debug bool
	cmd := &cobra.Command{
		Use:   "prune-stranded [-d DATABASE]",
		Short: "Drop the bundles no channel reaches from a database file",
		Long: `Remove stranded bundles, which no channel refers to, from a sqlite database
file in one transaction. This is 'opm index prune-stranded --database' with
upstream opm's flag names.`,
		Example: `  opm registry prune-stranded -d index.db`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return indexps.Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Database, "database", "d", add.DefaultDatabase, "database file to change")
	fl.BoolVar(&debug, "debug", false, "print more detail on stderr")
	fl.StringVar(&opts.Output, "output", output.Text, "output format: text or json (json goes to stdout)")
	return cmd
}
