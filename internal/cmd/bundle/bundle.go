// Package bundle is `opm bundle`, which holds the bundle commands.
package bundle

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/bundle/build"
	"github.com/opmkit/opm/internal/cmd/bundle/generate"
	"github.com/opmkit/opm/internal/cmd/bundle/validate"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/group"
)

// NewCmd is `opm bundle` with its subcommands.
func NewCmd(f *factory.Factory) *cobra.Command {
	return group.New("bundle", "Work with operator bundles",
		validate.NewCmd(f, nil),
		generate.NewCmd(f, nil),
		build.NewCmd(f, nil),
	)
}
