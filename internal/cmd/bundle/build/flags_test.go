package build_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	bundlebuild "github.com/opmkit/opm/internal/cmd/bundle/build"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
)

func TestBuildFlags(t *testing.T) {
	t.Parallel()
	got, err := cmdtest.Parse(t, bundlebuild.NewCmd, "-d", "b", "-t", "oci:x:1")
	require.NoError(t, err)
	assert.Equal(t, "b", got.Directory)
	assert.Equal(t, "oci:x:1", got.Tag)
	assert.Empty(t, got.ImageBuilder)
	assert.False(t, got.Permissive)
	assert.Equal(t, "error", got.FailOn)

	got, err = cmdtest.Parse(t, bundlebuild.NewCmd, "-d", "b/manifests", "-t", "r/x:1", "-p", "pkg", "-c", "a,b", "-e", "a",
		"-u", "out", "--overwrite", "-b", "podman", "--permissive", "--skip", "yaml-syntax", "--skip-tls-verify")
	require.NoError(t, err)
	assert.Equal(t, "pkg", got.Package)
	assert.Equal(t, []string{"a", "b"}, got.Channels)
	assert.Equal(t, "a", got.DefaultChannel)
	assert.Equal(t, "out", got.OutputDir)
	assert.True(t, got.Overwrite)
	assert.Equal(t, "podman", got.ImageBuilder)
	assert.True(t, got.Permissive)
	assert.Equal(t, []string{"yaml-syntax"}, got.Skip)
	assert.True(t, got.Image.SkipTLSVerify)

	_, err = cmdtest.Parse(t, bundlebuild.NewCmd, "-d", "b", "-t", "x", "extra")
	assert.ErrorContains(t, err, "unknown command")
}
