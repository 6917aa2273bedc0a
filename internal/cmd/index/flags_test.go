package index_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/index/add"
	"github.com/opmkit/opm/internal/cmd/index/export"
	"github.com/opmkit/opm/internal/cmd/index/inspect"
	"github.com/opmkit/opm/internal/cmd/index/rm"
	"github.com/opmkit/opm/internal/indeximage"
	"github.com/opmkit/opm/internal/version"
)

// Flag parsing alone, through each command's runF seam.

func TestAddFlags(t *testing.T) {
	t.Parallel()
	got, err := cmdtest.Parse(t, add.NewCmd, "-b", "a,b", "--bundles", "c", "-f", "r/i:1", "-t", "r/i:2", "--mode", "semver",
		"--permissive", "--overwrite-latest", "-o", "json", "-c", "podman", "-u", "docker", "-p", "none", "--enable-alpha", "--use-http")
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, got.Bundles)
	assert.Equal(t, "r/i:1", got.FromIndex)
	assert.Equal(t, "r/i:2", got.Tag)
	assert.Equal(t, "semver", got.Mode)
	assert.True(t, got.Permissive)
	assert.True(t, got.OverwriteLatest)
	assert.Equal(t, "json", got.Output)
	assert.Equal(t, "podman", got.ContainerTool)
	assert.Equal(t, "docker", got.BuildTool)
	assert.Equal(t, "none", got.PullTool)
	assert.True(t, got.EnableAlpha)
	assert.True(t, got.Image.UseHTTP)

	got, err = cmdtest.Parse(t, add.NewCmd, "-b", "a", "--generate")
	require.NoError(t, err)
	assert.Equal(t, "replaces", got.Mode)
	assert.Empty(t, got.BinaryImage, "the default depends on the running opm's version")
	assert.Empty(t, got.OutDockerfile, "as upstream: empty means "+indeximage.DefaultDockerfile)
	assert.True(t, got.Generate)
	assert.True(t, got.ImageMode())
}

// Without -i, a new index (or a generated Dockerfile) is based on opm's
// serving image of the running release; a development build has none.
func TestDefaultBinaryImage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-b", "a", "--generate"}, {"-b", "a", "-t", "r/i:1"}, {"-b", "a", "-f", "r/i:1", "--generate"}} {
		got, err := cmdtest.Parse(t, add.NewCmd, args...)
		require.NoError(t, err)
		_, _, err = got.Check("", "v1.2.3")
		require.NoError(t, err, args)
		assert.Equal(t, indeximage.ServingImageRepository+":v1.2.3", got.BinaryImage, args)
	}

	// Extending an index image needs no base.
	got, err := cmdtest.Parse(t, add.NewCmd, "-b", "a", "-f", "r/i:1", "-t", "r/i:2")
	require.NoError(t, err)
	_, _, err = got.Check("", "dev")
	require.NoError(t, err)
	assert.Empty(t, got.BinaryImage)

	// -i wins over the default, on any build.
	got, err = cmdtest.Parse(t, add.NewCmd, "-b", "a", "-t", "r/i:1", "-i", "quay.io/operator-framework/opm:v1.73.0")
	require.NoError(t, err)
	_, _, err = got.Check("", "dev")
	require.NoError(t, err)
	assert.Equal(t, "quay.io/operator-framework/opm:v1.73.0", got.BinaryImage)

	// A development build is told to pass -i: a usage error, nothing read.
	for _, v := range []string{"dev", "v1.2.3-4-gabcdef12", "v1.2.3-dirty"} {
		o := cmdtest.New(t)
		o.Configure = func(f *factory.Factory) { f.Version = func() version.Info { return version.Info{Version: v} } }
		r := o.Run("index", "add", "-b", validBundle, "-t", "oci:"+filepath.Join(t.TempDir(), "idx"))
		assert.Equal(t, exit.UpstreamUsage, r.Code, v)
		assert.Contains(t, r.ErrOut, "no -i/--binary-image given, and this opm (version \""+v+"\") is a development build", v)
		assert.Contains(t, r.ErrOut, "make serving-image", v)
	}
}

func TestRmFlags(t *testing.T) {
	t.Parallel()
	// -o is --operators, as upstream; --output has no short form.
	got, err := cmdtest.Parse(t, rm.NewCmd, "-o", "a,b", "--database", "x.db", "--output", "json")
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, got.Operators)
	assert.Equal(t, "x.db", got.Database)
	assert.Equal(t, "json", got.Output)
	assert.False(t, got.ImageMode())
}

func TestInspectFlags(t *testing.T) {
	t.Parallel()
	got, err := cmdtest.Parse(t, inspect.NewCmd, "x.db", "-o", "json")
	require.NoError(t, err)
	assert.Equal(t, "x.db", got.Index)
	assert.Equal(t, "json", got.Output)

	_, err = cmdtest.Parse(t, inspect.NewCmd)
	assert.ErrorContains(t, err, "accepts 1 arg")
}

func TestExportFlags(t *testing.T) {
	t.Parallel()
	got, err := cmdtest.Parse(t, export.NewCmd, "-i", "x.db", "-p", "a,b")
	require.NoError(t, err)
	assert.Equal(t, "x.db", got.Index)
	assert.Equal(t, []string{"a", "b"}, got.Packages)
	assert.Equal(t, "downloaded", got.Folder)

	got, err = cmdtest.Parse(t, export.NewCmd, "--index", "r/i:1", "--download-folder", "out", "--skip-tls-verify")
	require.NoError(t, err)
	assert.Equal(t, "out", got.Folder)
	assert.True(t, got.Image.SkipTLSVerify)
}
