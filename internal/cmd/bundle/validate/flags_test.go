package validate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/bundle/validate"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
)

// Flag parsing alone, through the runF seam: nothing is validated.
func TestValidateFlags(t *testing.T) {
	t.Parallel()
	got, err := cmdtest.Parse(t, validate.NewCmd, "a", "b")
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, got.Paths)
	assert.Equal(t, "text", got.Output)
	assert.Equal(t, "error", got.FailOn)
	assert.False(t, got.ListRules)
	assert.False(t, got.FromFiles)

	got, err = cmdtest.Parse(t, validate.NewCmd, "-o", "json", "--select", "a,b", "--select", "c", "--skip", "d",
		"--fail-on", "warning", "--k8s-version", "1.25", "--from-files", "--use-http", "x")
	require.NoError(t, err)
	assert.Equal(t, "json", got.Output)
	assert.Equal(t, []string{"a", "b", "c"}, got.Select)
	assert.Equal(t, []string{"d"}, got.Skip)
	assert.Equal(t, "warning", got.FailOn)
	assert.Equal(t, "1.25", got.K8sVersion)
	assert.True(t, got.FromFiles)
	assert.True(t, got.Image.UseHTTP)

	got, err = cmdtest.Parse(t, validate.NewCmd, "--list-rules")
	require.NoError(t, err)
	assert.True(t, got.ListRules)
	assert.Empty(t, got.Paths, "no path is a run-time error, not a parse error")

	_, err = cmdtest.Parse(t, validate.NewCmd, "--frobnicate")
	assert.ErrorContains(t, err, "unknown flag: --frobnicate")
}
