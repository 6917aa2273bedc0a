package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copyTree copies the directory src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
}

func TestBundleDirsOf(t *testing.T) {
	valid := mustAbs(t, validBundle)
	t.Chdir(t.TempDir())
	copyTree(t, valid, "ops/a/0.1.0")
	copyTree(t, valid, "ops/a/0.2.0")
	require.NoError(t, os.MkdirAll("config/manifests/bases", 0o755))
	require.NoError(t, os.MkdirAll("ops/a/0.2.0/manifests/extra", 0o755))

	got := bundleDirsOf([]string{
		"ops/a/0.2.0/metadata/annotations.yaml",
		"README.md",
		"ops/a/0.1.0/manifests/example-operator.clusterserviceversion.yaml",
		"ops/a/0.2.0/manifests/extra/deleted.yaml", // need not exist
		"./ops/a/0.1.0/manifests/widgets.example.com.crd.yaml",
		"config/manifests/bases/x.clusterserviceversion.yaml", // manifests/ but no metadata/
		"ops/a/0.2.0",
	})
	assert.Equal(t, []string{"ops/a/0.2.0", "ops/a/0.1.0"}, got)
	assert.Empty(t, bundleDirsOf([]string{"nowhere/file.yaml", "x"}))

	// A repository whose root is a bundle.
	root := filepath.Join(t.TempDir(), "repo")
	copyTree(t, valid, root)
	t.Chdir(root)
	assert.Equal(t, []string{"."}, bundleDirsOf([]string{"manifests/example-operator.clusterserviceversion.yaml", "bundle.Dockerfile"}))
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	require.NoError(t, err)
	return abs
}

func TestBundleValidateFromFiles(t *testing.T) {
	isolate(t)
	valid, bad := mustAbs(t, validBundle), mustAbs(t, syntaxBundle)
	t.Chdir(t.TempDir())
	copyTree(t, valid, "good")
	copyTree(t, bad, "bad")

	r := opm(t, "bundle", "validate", "--from-files", "good/manifests/example-operator.clusterserviceversion.yaml", "notes.txt")
	assert.Equal(t, exitOK, r.code, r.errOut)
	assert.Contains(t, r.errOut, "good")

	r = opm(t, "bundle", "validate", "--from-files", "-o", "json",
		"good/metadata/annotations.yaml", "bad/manifests/widgets.example.com.crd.yaml")
	assert.Equal(t, exitFailed, r.code, r.errOut)
	var rep struct {
		Passed  bool
		Bundles []struct{ Path string }
	}
	require.NoError(t, json.Unmarshal([]byte(r.out), &rep), r.out)
	require.Len(t, rep.Bundles, 2)
	assert.Equal(t, "good", rep.Bundles[0].Path)
	assert.Equal(t, "bad", rep.Bundles[1].Path)

	r = opm(t, "bundle", "validate", "--from-files", "README.md", "docs/x.md")
	assert.Equal(t, exitOK, r.code, r.errOut)
	assert.Contains(t, r.errOut, "the 2 files given are in no bundle directory")

	r = opm(t, "bundle", "validate", "--from-files", "-o", "json", "README.md")
	assert.Equal(t, exitOK, r.code, r.errOut)
	assert.JSONEq(t, `{"passed": true, "bundles": []}`, r.out)

	// The environment does not turn --from-files on.
	t.Setenv("OPM_FROM_FILES", "true")
	r = opm(t, "bundle", "validate", "good/manifests/example-operator.clusterserviceversion.yaml")
	assert.Equal(t, exitUsage, r.code)
}
