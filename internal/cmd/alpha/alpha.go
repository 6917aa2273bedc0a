// Package alpha is `opm alpha`: upstream opm v1.73.0's alpha bundle, list
// and render-graph commands, with upstream's flags, for scripts written for
// it. The bundle commands are thin aliases onto `opm bundle ...`. Upstream's
// catalog template commands (render-template, convert-template) live here
// too, as upstream keeps them.
package alpha

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/alpha/addbundle"
	"github.com/opmkit/opm/internal/cmd/alpha/bundle"
	"github.com/opmkit/opm/internal/cmd/alpha/converttemplate"
	"github.com/opmkit/opm/internal/cmd/alpha/filter"
	"github.com/opmkit/opm/internal/cmd/alpha/list"
	"github.com/opmkit/opm/internal/cmd/alpha/mirror"
	"github.com/opmkit/opm/internal/cmd/alpha/rendergraph"
	"github.com/opmkit/opm/internal/cmd/alpha/rendertemplate"
	"github.com/opmkit/opm/internal/cmd/alpha/resolve"
	"github.com/opmkit/opm/internal/cmd/alpha/upgradepath"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/group"
)

// NewCmd is `opm alpha` with its subcommands. Its summary names each
// of them (a group's with their parent: template add-bundle), so that
// `opm --help` tells what is under alpha.
func NewCmd(f *factory.Factory) *cobra.Command {
	cmd := group.New("alpha", "",
		bundle.NewCmd(f),
		list.NewCmd(f),
		rendergraph.NewCmd(f, nil),
		rendertemplate.NewCmd(f, nil),
		converttemplate.NewCmd(f),
		addbundle.NewGroupCmd(f),
		filter.NewCmd(f, nil),
		mirror.NewCmd(f, nil),
		upgradepath.NewCmd(f, nil),
		resolve.NewCmd(f, nil),
	)
	cmd.Short = "Upstream opm's alpha commands and opm's newer ones: " + strings.Join(Names(cmd), ", ")
	return cmd
}

// Names are the runnable commands below cmd, a group's subcommands after
// the group's name ("list bundles|packages", "template add-bundle").
func Names(cmd *cobra.Command) []string {
	var out []string
	for _, c := range cmd.Commands() {
		if !c.IsAvailableCommand() {
			continue
		}
		if len(c.Commands()) == 0 {
			out = append(out, c.Name())
			continue
		}
		if c.LocalNonPersistentFlags().HasAvailableFlags() {
			// A command of its own too, not a group (those take no
			// flags): mirror [prune].
			out = append(out, c.Name()+" ["+strings.Join(Names(c), "|")+"]")
			continue
		}
		out = append(out, c.Name()+" "+strings.Join(Names(c), "|"))
	}
	return out
}
