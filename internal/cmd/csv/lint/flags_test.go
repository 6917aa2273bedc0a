package lint_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/csv/lint"
)

func TestLintFlags(t *testing.T) {
	t.Parallel()
	got, err := cmdtest.Parse(t, lint.NewCmd, "a.yaml", "b.yaml", "--fail-on", "info", "--select", "x", "-o", "json")
	require.NoError(t, err)
	assert.Equal(t, []string{"a.yaml", "b.yaml"}, got.Files)
	assert.Equal(t, "info", got.FailOn)
	assert.Equal(t, []string{"x"}, got.Select)
	assert.Equal(t, "json", got.Output)

	_, err = cmdtest.Parse(t, lint.NewCmd)
	assert.ErrorContains(t, err, "requires at least 1 arg")

	// csv lint has no image flags.
	_, err = cmdtest.Parse(t, lint.NewCmd, "--use-http", "a.yaml")
	assert.ErrorContains(t, err, "unknown flag: --use-http")
}
