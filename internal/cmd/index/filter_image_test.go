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

// TestIndexFilterImage (issue 29, item 2): the filter's result as an
// index image written as index prune writes one: a file-based catalog
// with its serve cache, only the catalog layer replaced; the source
// untouched; a filter that fails writes nothing.
func TestIndexFilterImage(t *testing.T) {
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

	cfg := filepath.Join(t.TempDir(), "filter.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`apiVersion: olm.operatorframework.io/v1alpha1
kind: FilterConfiguration
packages:
- name: example-operator
  channels:
  - name: stable
    versionRange: "<0.2.0"
`), 0o644))
	r = o.Run("index", "filter", "--use-http", "--config", cfg, "-f", reg.ref("idx:1"), "-t", reg.ref("idx:f"), "--catalog-format", "fbc")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "removed 2 bundles")
	assert.Contains(t, r.ErrOut, "serve cache")
	r = o.Run("alpha", "list", "bundles", "--use-http", reg.ref("idx:f"))
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "example-operator.v0.1.0")
	assert.NotContains(t, r.Out, "example-operator.v0.2.0")
	assert.NotContains(t, r.Out, "other-operator")
	r = o.Run("validate", "--use-http", reg.ref("idx:f"))
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)
	r = o.Run("alpha", "list", "packages", "--use-http", reg.ref("idx:1"))
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "other-operator", "the source image is untouched")

	// The default channel filtered out: refused, nothing pushed.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("apiVersion: olm.operatorframework.io/v1alpha1\nkind: FilterConfiguration\npackages:\n- name: example-operator\n  channels:\n  - name: stable\n    versionRange: '>9.0.0'\n"), 0o644))
	r = o.Run("index", "filter", "--use-http", "--config", bad, "-f", reg.ref("idx:1"), "-t", reg.ref("idx:bad"))
	assert.NotEqual(t, exit.OK, r.Code)
	assert.Contains(t, r.ErrOut, "nothing was written")
	r = o.Run("alpha", "list", "packages", "--use-http", reg.ref("idx:bad"))
	assert.NotEqual(t, exit.OK, r.Code, "no image was pushed")
}
