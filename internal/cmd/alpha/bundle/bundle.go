// Package bundle is `opm alpha bundle`: upstream opm's spelling of the
// bundle commands, with upstream's flags.
package bundle

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/alpha/bundle/build"
	"github.com/opmkit/opm/internal/cmd/alpha/bundle/generate"
	"github.com/opmkit/opm/internal/cmd/alpha/bundle/unpack"
	"github.com/opmkit/opm/internal/cmd/alpha/bundle/validate"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/group"
)

// NewCmd is `opm alpha bundle` with its subcommands.
func NewCmd(f *factory.Factory) *cobra.Command {
	return group.New("bundle", "Upstream opm's bundle commands, with upstream's flags (prefer opm bundle)",
		generate.NewCmd(f, nil),
		build.NewCmd(f, nil),
		validate.NewCmd(f, nil),
		unpack.NewCmd(f, nil),
	)
}
