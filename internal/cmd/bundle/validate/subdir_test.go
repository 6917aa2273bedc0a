package validate_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
)

// TestBundleValidateManifestsDir: given a bundle's manifests/ (or
// metadata/) directory, the finding says to give the bundle directory, not
// to put the CSV in manifests/, where it already is.
func TestBundleValidateManifestsDir(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	for _, sub := range []string{"manifests", "metadata"} {
		r := o.Run("bundle", "validate", "-o", "json", filepath.Join(validBundle, sub))
		require.Equal(t, exit.Failed, r.Code, r.ErrOut)
		fs := cmdtest.Findings(cmdtest.DecodeReport(t, r.Out), 0)
		require.Len(t, fs, 1)
		assert.Equal(t, "bundle-no-csv", fs[0]["rule"])
		assert.Contains(t, fs[0]["message"], "is the "+sub+"/ directory of the bundle "+filepath.Clean(validBundle)+", not a bundle directory")
		assert.Equal(t, "give the bundle directory "+filepath.Clean(validBundle)+" instead", fs[0]["hint"])
	}
	// An empty directory named manifests is no bundle's: the usual advice.
	empty := filepath.Join(t.TempDir(), "manifests")
	require.NoError(t, os.Mkdir(empty, 0o755))
	r := o.Run("bundle", "validate", empty)
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.NotContains(t, r.ErrOut, "give the bundle directory")
}
