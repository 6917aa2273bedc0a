package registry_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	indexadd "github.com/opmkit/opm/internal/cmd/index/add"
	indexprune "github.com/opmkit/opm/internal/cmd/index/prune"
	indexrm "github.com/opmkit/opm/internal/cmd/index/rm"
	"github.com/opmkit/opm/internal/cmd/registry/add"
	"github.com/opmkit/opm/internal/cmd/registry/prune"
	"github.com/opmkit/opm/internal/cmd/registry/rm"
	"github.com/opmkit/opm/internal/registrytest"
)

const (
	validBundle  = "../../../testdata/bundles/valid"
	syntaxBundle = "../../../testdata/bundles/syntax-error"
)

// versions copies the valid bundle as 0.1.0 and 0.2.0 (which replaces
// 0.1.0), and as 0.1.0 of a second package, other-operator.
func versions(t *testing.T) (v1, v2, other string) {
	t.Helper()
	dir := t.TempDir()
	v1, v2, other = filepath.Join(dir, "0.1.0"), filepath.Join(dir, "0.2.0"), filepath.Join(dir, "other")
	for _, d := range []string{v1, v2, other} {
		require.NoError(t, os.CopyFS(d, os.DirFS(validBundle)))
	}
	edit := func(path string, pairs ...string) {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		s := string(data)
		for i := 0; i < len(pairs); i += 2 {
			require.Contains(t, s, pairs[i], path)
			s = strings.Replace(s, pairs[i], pairs[i+1], 1)
		}
		require.NoError(t, os.WriteFile(path, []byte(s), 0o644))
	}
	csv := "manifests/example-operator.clusterserviceversion.yaml"
	edit(filepath.Join(v2, csv), "name: example-operator.v0.1.0", "name: example-operator.v0.2.0",
		"version: 0.1.0", "version: 0.2.0\n  replaces: example-operator.v0.1.0")
	edit(filepath.Join(other, csv), "name: example-operator.v0.1.0", "name: other-operator.v0.1.0")
	edit(filepath.Join(other, "metadata/annotations.yaml"), "package.v1: example-operator", "package.v1: other-operator")
	return v1, v2, other
}

func TestRegistryFlagsAreIndexOptions(t *testing.T) {
	t.Parallel()
	a, err := cmdtest.Parse(t, add.NewCmd, "-b", "a,b", "-c", "podman", "--mode", "semver", "--permissive", "--overwrite-latest")
	require.NoError(t, err)
	assert.Equal(t, &indexadd.Options{Bundles: []string{"a", "b"}, Database: "bundles.db", Mode: "semver", Permissive: true, OverwriteLatest: true, Output: "text",
		ImageOptions: a.ImageOptions}, a)
	assert.Equal(t, "podman", a.PullTool, "-c pulls bundle images; registry add builds nothing")
	_, err = cmdtest.Parse(t, add.NewCmd, "-b", "a", "--ca-file", "ca.pem", "--skip-tls-verify")
	assert.ErrorContains(t, err, "--ca-file")

	r, err := cmdtest.Parse(t, rm.NewCmd, "-d", "x.db", "-o", "etcd,prometheus")
	require.NoError(t, err)
	assert.Equal(t, &indexrm.Options{Operators: []string{"etcd", "prometheus"}, Database: "x.db", Output: "text", ImageOptions: r.ImageOptions}, r)
	_, err = cmdtest.Parse(t, rm.NewCmd, "-d", "x.db")
	assert.ErrorContains(t, err, `required flag(s) "packages" not set`)

	p, err := cmdtest.Parse(t, prune.NewCmd, "-p", "etcd")
	require.NoError(t, err)
	assert.Equal(t, &indexprune.Options{Packages: []string{"etcd"}, Database: "bundles.db", Output: "text", ImageOptions: p.ImageOptions}, p)
}

