package validate

import (
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
	valid := mustAbs(t, "../../../../testdata/bundles/valid")
	t.Chdir(t.TempDir())
	copyTree(t, valid, "ops/a/0.1.0")
	copyTree(t, valid, "ops/a/0.2.0")
	require.NoError(t, os.MkdirAll("config/manifests/bases", 0o755))
	require.NoError(t, os.MkdirAll("ops/a/0.2.0/manifests/extra", 0o755))

	got := BundleDirsOf([]string{
		"ops/a/0.2.0/metadata/annotations.yaml",
		"README.md",
		"ops/a/0.1.0/manifests/example-operator.clusterserviceversion.yaml",
		"ops/a/0.2.0/manifests/extra/deleted.yaml", // need not exist
		"./ops/a/0.1.0/manifests/widgets.example.com.crd.yaml",
		"config/manifests/bases/x.clusterserviceversion.yaml", // manifests/ but no metadata/
		"ops/a/0.2.0",
	})
	assert.Equal(t, []string{"ops/a/0.2.0", "ops/a/0.1.0"}, got)
	assert.Empty(t, BundleDirsOf([]string{"nowhere/file.yaml", "x"}))

	// A repository whose root is a bundle.
	root := filepath.Join(t.TempDir(), "repo")
	copyTree(t, valid, root)
	t.Chdir(root)
	assert.Equal(t, []string{"."}, BundleDirsOf([]string{"manifests/example-operator.clusterserviceversion.yaml", "bundle.Dockerfile"}))
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	require.NoError(t, err)
	return abs
}
