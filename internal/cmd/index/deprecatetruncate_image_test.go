package index_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/image"
)

// TestIndexDeprecateTruncateImage deprecates a bundle of an index image:
// only the database layer changes, and a refused deprecation writes no
// image.
func TestIndexDeprecateTruncateImage(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	reg := startRegistry(t)
	c := testClient(t)
	base := fakeBinaryImage(t, image.Platform{OS: "linux", Architecture: "amd64"})
	pushImage(t, c, base, reg.ref("opm:fake"))
	v1, v2 := twoVersions(t)

	r := o.Run("index", "add", "--use-http", "-i", reg.ref("opm:fake"), "-b", strings.Join([]string{v1, v2}, ","), "-t", reg.ref("idx:1"))
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	layers1 := layerDigests(t, c, reg.ref("idx:1"))

	r = o.Run("index", "deprecatetruncate", "--use-http", "-f", reg.ref("idx:1"), "-t", reg.ref("idx:2"), "-b", v1)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "deprecated example-operator.v0.1.0 ("+v1+")")
	layers2 := layerDigests(t, c, reg.ref("idx:2"))
	require.Len(t, layers2, len(layers1))
	assert.Equal(t, layers1[:len(layers1)-1], layers2[:len(layers2)-1], "only the database layer changes")
	assert.NotEqual(t, layers1[len(layers1)-1], layers2[len(layers2)-1])

	// v2 heads the default channel: refused (exit 1), nothing pushed.
	r = o.Run("index", "deprecatetruncate", "--use-http", "-f", reg.ref("idx:2"), "-t", reg.ref("idx:3"), "-b", v2)
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "default channel")
	r = o.Run("alpha", "list", "packages", "--use-http", reg.ref("idx:3"))
	assert.NotEqual(t, exit.OK, r.Code, "idx:3 was written: %s", r.Out)
}
