package build_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
)

// linkedOutBundle is a copy of the valid bundle whose manifests/ holds a
// link to a Secret outside the bundle directory.
func linkedOutBundle(t *testing.T) (dir, secret string) {
	t.Helper()
	tmp := t.TempDir()
	dir = filepath.Join(tmp, "bundle")
	out, err := exec.Command("cp", "-r", "../../../../testdata/bundles/valid", dir).CombinedOutput()
	require.NoError(t, err, string(out))
	secret = filepath.Join(tmp, "host-secret.yaml")
	require.NoError(t, os.WriteFile(secret, []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: host-only\nstringData:\n  token: do-not-ship\n"), 0o600))
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "manifests", "secret.yaml")))
	return dir, secret
}

func TestSymlinkOutOfBundleRefused(t *testing.T) {
	t.Parallel()
	dir, secret := linkedOutBundle(t)
	o := cmdtest.New(t)

	r := o.Run("bundle", "validate", "-o", "json", dir)
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "manifests/secret.yaml is a symbolic link to "+secret)

	layout := filepath.Join(t.TempDir(), "layout")
	r = o.Run("bundle", "build", "-d", dir, "-t", "oci:"+layout+":v1")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "manifests/secret.yaml is a symbolic link to "+secret)
	_, err := os.Stat(layout)
	assert.True(t, os.IsNotExist(err), "nothing is written when the build is refused")

	// --permissive builds despite the finding, but still never reads the
	// file behind the link into the image.
	r = o.Run("bundle", "build", "--permissive", "-d", dir, "-t", "oci:"+layout+":v1")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "pass --follow-symlinks")
	assertNotInLayout(t, layout, "do-not-ship")
}

func TestSymlinkOutOfBundleFollowed(t *testing.T) {
	t.Parallel()
	dir, _ := linkedOutBundle(t)
	o := cmdtest.New(t)

	r := o.Run("bundle", "validate", "--follow-symlinks", "-o", "json", dir)
	assert.NotContains(t, r.Out, "symbolic link", r.ErrOut)

	layout := filepath.Join(t.TempDir(), "layout")
	r = o.Run("bundle", "build", "--follow-symlinks", "-d", dir, "-t", "oci:"+layout+":v1")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
}

// assertNotInLayout fails when any blob of an OCI layout (layers are gzip:
// check through zcat) holds s.
func assertNotInLayout(t *testing.T, layout, s string) {
	t.Helper()
	blobs, _ := filepath.Glob(filepath.Join(layout, "blobs", "sha256", "*"))
	for _, b := range blobs {
		out, _ := exec.Command("sh", "-c", "zcat -f "+b+" 2>/dev/null || cat "+b).Output()
		assert.False(t, strings.Contains(string(out), s), "blob %s holds %q", b, s)
	}
}
