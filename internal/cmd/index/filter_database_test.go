package index_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/shareddata"
)

// TestIndexFilterDatabase: index filter --database changes the file in
// place to what alpha filter keeps of the same catalog; the package the
// configuration does not name is removed and counted.
func TestIndexFilterDatabase(t *testing.T) {
	t.Parallel()
	ref := shareddata.Require(t, "reference", "index")
	o := cmdtest.New(t)
	dir := t.TempDir()
	for _, p := range []string{"etcd", "apicast-community-operator"} {
		data, err := os.ReadFile(filepath.Join(ref, p+".replaces.fbc.json"))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, p), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p, "catalog.json"), data, 0o644))
	}
	db := filepath.Join(t.TempDir(), "index.db")
	r := o.Run("migrate", "--to", "sqlite", dir, db)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	cfg := filepath.Join(t.TempDir(), "filter.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`apiVersion: olm.operatorframework.io/v1alpha1
kind: FilterConfiguration
packages:
- name: etcd
  channels:
  - name: singlenamespace-alpha
    versionRange: ">=0.9.0 <0.9.4"
`), 0o644))
	want := o.Run("alpha", "filter", dir, "--config", cfg, "--output-dir", filepath.Join(t.TempDir(), "out"))
	require.Equal(t, exit.OK, want.Code, want.ErrOut)
	assert.Contains(t, want.ErrOut, "kept 1 package, 1 channel, 2 bundles (15 removed, 0 kept outside a range)")

	r = o.Run("index", "filter", "--config", cfg, "--database", db, "--explain")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "removed 15 bundles, kept 0 outside a range")
	// Issue 36: --explain, as alpha filter's.
	assert.Contains(t, r.ErrOut, "removed etcd/etcdoperator.v0.9.4: outside >=0.9.0 <0.9.4 in channel singlenamespace-alpha\n")
	r = o.Run("alpha", "list", "bundles", db, "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	var got []string
	for _, name := range []string{"etcdoperator.v0.9.0", "etcdoperator.v0.9.2", "etcdoperator.v0.9.4", "apicast"} {
		if strings.Contains(r.Out, name) {
			got = append(got, name)
		}
	}
	sort.Strings(got)
	assert.Equal(t, []string{"etcdoperator.v0.9.0", "etcdoperator.v0.9.2"}, got, r.Out)
}
