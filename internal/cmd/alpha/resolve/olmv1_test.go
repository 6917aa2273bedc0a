package resolve_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/shareddata"
)

// demo: see internal/fbc/graph/upgrade_test.go for its graph.
const demoCat = "../../../fbc/graph/testdata/upgrades"

func TestResolveOLMv1(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	r := o.Run("alpha", "resolve", "--olmv1", "--cluster-extension", "testdata/extensions.yaml", "--catalog", demoCat, "--catalog", mainCat)
	// app's bundle picked declares a dependency: operator-controller
	// refuses it, and the status says so.
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Empty(t, r.ErrOut)
	demo, app, ok := strings.Cut(r.Out, "\n\n")
	require.True(t, ok, r.Out)
	assert.True(t, strings.HasPrefix(demo, "ClusterExtension demo, package demo, OLM v1:\n  upgrade demo.v1.0.0 -> demo.v1.2.0 (version 1.2.0, catalog upgrades)\n"), demo)
	assert.Contains(t, demo, "  passed over (6):\n")
	assert.Contains(t, demo, `    demo.v2.0.0 (2.0.0, catalog upgrades): version 2.0.0 is outside the range "<2.0.0"`)
	assert.True(t, strings.HasPrefix(app, "ClusterExtension app, package app, OLM v1:\n  nothing resolved: "), app)
	assert.Contains(t, app, "app.v1.2.0 (1.2.0, catalog main): picked, then refused: it declares a dependency (olm.package.required)")

	r = o.Run("alpha", "resolve", "--olmv1", "--cluster-extension", "testdata/extensions.yaml", "--catalog", demoCat, "-o", "json")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	var doc struct {
		Extensions []struct {
			Name       string  `json:"name"`
			Installed  string  `json:"installed"`
			Package    string  `json:"package"`
			Bundle     *string `json:"bundle"`
			Catalog    string  `json:"catalog"`
			Error      string  `json:"error"`
			PassedOver []struct {
				Bundle, Rule string
			} `json:"passedOver"`
		} `json:"extensions"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &doc))
	require.Len(t, doc.Extensions, 2)
	d := doc.Extensions[0]
	assert.Equal(t, "demo", d.Name)
	assert.Equal(t, "demo.v1.0.0", d.Installed)
	assert.Equal(t, "demo.v1.2.0", *d.Bundle)
	assert.Equal(t, "upgrades", d.Catalog)
	assert.Len(t, d.PassedOver, 6)
	assert.Nil(t, doc.Extensions[1].Bundle, "no catalog given has app")
	assert.NotEmpty(t, doc.Extensions[1].Error)

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("apiVersion: olm.operatorframework.io/v1\nkind: ClusterExtension\nmetadata: {name: x}\nspec:\n  source:\n    sourceType: Catalog\n    catalog: {}\n"), 0o644))
	r = o.Run("alpha", "resolve", "--olmv1", "--cluster-extension", bad, "--catalog", demoCat)
	assert.Equal(t, exit.UpstreamUsage, r.Code)
	assert.Contains(t, r.ErrOut, "--cluster-extension "+bad+": ")
	assert.Contains(t, r.ErrOut, "packageName")
	r = o.Run("alpha", "resolve", "--olmv1", "--cluster-extension", "testdata/nope.yaml", "--catalog", demoCat)
	assert.Equal(t, exit.UpstreamUsage, r.Code)
	assert.Contains(t, r.ErrOut, "--cluster-extension: open testdata/nope.yaml")
}

// Two ClusterCatalogs with etcd, by priority: the higher one's bundle.
func TestResolveOLMv1ReferenceCatalogs(t *testing.T) {
	t.Parallel()
	dir := shareddata.Require(t, "reference", "index")
	ext := filepath.Join(t.TempDir(), "etcd.yaml")
	require.NoError(t, os.WriteFile(ext, []byte("apiVersion: olm.operatorframework.io/v1\nkind: ClusterExtension\nmetadata: {name: etcd}\nspec:\n  namespace: etcd\n  serviceAccount: {name: etcd}\n  source:\n    sourceType: Catalog\n    catalog: {packageName: etcd, channels: [singlenamespace-alpha]}\n"), 0o644))
	o := cmdtest.New(t)
	r := o.Run("alpha", "resolve", "--olmv1", "--cluster-extension", ext, "--catalog", filepath.Join(dir, "etcd.replaces.db"), "--catalog", filepath.Join(dir, "etcd.semver.db")+"=5")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.True(t, strings.HasPrefix(r.Out, "ClusterExtension etcd, package etcd, OLM v1:\n  install etcdoperator.v0.9.4 (version 0.9.4, catalog etcd.semver)\n"), r.Out)
	assert.Contains(t, r.Out, "catalog etcd.replaces): ")
	r = o.Run("alpha", "resolve", "--olmv1", "--cluster-extension", ext, "--catalog", filepath.Join(dir, "etcd.replaces.db"), "--catalog", filepath.Join(dir, "etcd.semver.db"))
	assert.Equal(t, exit.Failed, r.Code, "two catalogs of one priority offer it: operator-controller picks neither")
	assert.Contains(t, r.Out, "nothing resolved: ")
}
