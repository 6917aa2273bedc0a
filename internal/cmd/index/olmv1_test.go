package index_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/indeximage"
)

// copyDir copies a bundle directory so that a test can edit it.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

// TestFBCIndexImagePassesOLMv1Rules: a catalog image built by index add
// --catalog-format fbc from a bundle OLM v1 can install passes the olmv1-*
// rules (the conversion adds nothing operator-controller refuses); one built
// from a bundle without AllNamespaces and with a dependency fails them,
// naming the bundle.
func TestFBCIndexImagePassesOLMv1Rules(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	o.Dir = t.TempDir()
	reg := startRegistry(t)
	c := testClient(t)
	pushImage(t, c, fakeBinaryImage(t, image.Platform{OS: "linux", Architecture: "amd64"}), reg.ref("opm:fake"))
	valid, err := filepath.Abs("../../../testdata/bundles/valid")
	require.NoError(t, err)

	validateImage := func(bundleDir, tag string) cmdtest.Result {
		t.Helper()
		ref := reg.ref("idx:" + tag)
		r := o.Run("index", "add", "--use-http", "-b", bundleDir, "-i", reg.ref("opm:fake"), "-t", ref, "--catalog-format", "fbc")
		require.Equal(t, 0, r.Code, r.ErrOut)
		r = o.Run("render", "--use-http", ref)
		require.Equal(t, 0, r.Code, r.ErrOut)
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(r.Out), 0o644))
		return o.Run("validate", dir, "--select", "default,olmv1")
	}

	r := validateImage(valid, "ok")
	assert.Equal(t, 0, r.Code, r.ErrOut)
	assert.NotContains(t, r.ErrOut, "olmv1-")

	bad := copyDir(t, valid)
	csvs, err := filepath.Glob(filepath.Join(bad, "manifests", "*.clusterserviceversion.yaml"))
	require.NoError(t, err)
	require.Len(t, csvs, 1)
	data, err := os.ReadFile(csvs[0])
	require.NoError(t, err)
	edited := strings.Replace(string(data), "    - type: AllNamespaces\n      supported: true", "    - type: AllNamespaces\n      supported: false", 1)
	require.NotEqual(t, string(data), edited, "fixture changed: no AllNamespaces to turn off")
	require.NoError(t, os.WriteFile(csvs[0], []byte(edited), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(bad, "metadata", "dependencies.yaml"),
		[]byte("dependencies:\n- type: olm.package\n  value: {packageName: other, version: '>=1.0.0'}\n"), 0o644))
	r = validateImage(bad, "bad")
	assert.Equal(t, 1, r.Code, r.ErrOut)
	for _, want := range []string{"olmv1-all-namespaces", "olmv1-dependencies", "olm.package.required", "example-operator.v0.1.0"} {
		assert.Contains(t, r.ErrOut, want)
	}
}

// TestValidateIndexImageOLMv1: opm validate takes an index image. With
// --select olmv1, a sqlite-only image (what catalogd refuses: no configs
// label) fails olmv1-catalog-image, naming the image, the missing label
// and how to rebuild; fbc and both images pass, their bundles checked too.
func TestValidateIndexImageOLMv1(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	o.Dir = t.TempDir()
	reg := startRegistry(t)
	c := testClient(t)
	pushImage(t, c, fakeBinaryImage(t, image.Platform{OS: "linux", Architecture: "amd64"}), reg.ref("opm:fake"))
	valid, err := filepath.Abs("../../../testdata/bundles/valid")
	require.NoError(t, err)

	for _, format := range []string{"sqlite", "fbc", "both"} {
		ref := reg.ref("idx:" + format)
		r := o.Run("index", "add", "--use-http", "-b", valid, "-i", reg.ref("opm:fake"), "-t", ref, "--catalog-format", format)
		require.Equal(t, 0, r.Code, r.ErrOut)

		r = o.Run("validate", "--use-http", "--select", "olmv1", ref)
		if format == "sqlite" {
			assert.Equal(t, 1, r.Code, r.ErrOut)
			for _, want := range []string{"olmv1-catalog-image", ref, "operators.operatorframework.io.index.configs.v1", "sqlite index image", "--catalog-format fbc", "opm generate dockerfile"} {
				assert.Contains(t, r.ErrOut, want, format)
			}
		} else {
			assert.Equal(t, 0, r.Code, "%s: %s", format, r.ErrOut)
			assert.NotContains(t, r.ErrOut, "olmv1-", format)
		}
		// The default rules alone never report the image rule.
		r = o.Run("validate", "--use-http", "-o", "json", ref)
		assert.Equal(t, 0, r.Code, "%s: %s", format, r.ErrOut)
		assert.Contains(t, r.Out, `"passed": true`, format)
		assert.NotContains(t, r.Out, "olmv1-catalog-image", format)
	}

	// --skip takes the rule like any other.
	r := o.Run("validate", "--use-http", "--select", "olmv1", "--skip", "olmv1-catalog-image", reg.ref("idx:sqlite"))
	assert.Equal(t, 0, r.Code, r.ErrOut)

	// The catalog of the image is checked too: a bundle OLM v1 cannot
	// install fails in an fbc image, named in the report.
	bad := copyDir(t, valid)
	require.NoError(t, os.WriteFile(filepath.Join(bad, "metadata", "dependencies.yaml"),
		[]byte("dependencies:\n- type: olm.package\n  value: {packageName: other, version: '>=1.0.0'}\n"), 0o644))
	ref := reg.ref("idx:bad")
	r = o.Run("index", "add", "--use-http", "-b", bad, "-i", reg.ref("opm:fake"), "-t", ref, "--catalog-format", "fbc")
	require.Equal(t, 0, r.Code, r.ErrOut)
	r = o.Run("validate", "--use-http", "--select", "olmv1", ref)
	assert.Equal(t, 1, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "olmv1-dependencies")
	assert.NotContains(t, r.ErrOut, "olmv1-catalog-image")

	// An image that is not an index is a usage error naming what it is.
	r = o.Run("validate", "--use-http", reg.ref("opm:fake"))
	assert.Equal(t, 2, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "neither an index image")
}

// TestValidateBothImageReadsCatalog: an image labelled for both a database
// and a file-based catalog is checked by its catalog, what catalogd reads:
// here the database its label names is absent, and the catalog is valid.
func TestValidateBothImageReadsCatalog(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	reg := startRegistry(t)
	c := testClient(t)
	lb := image.NewLayerBuilder()
	require.NoError(t, lb.AddFile("configs/op/catalog.json", []byte(`{"schema":"olm.package","name":"op","defaultChannel":"stable"}
{"schema":"olm.channel","package":"op","name":"stable","entries":[{"name":"op.v1.0.0"}]}
{"schema":"olm.bundle","package":"op","name":"op.v1.0.0","image":"quay.io/me/op-bundle:v1.0.0","properties":[{"type":"olm.package","value":{"packageName":"op","version":"1.0.0"}}]}
`)))
	l, err := lb.Layer()
	require.NoError(t, err)
	img, err := image.NewImage(image.ImageConfig{Labels: map[string]string{
		indeximage.DatabaseLabel: "/database/index.db", indeximage.ConfigsLabel: "/configs"}}, l)
	require.NoError(t, err)
	ref := reg.ref("both:nodb")
	pushImage(t, c, img, ref)

	r := o.Run("validate", "--use-http", "--select", "default,olmv1", ref)
	assert.Equal(t, 0, r.Code, r.ErrOut)
	// render reads such an image by its database, as upstream does.
	r = o.Run("render", "--use-http", ref)
	assert.NotEqual(t, 0, r.Code, r.ErrOut)
}
