// Package alpha is `opm alpha`: upstream opm v1.73.0's alpha bundle, list
// and render-graph commands, with upstream's flags, for scripts written for
// it. The bundle commands are thin aliases onto `opm bundle ...`. Upstream's
// catalog template commands (render-template, convert-template) live here
// too, as upstream keeps them.
package alpha

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/alpha/addbundle"
	"github.com/opmkit/opm/internal/cmd/alpha/bundle"
	"github.com/opmkit/opm/internal/cmd/alpha/converttemplate"
	"github.com/opmkit/opm/internal/cmd/alpha/filter"
	"github.com/opmkit/opm/internal/cmd/alpha/list"
	"github.com/opmkit/opm/internal/cmd/alpha/mirror"
	"github.com/opmkit/opm/internal/cmd/alpha/rendergraph"
	"github.com/opmkit/opm/internal/cmd/alpha/rendertemplate"
	"github.com/opmkit/opm/internal/cmd/alpha/upgradepath"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/group"
)

// NewCmd is `opm alpha` with its subcommands.
func NewCmd(f *factory.Factory) *cobra.Command {
	return group.New("alpha", "Upstream opm's alpha commands, with upstream's flags (bundle, list, render-graph), catalog templates (render-template, convert-template) and upgrade paths (upgrade-path)",
		bundle.NewCmd(f),
		list.NewCmd(f),
		rendergraph.NewCmd(f, nil),
		rendertemplate.NewCmd(f, nil),
		converttemplate.NewCmd(f),
		addbundle.NewGroupCmd(f),
		filter.NewCmd(f, nil),
		mirror.NewCmd(f, nil),
		upgradepath.NewCmd(f, nil),
	)
}
