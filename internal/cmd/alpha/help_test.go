package alpha_test

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/alpha"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
)

// leaves are the commands below cmd without subcommands that help lists
// (not hidden or deprecated).
func leaves(cmd *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, c := range cmd.Commands() {
		if !c.IsAvailableCommand() {
			continue
		}
		if len(c.Commands()) == 0 {
			out = append(out, c)
		}
		out = append(out, leaves(c)...)
	}
	return out
}

// TestHelpNamesEveryCommand (issue 36, item 7): opm --help and opm alpha
// --help describe alpha by naming every command under it (mirror, filter,
// template add-bundle, ...); serve's summary says gRPC and HTTP; index
// filter has --explain and a --container-tool help without a default it
// does not use.
func TestHelpNamesEveryCommand(t *testing.T) {
	t.Parallel()
	tree := alpha.NewCmd(&factory.Factory{})
	all := leaves(tree)
	require.Greater(t, len(all), 10)
	o := cmdtest.New(t)
	for _, args := range [][]string{{"--help"}, {"alpha", "--help"}} {
		r := o.Run(args...)
		require.Equal(t, exit.OK, r.Code, r.ErrOut)
		help := r.Out + r.ErrOut
		var alphaLine string
		for _, l := range strings.Split(help, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "alpha ") || strings.HasPrefix(l, "Upstream opm's alpha") {
				alphaLine = l
			}
		}
		require.NotEmpty(t, alphaLine, "%v:\n%s", args, help)
		for _, c := range all {
			assert.Contains(t, alphaLine, c.Name(), "%v: alpha's summary does not name %s", args, c.CommandPath())
		}
		for _, name := range []string{"mirror", "filter", "template add-bundle", "upgrade-path"} {
			assert.Contains(t, alphaLine, name)
		}
	}
	r := o.Run("--help")
	assert.Regexp(t, `serve +Serve a file-based catalog over gRPC .* and HTTP`, r.Out+r.ErrOut)

	r = o.Run("index", "filter", "--help")
	help := r.Out + r.ErrOut
	assert.Contains(t, help, "--explain")
	for _, l := range strings.Split(help, "\n") {
		if strings.Contains(l, "--container-tool") {
			assert.NotContains(t, l, `(default "podman")`, "opm uses no tool unless -c is given")
		}
	}
}
