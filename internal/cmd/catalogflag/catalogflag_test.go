package catalogflag

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/iostreams"
)

func TestParse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	odd := filepath.Join(dir, "cat=5")
	require.NoError(t, os.Mkdir(odd, 0o755))
	for in, want := range map[string]Spec{
		"catalog/":                      {Source: "catalog/"},
		"catalog/=10":                   {Source: "catalog/", Priority: 10},
		"quay.io/me/index:v4.16=-5":     {Source: "quay.io/me/index:v4.16", Priority: -5},
		"localhost:5000/idx@sha256:abc": {Source: "localhost:5000/idx@sha256:abc"},
		odd:                             {Source: odd},
		"name=redhat-operators,source=quay.io/x/y:4,priority=-100,namespace=openshift-marketplace": {
			Name: "redhat-operators", Namespace: "openshift-marketplace", Source: "quay.io/x/y:4", Priority: -100},
		"source=a.db": {Source: "a.db"},
	} {
		got, err := Parse(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for in, want := range map[string]string{
		"":                               "empty",
		"cat/=high":                      "not a whole number",
		"name=x":                         "no source=",
		"name=X_Y,source=a":              "not a valid CatalogSource name",
		"source=a,color=red":             `unknown key "color"`,
		"source=a,source=b":              "source given twice",
		"source=a,priority=1.5":          `priority "1.5" is not a whole number`,
		"name=a,source=b,foo":            `"foo" is not KEY=VALUE`,
		"quay.io/x=99999999999999999999": "priority",
	} {
		_, err := Parse(in)
		assert.ErrorContains(t, err, want, in)
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "Etcd_Index.db")
	require.NoError(t, os.WriteFile(db, nil, 0o644))
	assert.Equal(t, "etcd-index", NameOf(db))
	assert.Equal(t, filepath.Base(dir), NameOf(dir+"/"))
	assert.Equal(t, "redhat-operator-index", NameOf("registry.redhat.io/redhat/redhat-operator-index:v4.16"))
	assert.Equal(t, "idx", NameOf("localhost:5000/idx@sha256:0123"))
	assert.Equal(t, "catalog", NameOf("___"))

	specs, err := Named([]Spec{{Source: "a/index:1"}, {Source: "b/index:2"}, {Source: "c", Name: "index-2"}, {Source: "d/index"}})
	require.NoError(t, err)
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"index", "index-3", "index-2", "index-4"}, names, "given names are kept; derived ones step round them")
	_, err = Named([]Spec{{Source: "a", Name: "x"}, {Source: "b", Name: "x"}})
	assert.ErrorContains(t, err, "two catalogs are named x")
	_, err = Named([]Spec{{Source: "a", Name: "x"}, {Source: "b", Name: "x", Namespace: "ns"}})
	assert.NoError(t, err, "one name in two namespaces")
}

func TestOpen(t *testing.T) {
	t.Parallel()
	s, _, _, _ := iostreams.Test()
	f := factory.NewWithEnv(s, map[string]string{})
	dir := "../../fbc/graph/testdata/upgrades"
	cats, err := Open(context.Background(), f, image.Options{}, []Spec{{Source: dir, Priority: 3}}, nil)
	require.NoError(t, err)
	require.Len(t, cats, 1)
	assert.Equal(t, "upgrades", cats[0].Name)
	assert.Equal(t, 3, cats[0].Priority)
	assert.NotEmpty(t, cats[0].Catalog.Bundles)

	_, err = Open(context.Background(), f, image.Options{}, []Spec{{Source: filepath.Join(t.TempDir(), "nope")}}, nil)
	assert.ErrorContains(t, err, "--catalog ")
}
