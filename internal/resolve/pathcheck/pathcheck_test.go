package pathcheck

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/fbcsource"
	"github.com/opmkit/opm/internal/resolve"
)

// app: 1.0.0 <- 1.1.0 (needs package db) <- 1.2.0 (needs db and the API
// Cache, which no catalog provides); db is in the catalog deps.
const fixtures = "../../cmd/alpha/resolve/testdata/catalogs/"

func load(t *testing.T, name string) *fbc.Catalog {
	t.Helper()
	c, err := fbcsource.Dir(fixtures+name, "", fbc.LoadOptions{}, nil)
	require.NoError(t, err)
	return c
}

func TestPath(t *testing.T) {
	t.Parallel()
	main, deps := load(t, "main"), load(t, "deps")
	assert.True(t, DeclaresDependencies(main, "app"))
	assert.False(t, DeclaresDependencies(deps, "db"))
	p, err := graph.NewPackage(main, "app")
	require.NoError(t, err)
	path, err := p.Path(graph.PathQuery{From: "1.0.0"})
	require.NoError(t, err)
	require.Len(t, path.Steps, 2)

	c, err := Path(context.Background(), []resolve.Catalog{{Name: "main", Catalog: main}, {Name: "deps", Catalog: deps}}, "app", "", path)
	require.NoError(t, err)
	assert.Equal(t, []string{"main", "deps"}, c.Catalogs)
	require.Len(t, c.Steps, 2)
	s := c.Steps[0]
	assert.False(t, s.Refused)
	assert.Equal(t, "app.v1.1.0", *s.Installs)
	assert.Equal(t, []Dependency{{Package: "db", Bundle: "db.v1.0.0", Catalog: "deps"}}, s.Dependencies)
	s = c.Steps[1]
	assert.True(t, s.Refused)
	assert.Nil(t, s.Installs)
	assert.Empty(t, s.Dependencies, "db came with the first step: it is installed")
	assert.Contains(t, s.Reasons, "app.v1.2.0 requires an operator providing Cache (cache.example.com/v1), which no catalog given provides")
	assert.Equal(t, 1, c.Refused)
	assert.Contains(t, c.Text(), " 1. app.v1.0.0 -> app.v1.1.0: taken, bringing in db.v1.0.0 (catalog deps)\n 2. app.v1.1.0 -> app.v1.2.0: refused: OLM installs nothing from app.v1.1.0\n")
	assert.Contains(t, c.Text(), "OLM refuses 1 step of the path.\n")

	// Without the catalog of db, both steps are refused.
	c, err = Path(context.Background(), []resolve.Catalog{{Name: "main", Catalog: main}}, "app", "", path)
	require.NoError(t, err)
	assert.Equal(t, 2, c.Refused)
	assert.Contains(t, c.Steps[0].Reasons, "app.v1.1.0 requires db >=1.0.0, which no catalog given has")

	_, err = Path(context.Background(), nil, "app", "", path)
	assert.Error(t, err)
}
