// Package generate is `opm generate`: files for building file-based
// catalog images.
package generate

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/generate/dockerfile"
	"github.com/opmkit/opm/internal/cmd/group"
)

// NewCmd is `opm generate` with its subcommands.
func NewCmd(f *factory.Factory) *cobra.Command {
	return group.New("generate", "Generate files for building file-based catalog images",
		dockerfile.NewCmd(f, nil),
	)
}