// TestRegistryExitCodes checks each of upstream's exit codes on registry
// add and index add (docs/output.md).
func TestRegistryExitCodes(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	v1, v2, other := versions(t)
	db := filepath.Join(t.TempDir(), "index.db")

	r := o.Run("registry", "add", "-d", db, "-b", v1)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)

	// 3: the package and CSV are already in the index (another path).
	copyV1 := filepath.Join(t.TempDir(), "copy")
	require.NoError(t, os.CopyFS(copyV1, os.DirFS(v1)))
	r = o.Run("registry", "add", "-d", db, "-b", copyV1)
	assert.Equal(t, 3, r.Code, r.ErrOut)

	// A directory is a place, not an identity: the same directory holding
	// the next version (operator-sdk regenerates bundle/ for each release)
	// is added.
	require.NoError(t, os.RemoveAll(v1))
	require.NoError(t, os.CopyFS(v1, os.DirFS(v2)))
	r = o.Run("index", "add", "--database", db, "-b", v1)
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)

	// 2: the bundle image (bundle path) is already in the index, now with
	// another CSV: a tag pushed again.
	reg := registrytest.Start(t)
	ref := reg.Addr + "/test/other-bundle:latest"
	r = o.Run("bundle", "build", "-d", other, "-t", ref, "--use-http")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	r = o.Run("index", "add", "--database", db, "-b", ref, "--use-http")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	csv := filepath.Join(other, "manifests/example-operator.clusterserviceversion.yaml")
	data, err := os.ReadFile(csv)
	require.NoError(t, err)
	next := strings.Replace(strings.Replace(string(data), "name: other-operator.v0.1.0", "name: other-operator.v0.2.0", 1),
		"version: 0.1.0", "version: 0.2.0\n  replaces: other-operator.v0.1.0", 1)
	require.NoError(t, os.WriteFile(csv, []byte(next), 0o644))
	r = o.Run("bundle", "build", "-d", other, "-t", ref, "--use-http")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	r = o.Run("index", "add", "--database", db, "-b", ref, "--use-http")
	assert.Equal(t, 2, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "bundle path "+ref+" is already in the index")

	// 1: the run failed (a bundle that does not parse); nothing is written.
	before, err := os.ReadFile(db)
	require.NoError(t, err)
	r = o.Run("registry", "add", "-d", db, "-b", syntaxBundle)
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	after, err := os.ReadFile(db)
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing was written")

	// 64: usage errors, never 2.
	for _, args := range [][]string{
		{"registry", "add", "-d", db, "-b", v2, "--mode", "sideways"},
		{"registry", "add", "--no-such-flag"},
		{"registry", "rm", "-d", db},
		{"registry", "add", "-d", db, "-b", v2, "--use-http", "--skip-tls-verify"},
		{"registry", "add", "-d", db, "-b", v2, "--skip-tls", "--use-http"},
		{"index", "add", "-b", v2},
		{"index", "nosuch"},
		{"alpha", "list", "packages"},
		{"alpha", "bundle", "validate", "-t", "x", "-o", "nosuch"},
	} {
		r := o.Run(args...)
		assert.Equal(t, exit.UpstreamUsage, r.Code, "%v: %s", args, r.ErrOut)
	}
	// opm's own commands keep 2 for usage errors.
	r = o.Run("bundle", "validate", "--no-such-flag")
	assert.Equal(t, exit.Usage, r.Code)
}

func TestRegistryPermissive(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	_, v2, other := versions(t)
	noCSV := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(noCSV, "manifests"), 0o755))
	require.NoError(t, os.CopyFS(filepath.Join(noCSV, "metadata"), os.DirFS(filepath.Join(validBundle, "metadata"))))
	noManifests := t.TempDir()
	db := filepath.Join(t.TempDir(), "index.db")

	// Without --permissive nothing is written, and the refusal names the
	// index rule ids, as bundle validate does.
	r := o.Run("registry", "add", "-d", db, "-b", strings.Join([]string{other, syntaxBundle, noCSV}, ","))
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "yaml-syntax")
	assert.Contains(t, r.ErrOut, "bundle-no-csv")
	assert.Contains(t, r.ErrOut, "--permissive")
	_, err := os.Stat(db)
	assert.True(t, os.IsNotExist(err), "no database was created")

	// With it, what cannot be loaded is skipped with the reason, the rest
	// added.
	r = o.Run("registry", "add", "-d", db, "--permissive", "-b", strings.Join([]string{other, syntaxBundle, noCSV, noManifests, "127.0.0.1:1/no/such:1", v2}, ","), "--use-http", "--retries", "-1")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "added 1 bundle ")
	for _, skipped := range []string{syntaxBundle, noCSV, noManifests, "127.0.0.1:1/no/such:1"} {
		assert.Contains(t, r.ErrOut, skipped)
	}
	assert.Equal(t, 5, strings.Count(r.ErrOut, "skipped "), "4 that do not load, 1 the add refuses")
	assert.Contains(t, r.ErrOut, "yaml-syntax")
	assert.Contains(t, r.ErrOut, "bundle-no-csv")
	assert.Contains(t, r.ErrOut, "connection refused")
	r = o.Run("alpha", "list", "packages", db)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "other-operator")
	assert.NotContains(t, r.Out, "example-operator", "v2 replaces a bundle not in the index: the add skipped it")
}

func TestRegistryRmPruneAndList(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	v1, v2, other := versions(t)
	o.Dir = t.TempDir() // registry commands default to ./bundles.db
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		require.NoError(t, err)
		return a
	}
	r := o.Run("registry", "add", "-b", strings.Join([]string{abs(v1), abs(v2), abs(other)}, ","))
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	db := filepath.Join(o.Dir, "bundles.db")
	require.FileExists(t, db)

	r = o.Run("alpha", "list", "channels", db)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Equal(t, "PACKAGE           CHANNEL  HEAD\nexample-operator  stable   example-operator.v0.2.0\nother-operator    stable   other-operator.v0.1.0\n", r.Out)
	r = o.Run("alpha", "list", "bundles", db, "example-operator")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "example-operator.v0.2.0  example-operator.v0.1.0")
	r = o.Run("alpha", "render-graph", db, "-p", "example-operator")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.True(t, strings.HasPrefix(r.Out, "graph LR\n"), r.Out)
	assert.Contains(t, r.Out, "example-operator.v0.2.0")
	assert.NotContains(t, r.Out, "other-operator")

	r = o.Run("registry", "prune", "-p", "other-operator")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "kept other-operator in bundles.db; removed example-operator (2 bundles)")
	r = o.Run("registry", "prune-stranded")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "removed 0 stranded bundles")
	r = o.Run("registry", "rm", "-o", "other-operator")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	r = o.Run("alpha", "list", "packages", "bundles.db")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Equal(t, "NAME  DISPLAY NAME  DEFAULT CHANNEL\n", r.Out)
}
