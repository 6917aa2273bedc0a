package index_test

import (
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/image"
)

// --layer-compression zstd writes the database layer as OCI zstd; the next
// add reads it and, by default, writes gzip again. A bad value is a usage
// error before anything is read.
func TestIndexAddLayerCompression(t *testing.T) {
	t.Parallel()
	needCorpus(t)
	o := cmdtest.New(t)
	reg := startRegistry(t)
	c := testClient(t)
	pushImage(t, c, fakeBinaryImage(t, image.Platform{OS: "linux", Architecture: "amd64"}), reg.ref("opm:fake"))
	refs := pushBundles(t, c, reg.Addr, "etcd", "0.6.1", "0.9.0")

	dbLayerType := func(ref string) types.MediaType {
		r, err := image.ParseReference(ref)
		require.NoError(t, err)
		im, err := c.Open(t.Context(), r)
		require.NoError(t, err)
		defer func() { _ = im.Close() }()
		ls := im.Layers()
		return ls[len(ls)-1].MediaType
	}

	r := o.Run("index", "add", "--use-http", "--layer-compression", "zstd", "-b", refs[0], "-i", reg.ref("opm:fake"), "-t", reg.ref("idx:0"))
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Equal(t, types.OCILayerZStd, dbLayerType(reg.ref("idx:0")))

	r = o.Run("index", "add", "--use-http", "-b", refs[1], "-f", reg.ref("idx:0"), "-t", reg.ref("idx:1"))
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Equal(t, types.OCILayer, dbLayerType(reg.ref("idx:1")))
	assert.Len(t, layerDigests(t, c, reg.ref("idx:1")), 3, "the zstd database layer was replaced")

	reg.proxy.take()
	r = o.Run("index", "add", "--use-http", "--layer-compression", "xz", "-b", refs[1], "-f", reg.ref("idx:0"), "-t", reg.ref("idx:2"))
	assert.Equal(t, 64, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "--layer-compression")
	assert.Empty(t, reg.proxy.take(), "a bad --layer-compression reached the registry")
}
