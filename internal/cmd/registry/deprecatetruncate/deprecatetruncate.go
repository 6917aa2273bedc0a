// Package deprecatetruncate is `opm registry deprecatetruncate`: upstream
// opm's spelling of `opm index deprecatetruncate --database`.
package deprecatetruncate

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/factory"
	indexdt "github.com/opmkit/opm/internal/cmd/index/deprecatetruncate"
	"github.com/opmkit/opm/internal/cmd/output"
)

// DefaultDatabase is upstream's -d default here, unlike the other registry
// commands' bundles.db.
const DefaultDatabase = "index.db"

// NewCmd is `opm registry deprecatetruncate`; runF, when not nil, runs
// instead of Run.
func NewCmd(f *factory.Factory, runF func(*indexdt.Options) error) *cobra.Command {
	opts := &indexdt.Options{}
	var debug bool
	cmd := &cobra.Command{
		Use:   "deprecatetruncate -b IMAGE,... [-d DATABASE]",
		Short: "Deprecate bundles and truncate what they replace in a database file",
		Long: indexdt.Long + `

This is 'opm index deprecatetruncate --database' with upstream opm's flag
names and short letters; -d defaults to index.db, as upstream.`,
		Example: `  opm registry deprecatetruncate -d index.db -b quay.io/me/etcd-bundle:0.9.2`,
		Hidden:  true,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return indexdt.Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Database, "database", "d", DefaultDatabase, "database file to change")
	fl.StringSliceVarP(&opts.Bundles, "bundle-images", "b", nil, "comma-separated bundle paths (images) to deprecate (required)")
	indexdt.AddFlags(fl, opts)
	fl.BoolVar(&debug, "debug", false, "print more detail on stderr")
	fl.StringVar(&opts.Output, "output", output.Text, "output format: text or json (json goes to stdout)")
	return cmd
}
