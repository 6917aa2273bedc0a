package index_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/indeximage"
)

// TestIndexAddKeepsCatalogBlobs: adding a bundle to an FBC index image whose
// catalog has deprecations, custom-schema blobs and requirement properties
// (internal/fbc/testdata/keep) writes them all back (the change goes
// through sqlite), and opm serve takes the catalog written.
func TestIndexAddKeepsCatalogBlobs(t *testing.T) {
	t.Parallel()
	needCorpus(t)
	crane, err := exec.LookPath("crane")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("crane is required under CI")
		}
		t.Skip("skipping: crane is not installed (go install github.com/google/go-containerregistry/cmd/crane@v0.22.1)")
	}
	o := cmdtest.New(t)
	o.Dir = t.TempDir()
	reg := startRegistry(t)
	c := testClient(t)
	base := fakeBinaryImage(t, image.Platform{OS: "linux", Architecture: "amd64"})
	pelorus := pushBundles(t, c, reg.Addr, "pelorus-operator", "0.0.1")

	keep := filepath.Join("..", "..", "fbc", "testdata", "keep")
	lb := image.NewLayerBuilder()
	for _, f := range []string{"op/catalog.json", "extras/catalog.yaml"} {
		data, err := os.ReadFile(filepath.Join(keep, filepath.FromSlash(f)))
		require.NoError(t, err)
		require.NoError(t, lb.AddFile("configs/"+f, data))
	}
	layer, err := lb.Layer()
	require.NoError(t, err)
	baseLayers, err := base.Layers()
	require.NoError(t, err)
	src, err := image.NewImage(image.ImageConfig{
		Labels:     map[string]string{indeximage.ConfigsLabel: "/configs"},
		Entrypoint: []string{"/bin/opm"}, Cmd: []string{"serve", "/configs"},
	}, append(baseLayers, layer)...)
	require.NoError(t, err)
	pushImage(t, c, src, reg.ref("keep:1"))

	out := reg.ref("keep:2")
	r := o.Run("index", "add", "--use-http", "-b", pelorus[0], "-f", reg.ref("keep:1"), "-t", out)
	require.Equal(t, 0, r.Code, r.ErrOut)
	files := flatFiles(t, crane, out)
	op := string(files["configs/op/catalog.json"])
	for _, want := range []string{
		`"schema": "olm.deprecations"`, "op is end of life; use op2", "alpha is no longer updated", "op.v1.0.0 has a CVE; upgrade",
		`"schema": "example.com.notes"`, `"1.1: a <b> & c"`,
		`"type": "olm.constraint"`, `"versionRange": "<=1.2.3 || >=2.0.0 <3.0.0"`, `"description": "An operator & <friends>"`,
	} {
		assert.Contains(t, op, want)
	}
	assert.Contains(t, string(files["configs/catalog.json"]), `"alice <alice@example.com>"`, "blobs of no package")
	assert.Contains(t, string(files["configs/pelorus-operator/catalog.json"]), "pelorus-operator.v0.0.1")
	// The catalog written back converts for opm serve as it is.
	dir := t.TempDir()
	for name, data := range files {
		if rel, ok := strings.CutPrefix(name, "configs/"); ok {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, data, 0o644))
		}
	}
	r = o.Run("serve", dir, "--cache-dir", filepath.Join(t.TempDir(), "cache"), "--cache-only")
	require.Equal(t, 0, r.Code, r.ErrOut)
}
