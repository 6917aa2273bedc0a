package validate_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/image"
)

// A bundle with an olm.bundle.object property, its image on quay.io and a
// related image on docker.io.
const objectCatalog = `{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"p","entries":[{"name":"p.v1.0.0"}]}
{"schema":"olm.bundle","name":"p.v1.0.0","package":"p","image":"quay.io/p/bundle@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}},{"type":"olm.bundle.object","value":{"data":"eyJraW5kIjoiQ29uZmlnTWFwIn0="}}],"relatedImages":[{"name":"operand","image":"docker.io/p/operand:v1"}]}
`

func TestValidatePublishingRules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "p/catalog.json", objectCatalog)
	o := cmdtest.New(t)

	// Without the flags, neither rule has anything to check against.
	r := o.Run("validate", dir)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	r = o.Run("validate", "--ocp-version", "4.16", dir)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)

	for _, ocp := range []string{"4.17", "v4.18"} {
		r = o.Run("validate", "--ocp-version", ocp, "-o", "json", dir)
		require.Equal(t, exit.Failed, r.Code, r.ErrOut)
		fs := cmdtest.Findings(cmdtest.DecodeReport(t, r.Out), 0)
		require.Equal(t, []string{"catalog-openshift-csv-metadata"}, cmdtest.RulesOf(fs))
		assert.Equal(t, "properties[1]", fs[0]["field"])
		assert.Equal(t, "p/catalog.json", fs[0]["file"])
		assert.Equal(t, "3", fmt.Sprint(fs[0]["line"]))
		assert.Contains(t, fs[0]["message"], "has 1 olm.bundle.object propert(ies); catalogs for OpenShift "+strings.TrimPrefix(ocp, "v"))
	}
	r = o.Run("validate", "--ocp-version", "4.17", "--skip", "catalog-openshift-csv-metadata", dir)
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)
	r = o.Run("validate", "--ocp-version", "4", dir)
	assert.Equal(t, exit.Usage, r.Code, r.ErrOut)

	// Allowed registries: the bundle image passes, the related image not
	// (a warning, as image-registry-allowed is).
	r = o.Run("validate", "--allowed-registries", "quay.io", "-o", "json", dir)
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)
	fs := cmdtest.Findings(cmdtest.DecodeReport(t, r.Out), 0)
	require.Equal(t, []string{"catalog-image-registry-allowed"}, cmdtest.RulesOf(fs))
	assert.Equal(t, "relatedImages[0].image", fs[0]["field"])
	assert.Equal(t, "warning", fs[0]["severity"])
	assert.Contains(t, fs[0]["message"], `related image "operand" of bundle p.v1.0.0 is docker.io/p/operand:v1, from docker.io, which is not an allowed registry (quay.io)`)
	r = o.Run("validate", "--allowed-registries", "registry.example.com", "--fail-on", "warning", "-o", "json", dir)
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Len(t, cmdtest.Findings(cmdtest.DecodeReport(t, r.Out), 0), 2)
}

// An index image's catalog is held to the same rules.
func TestValidatePublishingRulesImage(t *testing.T) {
	t.Parallel()
	b := image.NewLayerBuilder()
	require.NoError(t, b.AddFile("configs/p/catalog.json", []byte(objectCatalog)))
	layer, err := b.Layer()
	require.NoError(t, err)
	img, err := image.NewImage(image.ImageConfig{Labels: map[string]string{"operators.operatorframework.io.index.configs.v1": "/configs"}}, layer)
	require.NoError(t, err)
	c, err := image.NewClient(image.Options{})
	require.NoError(t, err)
	ref := "oci:" + filepath.Join(t.TempDir(), "layout") + ":1"
	dst, err := image.ParseReference(ref)
	require.NoError(t, err)
	_, err = c.Write(context.Background(), img, dst)
	require.NoError(t, err)

	o := cmdtest.New(t)
	r := o.Run("validate", ref)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	r = o.Run("validate", "--ocp-version", "4.17", "--allowed-registries", "quay.io", "-o", "json", ref)
	require.Equal(t, exit.Failed, r.Code, r.ErrOut)
	rules := cmdtest.RulesOf(cmdtest.Findings(cmdtest.DecodeReport(t, r.Out), 0))
	sort.Strings(rules)
	assert.Equal(t, []string{"catalog-image-registry-allowed", "catalog-openshift-csv-metadata"}, rules)
}
