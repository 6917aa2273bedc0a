package filter_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/shareddata"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// TestFilterCommand (issue 29, item 1): a FilterConfiguration on a real
// sqlite database, to stdout and to a directory; --keep-packages;
// --explain; a filtered-out default channel refused with nothing written.
func TestFilterCommand(t *testing.T) {
	t.Parallel()
	db := shareddata.Require(t, "reference", "index", "etcd.replaces.db")
	o := cmdtest.New(t)
	cfg := filepath.Join(t.TempDir(), "filter.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`apiVersion: olm.operatorframework.io/v1alpha1
kind: FilterConfiguration
packages:
- name: etcd
  channels:
  - name: singlenamespace-alpha
    versionRange: ">=0.9.0 <0.9.4"
`), 0o644))
	r := o.Run("alpha", "filter", db, "--config", cfg, "--explain")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	c := &fbc.Catalog{}
	require.NoError(t, c.LoadFile("out.json", []byte(r.Out)))
	require.Len(t, c.Bundles, 2)
	require.Len(t, c.Channels, 1)
	assert.Equal(t, "singlenamespace-alpha", c.Channels[0].Name)
	assert.Contains(t, r.ErrOut, "removed etcd/etcdoperator.v0.9.4: outside >=0.9.0 <0.9.4 in channel singlenamespace-alpha\n")
	assert.Contains(t, r.ErrOut, "kept 1 packages, 1 channels, 2 bundles (4 removed, 0 kept outside a range)\n")

	out := filepath.Join(t.TempDir(), "filtered")
	r = o.Run("alpha", "filter", db, "--keep-packages", "etcd", "--output-dir", out, "-o", "yaml")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Empty(t, r.Out)
	v := o.Run("validate", out)
	assert.Equal(t, exit.OK, v.Code, v.ErrOut)

	bad := strings.Replace(strings.Replace(mustRead(t, cfg), "singlenamespace-alpha", "alpha", 1), `    versionRange: ">=0.9.0 <0.9.4"`+"\n", "", 1)
	require.NoError(t, os.WriteFile(cfg, []byte(bad), 0o644))
	r = o.Run("alpha", "filter", db, "--config", cfg)
	assert.Equal(t, exit.Failed, r.Code)
	assert.Contains(t, r.ErrOut, "is filtered out: keep it, or set defaultChannel to one of the channels kept (alpha)")
	assert.Contains(t, r.ErrOut, "nothing was written")
	assert.Empty(t, r.Out)

	r = o.Run("alpha", "filter", db)
	assert.Equal(t, exit.UpstreamUsage, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "give --config FILE or --keep-packages")
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}
