package validate_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/image"
)

const gatesBundle = "../../../validate/testdata/gates"

// The gates fixture passes the conforma set as a directory and as a single
// image; pushed inside an image index, conforma-bundle-image-index fails it
// (the index is known from opening the image: no extra pull).
func TestBundleValidateConforma(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	r := o.Run("bundle", "validate", "--select", "default,conforma", "--fail-on", "warning", gatesBundle)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)

	b, err := bundle.LoadDir(gatesBundle)
	require.NoError(t, err)
	img, err := image.BuildBundleImage(os.DirFS(gatesBundle), b.Annotations.Values)
	require.NoError(t, err)
	c, err := image.NewClient(image.Options{})
	require.NoError(t, err)
	layout := filepath.Join(t.TempDir(), "layout")
	single, err := image.ParseReference("oci:" + layout + ":single")
	require.NoError(t, err)
	_, err = c.Write(context.Background(), img, single)
	require.NoError(t, err)
	idx := v1.ImageIndex(empty.Index)
	for _, arch := range []string{"amd64", "arm64", "ppc64le", "s390x"} {
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	multi, err := image.ParseReference("oci:" + layout + ":multi")
	require.NoError(t, err)
	_, err = c.WriteList(context.Background(), idx, multi)
	require.NoError(t, err)

	r = o.Run("bundle", "validate", "--select", "conforma", "-o", "json", "oci:"+layout+":single")
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)
	r = o.Run("bundle", "validate", "--select", "conforma", "-o", "json", "oci:"+layout+":multi")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	fs := cmdtest.Findings(cmdtest.DecodeReport(t, r.Out), 0)
	require.Equal(t, []string{"conforma-bundle-image-index"}, cmdtest.RulesOf(fs))
	assert.Contains(t, fs[0]["message"], "is an image index (sha256:")
}
