// Package csv is `opm csv`, which holds the ClusterServiceVersion commands.
package csv

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/csv/lint"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/group"
)

// NewCmd is `opm csv` with its subcommands.
func NewCmd(f *factory.Factory) *cobra.Command {
	return group.New("csv", "Work with ClusterServiceVersion files",
		lint.NewCmd(f, nil),
	)
}
