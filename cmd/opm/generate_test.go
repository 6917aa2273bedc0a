package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBundleGenerate(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(dir, "b"), os.DirFS(validBundle)))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "b/metadata")))
	wd, _ := os.Getwd()
	require.NoError(t, os.Chdir(dir))
	t.Cleanup(func() { _ = os.Chdir(wd) })

	r := opm(t, "bundle", "generate", "-d", "b/manifests", "-p", "example-operator", "-c", "stable,fast", "-e", "stable")
	require.Equal(t, 0, r.code, r.errOut)
	assert.Contains(t, r.errOut, "wrote b/metadata/annotations.yaml")
	df, err := os.ReadFile("bundle.Dockerfile")
	require.NoError(t, err)
	assert.Contains(t, string(df), "COPY b/manifests /manifests/")

	// The generated bundle validates clean.
	r = opm(t, "bundle", "validate", "b")
	assert.Equal(t, 0, r.code, r.errOut)

	// A different channel list is refused without --overwrite, with the diff.
	r = opm(t, "bundle", "generate", "-d", "b/manifests", "-c", "alpha")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.errOut, "- operators.operatorframework.io.bundle.channels.v1: stable,fast")
	assert.Contains(t, r.errOut, "--overwrite")

	r = opm(t, "bundle", "generate", "-d", "b/manifests", "-c", "alpha", "--overwrite", "-o", "json")
	require.Equal(t, 0, r.code, r.errOut)
	var res struct{ Annotations map[string]string }
	require.NoError(t, json.Unmarshal([]byte(r.out), &res))
	assert.Equal(t, "alpha", res.Annotations["operators.operatorframework.io.bundle.channel.default.v1"])
	assert.Equal(t, "example-operator", res.Annotations["operators.operatorframework.io.bundle.package.v1"], "package kept from the existing file")

	r = opm(t, "bundle", "generate")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.errOut, "--directory is required")
}
