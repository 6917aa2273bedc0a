package index_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/image"
)

// otherPackage copies the valid bundle as package other-operator.
func otherPackage(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "other")
	require.NoError(t, os.CopyFS(dir, os.DirFS(validBundle)))
	for file, pair := range map[string][2]string{
		"manifests/example-operator.clusterserviceversion.yaml": {"name: example-operator.v0.1.0", "name: other-operator.v0.1.0"},
		"metadata/annotations.yaml":                             {"package.v1: example-operator", "package.v1: other-operator"},
	} {
		p := filepath.Join(dir, file)
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Contains(t, string(data), pair[0])
		require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(data), pair[0], pair[1], 1)), 0o644))
	}
	return dir
}

// TestIndexPruneImage prunes index images as upstream's index prune and
// prune-stranded did, moving only the database layer; -i given an index
// image warns.
func TestIndexPruneImage(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	reg := startRegistry(t)
	c := testClient(t)
	base := fakeBinaryImage(t, image.Platform{OS: "linux", Architecture: "amd64"})
	pushImage(t, c, base, reg.ref("opm:fake"))
	v1, v2 := twoVersions(t)
	other := otherPackage(t)

	r := o.Run("index", "add", "--use-http", "-i", reg.ref("opm:fake"), "-b", strings.Join([]string{v1, v2, other}, ","), "-t", reg.ref("idx:1"))
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.NotContains(t, r.ErrOut, "warning:")
	layers1 := layerDigests(t, c, reg.ref("idx:1"))

	r = o.Run("index", "prune", "--use-http", "-f", reg.ref("idx:1"), "-t", reg.ref("idx:2"), "-p", "other-operator")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "kept other-operator")
	assert.Contains(t, r.ErrOut, "removed example-operator (2 bundles)")
	r = o.Run("alpha", "list", "packages", "--use-http", reg.ref("idx:2"))
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "other-operator")
	assert.NotContains(t, r.Out, "example-operator")
	r = o.Run("alpha", "list", "packages", "--use-http", reg.ref("idx:1"))
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "example-operator", "the source image is untouched")
	layers2 := layerDigests(t, c, reg.ref("idx:2"))
	require.Len(t, layers2, len(layers1))
	assert.Equal(t, layers1[:len(layers1)-1], layers2[:len(layers2)-1], "only the database layer changes")
	assert.NotEqual(t, layers1[len(layers1)-1], layers2[len(layers2)-1])

	r = o.Run("index", "prune-stranded", "--use-http", "-f", reg.ref("idx:2"), "-t", reg.ref("idx:3"))
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "removed 0 stranded bundles")

	// -i given an index image: a warning that suggests -f.
	r = o.Run("index", "add", "--use-http", "-i", reg.ref("idx:1"), "-b", other, "-t", reg.ref("idx:4"))
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "warning: -i/--binary-image "+reg.ref("idx:1")+" is an index image")
	assert.Contains(t, r.ErrOut, "did you mean -f/--from-index")

	// Upstream refused -c none on prune; without -c opm works in-process.
	r = o.Run("index", "prune", "--use-http", "-f", reg.ref("idx:1"), "-t", reg.ref("idx:5"), "-p", "x", "-c", "none")
	assert.Equal(t, exit.UpstreamUsage, r.Code, r.ErrOut)
	r = o.Run("index", "prune", "--use-http", "-t", reg.ref("idx:5"), "-p", "x")
	assert.Equal(t, exit.UpstreamUsage, r.Code, r.ErrOut)
	assert.False(t, reg.hasTag(t, "idx", "5"))
}
