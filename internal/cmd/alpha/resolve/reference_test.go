package resolve_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/shareddata"
)

type jsonAnswer struct {
	Operators []struct {
		Namespace string   `json:"namespace"`
		Package   string   `json:"package"`
		Bundle    *string  `json:"bundle"`
		Channel   string   `json:"channel"`
		Catalog   string   `json:"catalog"`
		Reasons   []string `json:"reasons"`
	} `json:"operators"`
}

// On upstream's reference databases: an upgrade agrees with upgrade-path's
// first step, priorities pick between two catalogs with the package, and
// a package whose every bundle requires packages no catalog has resolves
// nothing.
func TestResolveReferenceCatalogs(t *testing.T) {
	t.Parallel()
	dir := shareddata.Require(t, "reference", "index")
	o := cmdtest.New(t)
	var a jsonAnswer
	r := o.Run("alpha", "resolve", "--catalog", filepath.Join(dir, "etcd.replaces.db"), "--subscription", "etcd/clusterwide-alpha",
		"--installed", "etcd=etcdoperator.v0.9.0", "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	require.NoError(t, json.Unmarshal([]byte(r.Out), &a))
	require.Len(t, a.Operators, 1)
	assert.Equal(t, "etcdoperator.v0.9.2-clusterwide", *a.Operators[0].Bundle)
	assert.Equal(t, "etcd.replaces", a.Operators[0].Catalog, "named for the database file")

	r = o.Run("alpha", "resolve", "--catalog", filepath.Join(dir, "etcd.replaces.db"), "--catalog", filepath.Join(dir, "etcd.semver.db")+"=5",
		"--subscription", "etcd", "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	a = jsonAnswer{}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &a))
	require.Len(t, a.Operators, 1)
	assert.Equal(t, "etcd.semver", a.Operators[0].Catalog, "the catalog of higher priority")

	r = o.Run("alpha", "resolve", "--catalog", filepath.Join(dir, "pelorus-operator.semver.db"), "--subscription", "pelorus-operator")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "namespace default: OLM resolves nothing")
	assert.Contains(t, r.Out, "pelorus-operator.v0.0.9 requires grafana-operator")
	assert.Contains(t, r.Out, "which no catalog given has")
}
