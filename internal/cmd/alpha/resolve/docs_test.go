package resolve_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
)

// TestDocExamples runs the examples of docs/upgrade-graph.md's "Will OLM
// install it?" (a text block after a "resolve example" or "upgrade-path
// dependencies example" comment: the command line, then its stdout) on
// this package's testdata and compares the output.
func TestDocExamples(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../../../docs/upgrade-graph.md")
	require.NoError(t, err)
	n := 0
	o := cmdtest.New(t)
	for _, marker := range []string{"<!-- resolve example -->\n```text\n", "<!-- upgrade-path dependencies example -->\n```text\n"} {
		for _, p := range strings.Split(string(raw), marker)[1:] {
			block, _, ok := strings.Cut(p, "```\n")
			require.True(t, ok)
			cmdLine, want, _ := strings.Cut(block, "\n")
			args := strings.Fields(strings.TrimPrefix(cmdLine, "$ opm "))
			for i, a := range args {
				switch a {
				case "catalog/":
					args[i] = demoCat
				case "demo-extension.yaml":
					args[i] = "testdata/" + a
				default:
					args[i] = strings.Replace(a, "catalogs/", "testdata/catalogs/", 1)
				}
			}
			r := o.Run(args...)
			assert.Equal(t, want, r.Out, cmdLine)
			assert.Empty(t, r.ErrOut, cmdLine)
			n++
		}
	}
	assert.Equal(t, 4, n, "four examples")
}
