package alpha_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	alphabuild "github.com/opmkit/opm/internal/cmd/alpha/bundle/build"
	alphagen "github.com/opmkit/opm/internal/cmd/alpha/bundle/generate"
	alphavalidate "github.com/opmkit/opm/internal/cmd/alpha/bundle/validate"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/image"
)

const validBundle = "../../../testdata/bundles/valid"

func TestAlphaBundleFlags(t *testing.T) {
	t.Parallel()
	g, err := cmdtest.Parse(t, alphagen.NewCmd, "-d", "m", "-p", "pkg", "-c", "a, b", "-e", "a", "-u", "out", "--base-image", "busybox")
	require.NoError(t, err)
	assert.True(t, g.Upstream)
	assert.Equal(t, []string{"a", "b"}, g.Channels)
	assert.Equal(t, "busybox", g.BaseImage)
	assert.Equal(t, "out", g.OutputDir)

	b, err := cmdtest.Parse(t, alphabuild.NewCmd, "-d", "m", "-t", "oci:x:1", "-o", "-c", "stable")
	require.NoError(t, err)
	assert.True(t, b.Overwrite, "-o is --overwrite on this path")
	assert.Empty(t, b.ImageBuilder, "without -b opm builds in-process")
	assert.Empty(t, b.BaseImage, "scratch")
	b, err = cmdtest.Parse(t, alphabuild.NewCmd, "-d", "m", "-t", "x:1", "-b", "podman")
	require.NoError(t, err)
	assert.Equal(t, "podman", b.ImageBuilder)
	_, err = cmdtest.Parse(t, alphabuild.NewCmd, "-d", "m")
	assert.ErrorContains(t, err, `"tag" not set`)

	v, err := cmdtest.Parse(t, alphavalidate.NewCmd, "-t", "quay.io/x/b:1", "-b", "podman", "-o", "operatorhub,bundle-objects")
	require.NoError(t, err)
	assert.Equal(t, []string{"quay.io/x/b:1"}, v.Paths)
	_, err = cmdtest.Parse(t, alphavalidate.NewCmd, "-t", "x", "-o", "operatorhub,nosuch")
	assert.ErrorContains(t, err, `unknown validator "nosuch"`)
}

// TestAlphaBundleGenerate checks upstream's bundle.Dockerfile, byte for
// byte, in the working directory.
func TestAlphaBundleGenerate(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	o.Dir = t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(o.Dir, "bundle", "manifests"), os.DirFS(filepath.Join(validBundle, "manifests"))))

	r := o.Run("alpha", "bundle", "generate", "-d", "bundle/manifests", "-p", "example-operator", "-c", "stable,fast", "--base-image", "registry.example/base:1")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	got, err := os.ReadFile(filepath.Join(o.Dir, "bundle.Dockerfile"))
	require.NoError(t, err)
	assert.Equal(t, `FROM registry.example/base:1

LABEL operators.operatorframework.io.bundle.mediatype.v1=registry+v1
LABEL operators.operatorframework.io.bundle.manifests.v1=manifests/
LABEL operators.operatorframework.io.bundle.metadata.v1=metadata/
LABEL operators.operatorframework.io.bundle.package.v1=example-operator
LABEL operators.operatorframework.io.bundle.channels.v1=stable,fast
COPY bundle/manifests /manifests/
COPY bundle/metadata /metadata/
`, string(got))
	ann, err := os.ReadFile(filepath.Join(o.Dir, "bundle", "metadata", "annotations.yaml"))
	require.NoError(t, err)
	assert.NotContains(t, string(ann), "channel.default", "several channels and no -e: no default, as upstream")
}

// TestAlphaBundleBuildUnpackValidate builds a bundle image on a base image
// with upstream's flags, unpacks it and validates it.
func TestAlphaBundleBuildUnpackValidate(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	dir := t.TempDir()
	bundleDir := filepath.Join(dir, "bundle")
	require.NoError(t, os.CopyFS(bundleDir, os.DirFS(validBundle)))

	// A base image in an OCI layout.
	lb := image.NewLayerBuilder()
	require.NoError(t, lb.AddFile("etc/base-marker", []byte("base\n")))
	l, err := lb.Layer()
	require.NoError(t, err)
	base, err := image.NewImage(image.ImageConfig{Platform: image.Platform{OS: "linux", Architecture: "amd64"}}, l)
	require.NoError(t, err)
	c, err := image.NewClient(image.Options{})
	require.NoError(t, err)
	baseRef, err := image.ParseReference("oci:" + filepath.Join(dir, "base") + ":1")
	require.NoError(t, err)
	_, err = c.Write(context.Background(), base, baseRef)
	require.NoError(t, err)

	tag := "oci:" + filepath.Join(dir, "layout") + ":v1"
	r := o.Run("alpha", "bundle", "build", "-d", filepath.Join(bundleDir, "manifests"), "-t", tag,
		"-p", "example-operator", "-c", "stable,fast", "-e", "fast", "-o", "--base-image", "oci:"+filepath.Join(dir, "base")+":1")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	ann, err := os.ReadFile(filepath.Join(bundleDir, "metadata", "annotations.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(ann), "channel.default.v1: fast", "-o overwrote the annotations")

	im, err := c.OpenString(context.Background(), tag)
	require.NoError(t, err)
	assert.Len(t, im.Layers(), 2, "the base layer and the bundle layer")
	assert.Equal(t, "fast", im.Labels()["operators.operatorframework.io.bundle.channel.default.v1"])
	require.NoError(t, im.Close())

	out := filepath.Join(dir, "out")
	r = o.Run("alpha", "bundle", "unpack", tag, "-o", out)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	for _, f := range []string{"manifests/example-operator.clusterserviceversion.yaml", "metadata/annotations.yaml", "etc/base-marker"} {
		assert.FileExists(t, filepath.Join(out, f))
	}
	left, err := filepath.Glob(filepath.Join(out, ".opm-unpack-*"))
	require.NoError(t, err)
	assert.Empty(t, left, "the temporary directory is removed")

	r = o.Run("alpha", "bundle", "validate", "-t", tag, "-o", "operatorhub")
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)

	// An invalid bundle is not unpacked unless -v.
	bad := "oci:" + filepath.Join(dir, "bad") + ":1"
	require.NoError(t, os.WriteFile(filepath.Join(bundleDir, "manifests", "broken.yaml"), []byte("a: [\n"), 0o644))
	r = o.Run("bundle", "build", "-d", bundleDir, "-t", bad, "--permissive")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	out2 := filepath.Join(dir, "out2")
	r = o.Run("alpha", "bundle", "unpack", bad, "-o", out2)
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.NoFileExists(t, filepath.Join(out2, "metadata", "annotations.yaml"))
	r = o.Run("alpha", "bundle", "unpack", bad, "-o", out2, "-v")
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.FileExists(t, filepath.Join(out2, "manifests", "broken.yaml"))
	assert.True(t, strings.HasPrefix(r.ErrOut, "unpacked "), r.ErrOut)
}
