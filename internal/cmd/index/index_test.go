package index_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	validBundle  = "../../../testdata/bundles/valid"
	syntaxBundle = "../../../testdata/bundles/syntax-error"
	csvDir       = "../../../testdata/csv"
)

// twoVersions makes v0.1.0 (the valid fixture) and a v0.2.0 that replaces it.
func twoVersions(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	v1 := filepath.Join(dir, "0.1.0")
	v2 := filepath.Join(dir, "0.2.0")
	require.NoError(t, os.CopyFS(v1, os.DirFS(validBundle)))
	require.NoError(t, os.CopyFS(v2, os.DirFS(validBundle)))
	csv := filepath.Join(v2, "manifests/example-operator.clusterserviceversion.yaml")
	data, err := os.ReadFile(csv)
	require.NoError(t, err)
	s := strings.Replace(string(data), "name: example-operator.v0.1.0", "name: example-operator.v0.2.0", 1)
	s = strings.Replace(s, "version: 0.1.0", "version: 0.2.0\n  replaces: example-operator.v0.1.0", 1)
	require.NoError(t, os.WriteFile(csv, []byte(s), 0o644))
	return v1, v2
}

func TestIndexAddInspectRmExport(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	v1, v2 := twoVersions(t)
	db := filepath.Join(t.TempDir(), "index.db")

	r := o.Run("index", "add", "--database", db, "--bundles", v1+","+v2)
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "added 2 bundles")
	assert.Contains(t, r.ErrOut, "stable → example-operator.v0.2.0")

	r = o.Run("index", "inspect", db)
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "example-operator (default channel stable)")
	assert.Contains(t, r.Out, "example-operator.v0.2.0 0.2.0 → example-operator.v0.1.0")

	r = o.Run("index", "inspect", db, "-o", "json")
	require.Equal(t, 0, r.Code, r.ErrOut)
	var idx struct {
		Packages []struct {
			Name     string
			Channels []struct{ Name, Head string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &idx))
	require.Len(t, idx.Packages, 1)
	assert.Equal(t, "example-operator.v0.2.0", idx.Packages[0].Channels[0].Head)

	// Adding a version already there fails and leaves the file as it was.
	before, err := os.ReadFile(db)
	require.NoError(t, err)
	r = o.Run("index", "add", "--database", db, "--bundles", v2)
	assert.NotEqual(t, 0, r.Code)
	assert.Contains(t, r.ErrOut, "example-operator.v0.2.0")
	after, err := os.ReadFile(db)
	require.NoError(t, err)
	assert.Equal(t, before, after, "a failed add leaves the database byte-identical")

	out := filepath.Join(t.TempDir(), "out")
	r = o.Run("index", "export", "--index", db, "--download-folder", out)
	require.Equal(t, 0, r.Code, r.ErrOut)
	pkg, err := os.ReadFile(filepath.Join(out, "example-operator/package.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(pkg), "currentCSV: example-operator.v0.2.0")
	entries, err := os.ReadDir(filepath.Join(out, "example-operator/0.1.0"))
	require.NoError(t, err)
	assert.NotEmpty(t, entries)

	// A package directory that is a symbolic link (issue 40, item 4) is
	// refused as one that exists: nothing is written where it leads.
	linked, outside := filepath.Join(t.TempDir(), "out"), t.TempDir()
	require.NoError(t, os.MkdirAll(linked, 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(linked, "example-operator")))
	r = o.Run("index", "export", "--index", db, "--download-folder", linked)
	assert.NotEqual(t, 0, r.Code)
	assert.Contains(t, r.ErrOut, filepath.Join(linked, "example-operator")+" already exists")
	entries, err = os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "written through the link")

	r = o.Run("index", "rm", "--database", db, "-o", "example-operator")
	require.Equal(t, 0, r.Code, r.ErrOut)
	r = o.Run("index", "inspect", db, "-o", "json")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.NotContains(t, r.Out, "example-operator")
}

func TestIndexAddFailureLeavesNoNewDatabase(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	db := filepath.Join(t.TempDir(), "index.db")
	r := o.Run("index", "add", "--database", db, "--bundles", syntaxBundle)
	assert.Equal(t, 1, r.Code)
	assert.Contains(t, r.ErrOut, "syntax error")
	assert.Contains(t, r.ErrOut, "nothing was added")
	_, err := os.Stat(db)
	assert.True(t, os.IsNotExist(err), "no database file is left behind")

	r = o.Run("index", "add", "--database", db, "--bundles", "./no/such/dir")
	assert.Equal(t, exit.Failed, r.Code, "a bundle that cannot be read is a failed run on upstream's paths")
	assert.Contains(t, r.ErrOut, "no such directory, and not an image reference")

	r = o.Run("index", "add", "--bundles", validBundle)
	assert.Equal(t, exit.UpstreamUsage, r.Code)
	r = o.Run("index", "add", "--database", db, "--bundles", validBundle, "--mode", "sideways")
	assert.Equal(t, exit.UpstreamUsage, r.Code)
	assert.Contains(t, r.ErrOut, "--mode")
}

// TestIndexAddCSVv1: a CSV under apiVersion operators.coreos.com/v1 (as
// published packages such as percona-server-mysql-operator ship) goes into
// the index, as upstream opm and OLM take it, and is served and rendered
// with its apiVersion as written; only bundle validate warns.
func TestIndexAddCSVv1(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	_, v2 := twoVersions(t)
	csv := filepath.Join(v2, "manifests/example-operator.clusterserviceversion.yaml")
	data, err := os.ReadFile(csv)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(csv, []byte(strings.Replace(string(data), "operators.coreos.com/v1alpha1", "operators.coreos.com/v1", 1)), 0o644))
	db := filepath.Join(t.TempDir(), "index.db")

	r := o.Run("index", "add", "--database", db, "--bundles", v2, "--mode", "semver")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "added 1 bundle ")

	r = o.Run("render", db)
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, `"name": "example-operator.v0.2.0"`)
	assert.Contains(t, r.Out, `"version": "0.2.0"`)

	r = o.Run("bundle", "validate", v2)
	assert.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "csv-api-version")
}
