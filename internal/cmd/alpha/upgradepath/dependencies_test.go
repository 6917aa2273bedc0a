package upgradepath_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/resolve/pathcheck"
	"github.com/opmkit/opm/internal/shareddata"
)

// app: 1.0.0 <- 1.1.0 (needs package db, in catalog deps) <- 1.2.0 (also
// needs the API Cache, which no catalog provides).
const (
	appCat = "../resolve/testdata/catalogs/main"
	dbCat  = "../resolve/testdata/catalogs/deps"
)

func TestUpgradePathDependencies(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	r := o.Run("alpha", "upgrade-path", appCat, "--from", "1.0.0", "--catalog", dbCat)
	require.Equal(t, exit.OK, r.Code, "without --to the path is the answer: %s", r.ErrOut)
	assert.Equal(t, `app, OLM v0, channel stable:
   app.v1.0.0 (1.0.0)
 1. app.v1.1.0 (1.1.0)  replaces app.v1.0.0
 2. app.v1.2.0 (1.2.0)  replaces app.v1.1.0
app.v1.2.0 is the head of channel stable: OLM installs nothing more.
OLM v0's resolver, dependencies included (catalogs main, deps):
 1. app.v1.0.0 -> app.v1.1.0: taken, bringing in db.v1.0.0 (catalog deps)
 2. app.v1.1.0 -> app.v1.2.0: refused: OLM installs nothing from app.v1.1.0
      app.v1.1.0 stays: every bundle that upgrades it fails
      app.v1.2.0 requires an operator providing Cache (cache.example.com/v1), which no catalog given provides
OLM refuses 1 step of the path.
`, r.Out)

	// --to past a refused step is not reached: status 1.
	r = o.Run("alpha", "upgrade-path", appCat, "--from", "1.0.0", "--to", "1.2.0", "--catalog", dbCat, "-o", "json")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	var doc struct {
		Steps    []json.RawMessage `json:"steps"`
		Resolver pathcheck.Check   `json:"resolver"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &doc))
	assert.Len(t, doc.Steps, 2)
	require.Len(t, doc.Resolver.Steps, 2)
	assert.False(t, doc.Resolver.Steps[0].Refused)
	assert.True(t, doc.Resolver.Steps[1].Refused)
	assert.Equal(t, 1, doc.Resolver.Refused)
	r = o.Run("alpha", "upgrade-path", appCat, "--from", "1.0.0", "--to", "1.1.0", "--catalog", dbCat)
	assert.Equal(t, exit.OK, r.Code, "the step to --to is taken: %s", r.ErrOut)

	// The bundles declare dependencies: the resolver is asked without
	// --catalog, and --dependencies=false turns it off.
	r = o.Run("alpha", "upgrade-path", appCat, "--from", "1.0.0", "--to", "1.1.0")
	assert.Equal(t, exit.Failed, r.Code)
	assert.Contains(t, r.Out, "app.v1.1.0 requires db >=1.0.0, which no catalog given has")
	r = o.Run("alpha", "upgrade-path", appCat, "--from", "1.0.0", "--to", "1.1.0", "--dependencies=false")
	assert.Equal(t, exit.OK, r.Code)
	assert.NotContains(t, r.Out, "resolver")

	// A package without dependencies is not asked about unless told.
	r = o.Run("alpha", "upgrade-path", demo, "--package", "demo", "--from", "1.0.0", "-o", "json")
	require.Equal(t, exit.OK, r.Code)
	assert.NotContains(t, r.Out, `"resolver"`)
	r = o.Run("alpha", "upgrade-path", demo, "--package", "demo", "--from", "1.0.0", "--dependencies")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "OLM v0's resolver, dependencies included (catalog upgrades):\n 1. demo.v1.0.0 -> demo.v1.2.0: taken\n 2. demo.v1.2.0 -> demo.v2.0.0: taken\n")

	for _, args := range [][]string{
		{"--from", "1.0.0", "--olmv1", "--catalog", dbCat},
		{"--from-range", "<2.0.0", "--dependencies"},
	} {
		r = o.Run(append([]string{"alpha", "upgrade-path", appCat}, args...)...)
		assert.Equal(t, exit.UpstreamUsage, r.Code, args)
		assert.Contains(t, r.ErrOut, "--catalog and --dependencies ask OLM v0's resolver about the steps of a path", args)
	}
	r = o.Run("alpha", "upgrade-path", appCat, "--from", "1.0.0", "--catalog", "testdata/nope")
	assert.Equal(t, exit.Failed, r.Code)
	assert.Contains(t, r.ErrOut, "--catalog testdata/nope")
}

// node-healthcheck-operator's bundles from 0.7.0 on require an API of
// self-node-remediation, which its catalog lacks: OLM refuses the steps
// into them; a start that no bundle has is not asked about.
func TestUpgradePathDependenciesReference(t *testing.T) {
	t.Parallel()
	dir := shareddata.Require(t, "reference", "index")
	o := cmdtest.New(t)
	r := o.Run("alpha", "upgrade-path", filepath.Join(dir, "node-healthcheck-operator.semver.db"), "--channel", "stable", "--from", "0.1.0", "--to", "0.8.0")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, " 1. version 0.1.0 -> node-healthcheck-operator.v0.6.1: not asked: version 0.1.0 is not a bundle of catalog node-healthcheck-operator.semver")
	assert.Contains(t, r.Out, " 2. node-healthcheck-operator.v0.6.1 -> node-healthcheck-operator.v0.8.0: refused: OLM installs nothing from node-healthcheck-operator.v0.6.1\n")
	assert.Contains(t, r.Out, "requires an operator providing SelfNodeRemediation (self-node-remediation.medik8s.io/v1alpha1), which no catalog given provides")
}
