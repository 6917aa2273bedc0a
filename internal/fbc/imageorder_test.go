package fbc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/fbc"
)

// TestRenderBundleImageOrder: with ImageOrder, a bundle image's blob is
// ordered as upstream's render of a bundle image orders it (what
// templates print): related images as the CSV lists them (not sorted),
// then the bundle image, then the other images the bundle uses; every
// property by type then value, olm.bundle.object among them, and
// olm.csv.metadata last. The blob holds the same values either way.
func TestRenderBundleImageOrder(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "b")
	require.NoError(t, os.CopyFS(dir, os.DirFS("../../testdata/bundles/valid")))
	csv := filepath.Join(dir, "manifests", "example-operator.clusterserviceversion.yaml")
	data, err := os.ReadFile(csv)
	require.NoError(t, err)
	s := strings.Replace(string(data), "  relatedImages:\n    - name: manager\n", "  relatedImages:\n    - name: zeta\n      image: quay.io/z/zeta:1\n    - name: manager\n", 1)
	require.NotEqual(t, string(data), s)
	require.NoError(t, os.WriteFile(csv, []byte(s), 0o644))
	b, err := bundle.LoadDir(dir)
	require.NoError(t, err)
	const ref = "quay.io/me/op-bundle:v0.1.0"

	up, err := fbc.RenderBundle(b, ref, fbc.RenderOptions{ImageOrder: true})
	require.NoError(t, err)
	assert.Equal(t, []fbc.RelatedImage{
		{Name: "zeta", Image: "quay.io/z/zeta:1"},
		{Name: "manager", Image: "quay.io/example/example-operator:v0.1.0"},
		{Image: ref},
	}, up.RelatedImages)
	var types []string
	for _, p := range up.Properties {
		types = append(types, p.Type)
	}
	assert.Equal(t, []string{"olm.bundle.object", "olm.bundle.object", "olm.gvk", "olm.package"}, types)

	index, err := fbc.RenderBundle(b, ref, fbc.RenderOptions{})
	require.NoError(t, err)
	assert.ElementsMatch(t, index.RelatedImages, up.RelatedImages, "the same images")
	assert.ElementsMatch(t, index.Properties, up.Properties, "the same properties")
	assert.Equal(t, "quay.io/example/example-operator:v0.1.0", index.RelatedImages[0].Image, "sorted by default")

	meta, err := fbc.RenderBundle(b, ref, fbc.RenderOptions{ImageOrder: true, Migrate: fbc.MigrateCSVMetadata})
	require.NoError(t, err)
	types = nil
	for _, p := range meta.Properties {
		types = append(types, p.Type)
	}
	assert.Equal(t, []string{"olm.gvk", "olm.package", "olm.csv.metadata"}, types)
}
