package resolve_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
)

const upgradeGraphDoc = "../../../../docs/upgrade-graph.md"

// TestResolveExampleDocs runs the examples of docs/upgrade-graph.md's
// "Will OLM install it?" (a text block after a "resolve example" or
// "upgrade-path dependencies example" comment: the command line, then its
// stdout) on this package's testdata and compares the output; with
// UPDATE_DOCS=1 (make docs) it writes the output into the page, as the
// resolvers' reasons are worded.
func TestResolveExampleDocs(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(upgradeGraphDoc)
	require.NoError(t, err)
	doc := string(raw)
	n := 0
	o := cmdtest.New(t)
	for _, marker := range []string{"<!-- resolve example -->\n```text\n", "<!-- upgrade-path dependencies example -->\n```text\n"} {
		parts := strings.Split(doc, marker)
		for i, p := range parts[1:] {
			block, rest, ok := strings.Cut(p, "```\n")
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
			assert.Empty(t, r.ErrOut, cmdLine)
			parts[i+1] = cmdLine + "\n" + r.Out + "```\n" + rest
			if os.Getenv("UPDATE_DOCS") == "" {
				assert.Equal(t, want, r.Out, "%s (make docs rewrites the example)", cmdLine)
			}
			n++
		}
		doc = strings.Join(parts, marker)
	}
	assert.Equal(t, 4, n, "four examples")
	if os.Getenv("UPDATE_DOCS") != "" && doc != string(raw) {
		require.NoError(t, os.WriteFile(upgradeGraphDoc, []byte(doc), 0o644))
	}
}
