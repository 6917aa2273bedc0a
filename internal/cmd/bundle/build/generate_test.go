package build_test

// bundle generate's tests live with bundle build's: each test package
// that runs the command tree links all of opm (about 2 s of CPU), and the
// two commands write the same metadata.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBundleGenerate(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(dir, "b"), os.DirFS(validBundle)))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "b/metadata")))
	// Paths relative to the working directory: runs are child processes.
	o.Dir = dir

	r := o.Run("bundle", "generate", "-d", "b/manifests", "-p", "example-operator", "-c", "stable,fast", "-e", "stable")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "wrote b/metadata/annotations.yaml")
	df, err := os.ReadFile(filepath.Join(dir, "bundle.Dockerfile"))
	require.NoError(t, err)
	assert.Contains(t, string(df), "COPY b/manifests /manifests/")

	// The generated bundle validates clean.
	r = o.Run("bundle", "validate", "b")
	assert.Equal(t, 0, r.Code, r.ErrOut)

	// A different channel list is refused without --overwrite, with the diff.
	r = o.Run("bundle", "generate", "-d", "b/manifests", "-c", "alpha")
	assert.Equal(t, 1, r.Code)
	assert.Contains(t, r.ErrOut, "- operators.operatorframework.io.bundle.channels.v1: stable,fast")
	assert.Contains(t, r.ErrOut, "--overwrite")

	r = o.Run("bundle", "generate", "-d", "b/manifests", "-c", "alpha", "--overwrite", "-o", "json")
	require.Equal(t, 0, r.Code, r.ErrOut)
	var res struct{ Annotations map[string]string }
	require.NoError(t, json.Unmarshal([]byte(r.Out), &res))
	assert.Equal(t, "alpha", res.Annotations["operators.operatorframework.io.bundle.channel.default.v1"])
	assert.Equal(t, "example-operator", res.Annotations["operators.operatorframework.io.bundle.package.v1"], "package kept from the existing file")

	r = o.Run("bundle", "generate")
	assert.Equal(t, 2, r.Code)
	assert.Contains(t, r.ErrOut, "--directory is required")
}
