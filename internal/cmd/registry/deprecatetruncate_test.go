package registry_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	indexdt "github.com/opmkit/opm/internal/cmd/index/deprecatetruncate"
	"github.com/opmkit/opm/internal/cmd/registry/deprecatetruncate"
)

func TestDeprecateTruncateFlags(t *testing.T) {
	t.Parallel()
	d, err := cmdtest.Parse(t, deprecatetruncate.NewCmd, "-b", "a,b", "--permissive", "--allow-package-removal")
	require.NoError(t, err)
	assert.Equal(t, &indexdt.Options{Bundles: []string{"a", "b"}, Database: "index.db", Permissive: true, AllowPackageRemoval: true, Output: "text",
		ImageOptions: d.ImageOptions}, d)
	i, err := cmdtest.Parse(t, indexdt.NewCmd, "-b", "a", "-f", "quay.io/x/index:1", "-t", "oci:out", "--allow-package-removal")
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, i.Bundles)
	assert.Equal(t, "quay.io/x/index:1", i.FromIndex)
	assert.True(t, i.AllowPackageRemoval)
	_, err = cmdtest.Parse(t, indexdt.NewCmd, "-f", "quay.io/x/index:1")
	assert.ErrorContains(t, err, `required flag(s) "bundles" not set`)
}

func TestDeprecateTruncateDatabase(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	v1, v2, other := versions(t)
	o.Dir = t.TempDir() // registry deprecatetruncate defaults to ./index.db
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		require.NoError(t, err)
		return a
	}
	r := o.Run("registry", "add", "-d", "index.db", "-b", strings.Join([]string{abs(v1), abs(v2), abs(other)}, ","))
	require.Equal(t, exit.OK, r.Code, r.ErrOut)

	// Unknown bundle path: exit 1, named, nothing changed.
	r = o.Run("registry", "deprecatetruncate", "-b", abs(v1)+",quay.io/no/such:1")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "quay.io/no/such:1")
	// The head of the default channel: refused, as upstream.
	r = o.Run("registry", "deprecatetruncate", "-b", abs(v2))
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "default channel stable of package example-operator")
	r = o.Run("alpha", "list", "bundles", "index.db", "example-operator")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "example-operator.v0.2.0  example-operator.v0.1.0", "unchanged after failures")

	r = o.Run("registry", "deprecatetruncate", "-b", abs(v1))
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "deprecated example-operator.v0.1.0 ("+abs(v1)+") in index.db")

	// index deprecatetruncate --database, JSON: the whole package goes.
	r = o.Run("index", "deprecatetruncate", "--database", "index.db", "-b", abs(v2), "--allow-package-removal", "--output", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	var res struct {
		RemovedPackages struct {
			Packages []string `json:"packages"`
		} `json:"removedPackages"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &res), r.Out)
	assert.Equal(t, []string{"example-operator"}, res.RemovedPackages.Packages)
	r = o.Run("alpha", "list", "packages", "index.db")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.NotContains(t, r.Out, "example-operator")
	assert.Contains(t, r.Out, "other-operator")

	// No bundles: a usage error (64 on upstream's paths).
	r = o.Run("registry", "deprecatetruncate")
	assert.Equal(t, exit.UpstreamUsage, r.Code, r.ErrOut)
}
