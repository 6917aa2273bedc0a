// Package index is `opm index`, which holds the sqlite index commands.
package index

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/group"
	"github.com/opmkit/opm/internal/cmd/index/add"
	"github.com/opmkit/opm/internal/cmd/index/deprecatetruncate"
	"github.com/opmkit/opm/internal/cmd/index/export"
	"github.com/opmkit/opm/internal/cmd/index/filter"
	"github.com/opmkit/opm/internal/cmd/index/indexflags"
	"github.com/opmkit/opm/internal/cmd/index/inspect"
	"github.com/opmkit/opm/internal/cmd/index/prune"
	"github.com/opmkit/opm/internal/cmd/index/prunestranded"
	"github.com/opmkit/opm/internal/cmd/index/rm"
)

// NewCmd is `opm index` with its subcommands.
func NewCmd(f *factory.Factory) *cobra.Command {
	cmd := group.New("index", "Build and read sqlite index databases and images",
		add.NewCmd(f, nil),
		rm.NewCmd(f, nil),
		inspect.NewCmd(f, nil),
		export.NewCmd(f, nil),
		prune.NewCmd(f, nil),
		filter.NewCmd(f, nil),
		prunestranded.NewCmd(f, nil),
		deprecatetruncate.NewCmd(f, nil),
	)
	for _, c := range cmd.Commands() {
		if c.Flags().Lookup(indexflags.FlagCatalogFormat) != nil {
			indexflags.RegisterCatalogFormatCompletion(c)
		}
	}
	return cmd
}
