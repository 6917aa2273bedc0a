package list_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/olmv1"
	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/internal/shareddata"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// corpusCatalog renders the given corpus bundle directories (package/
// version) with the real `opm render` into a catalog, one channel per
// package holding its bundle.
func corpusCatalog(t *testing.T, o *cmdtest.Runner, bundles ...string) string {
	t.Helper()
	real := shareddata.Require(t, "corpus", "real")
	dir := t.TempDir()
	for _, b := range bundles {
		r := o.Run("render", filepath.Join(real, b), "-o", "json")
		require.Equal(t, exit.OK, r.Code, "render %s: %s", b, r.ErrOut)
		var blob struct{ Name, Package string }
		require.NoError(t, json.Unmarshal([]byte(r.Out), &blob))
		cat := `{"schema":"olm.package","name":"` + blob.Package + `","defaultChannel":"stable"}` + "\n" +
			`{"schema":"olm.channel","name":"stable","package":"` + blob.Package + `","entries":[{"name":"` + blob.Name + `"}]}` + "\n" + r.Out
		require.NoError(t, os.WriteFile(filepath.Join(dir, blob.Package+".json"), []byte(cat), 0o644))
	}
	return dir
}

func verdicts(t *testing.T, out string) map[string]olmv1.Verdict {
	t.Helper()
	var list []olmv1.Verdict
	require.NoError(t, json.Unmarshal([]byte(out), &list), out)
	by := map[string]olmv1.Verdict{}
	for _, v := range list {
		by[v.Package] = v
	}
	return by
}

func rulesOf(v olmv1.Verdict, severity string) []string {
	var out []string
	for _, r := range v.Reasons {
		if r.Severity == severity {
			out = append(out, r.Rule)
		}
	}
	return out
}

// TestListBundlesOLMv1Corpus (issue 31, item 4): on real bundles whose
// answers are known: webhooks (cluster-aas-operator, marin3r,
// node-healthcheck-operator) need a certificate provider; aqua, etcd and
// pelorus support only OwnNamespace/SingleNamespace, which a default
// operator-controller refuses; pelorus and cluster-aas-operator declare
// dependencies, which it refuses too.
func TestListBundlesOLMv1Corpus(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	dir := corpusCatalog(t, o, "cluster-aas-operator/0.1.5", "marin3r/0.13.1", "node-healthcheck-operator/0.12.0",
		"aqua/2022.4.18", "etcd/0.9.4", "pelorus-operator/0.0.9", "skupper-operator/1.9.6")
	r := o.Run("alpha", "list", "bundles", dir, "--olmv1", "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	by := verdicts(t, r.Out)
	require.Len(t, by, 7)
	for _, p := range []string{"cluster-aas-operator", "marin3r", "node-healthcheck-operator"} {
		assert.Contains(t, rulesOf(by[p], "warning"), "olmv1-webhooks", p)
	}
	assert.True(t, by["marin3r"].Installable, "webhooks install where cert-manager or the service CA is")
	assert.True(t, by["node-healthcheck-operator"].Installable)
	for _, p := range []string{"aqua", "etcd", "pelorus-operator"} {
		assert.False(t, by[p].Installable, p)
		assert.Contains(t, rulesOf(by[p], "error"), "olmv1-all-namespaces", p)
	}
	for _, p := range []string{"pelorus-operator", "cluster-aas-operator"} {
		assert.Contains(t, rulesOf(by[p], "error"), "olmv1-dependencies", p)
		assert.False(t, by[p].Installable, p)
	}
	s := by["skupper-operator"]
	assert.True(t, s.Installable && s.Complete, "%+v", s)
	assert.Empty(t, s.Reasons)
	assert.Equal(t, olmv1.FromBundleObjects, s.From)
	assert.Equal(t, []string{"stable"}, s.Channels)

	// The text table: one row per bundle, the reasons in a column.
	r = o.Run("alpha", "list", "bundles", dir, "aqua", "--olmv1")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	lines := strings.Split(strings.TrimSpace(r.Out), "\n")
	require.Len(t, lines, 2, r.Out)
	assert.Regexp(t, `^PACKAGE +BUNDLE +VERSION +INSTALLABLE +WHY$`, lines[0])
	assert.Regexp(t, `^aqua +aqua-operator\.v2022\.4\.18 +2022\.4\.18 +no +error: the bundle supports OwnNamespace, SingleNamespace but not AllNamespaces`, lines[1])

	r = o.Run("alpha", "list", "packages", dir, "--olmv1", "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.NotContains(t, r.Out, "icon")
	var pkgs []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.Out), &pkgs))
	require.Len(t, pkgs, 7)
	for _, p := range pkgs {
		want := map[string]bool{"marin3r": true, "node-healthcheck-operator": true, "skupper-operator": true}[p["name"].(string)]
		assert.Equal(t, want, p["headInstallable"], p["name"])
	}
}

// TestListBundlesOLMv1Metadata: a catalog with olm.csv.metadata only says
// what it can (install modes, API services, dependencies) and that
// webhooks are unknown; --pull reads the bundle image and completes it.
func TestListBundlesOLMv1Metadata(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	src := shareddata.Require(t, "corpus", "real", "marin3r", "0.13.1")
	// The catalog names the bundle in a registry; the same image in an
	// OCI layout on this machine is refused (issue 35).
	ref := registrytest.Start(t).Ref("m-bundle:1")
	local := "oci:" + filepath.Join(t.TempDir(), "layout") + ":1"
	b, err := bundle.LoadDir(src)
	require.NoError(t, err)
	img, err := image.BuildBundleImage(os.DirFS(src), b.Annotations.Values)
	require.NoError(t, err)
	c, err := image.NewClient(image.Options{UseHTTP: true})
	require.NoError(t, err)
	for _, to := range []string{ref, local} {
		pr, err := image.ParseReference(to)
		require.NoError(t, err)
		_, err = c.Write(context.Background(), img, pr)
		require.NoError(t, err)
	}

	dir := t.TempDir()
	cat := `{"schema":"olm.package","name":"m","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"m","entries":[{"name":"m.v1"},{"name":"m.v2","replaces":"m.v1"}]}
{"schema":"olm.bundle","name":"m.v1","package":"m","image":"example.invalid/m:1","properties":[{"type":"olm.package","value":{"packageName":"m","version":"1.0.0"}},{"type":"olm.csv.metadata","value":{"installModes":[{"type":"AllNamespaces","supported":true}],"apiServiceDefinitions":{"owned":[{"name":"v1.api.example.com"}]}}}]}
{"schema":"olm.bundle","name":"m.v2","package":"m","image":"` + ref + `","properties":[{"type":"olm.package","value":{"packageName":"m","version":"2.0.0"}},{"type":"olm.csv.metadata","value":{"installModes":[{"type":"AllNamespaces","supported":true}]}}]}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(cat), 0o644))

	r := o.Run("alpha", "list", "bundles", dir, "--olmv1", "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	var list []olmv1.Verdict
	require.NoError(t, json.Unmarshal([]byte(r.Out), &list))
	require.Len(t, list, 2)
	v1, v2 := list[0], list[1]
	assert.False(t, v1.Installable)
	assert.Equal(t, []string{"olmv1-apiservices"}, rulesOf(v1, "error"))
	assert.True(t, v2.Installable)
	assert.False(t, v2.Complete, "csv-metadata cannot say whether there are webhooks")
	assert.Equal(t, olmv1.FromCSVMetadata, v2.From)
	assert.Equal(t, []string{"olmv1-webhooks"}, rulesOf(v2, "unknown"))

	r = o.Run("alpha", "list", "bundles", dir, "m", "--olmv1", "--pull", "--use-http", "-o", "json")
	require.Equal(t, exit.Failed, r.Code, "m.v1's image cannot be pulled: %s", r.ErrOut)
	assert.Contains(t, r.ErrOut, "example.invalid/m:1")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(strings.Replace(cat, "example.invalid/m:1", local, 1)), 0o644))
	r = o.Run("alpha", "list", "bundles", dir, "m", "--olmv1", "--pull", "--use-http", "-o", "json")
	require.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "bundle m.v1: pull "+local+": the oci: transport reads this machine's files")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(strings.Replace(cat, "example.invalid/m:1", ref, 1)), 0o644))
	r = o.Run("alpha", "list", "bundles", dir, "m", "--olmv1", "--pull", "--use-http", "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	list = nil
	require.NoError(t, json.Unmarshal([]byte(r.Out), &list))
	require.Len(t, list, 2)
	v2 = list[1]
	assert.Equal(t, olmv1.FromImage, v2.From)
	assert.True(t, v2.Complete && v2.Installable, "%+v", v2)
	assert.Contains(t, rulesOf(v2, "warning"), "olmv1-webhooks", "the image's CSV has webhooks")

	// Issue 36: list packages counts yes? apart: m.v2 is installable as
	// far as its csv-metadata tells, which is not everything.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(cat), 0o644))
	r = o.Run("alpha", "list", "packages", dir, "--olmv1")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Regexp(t, `(?m)^m +stable +m\.v2 +yes\? +0/2 \(1 yes\?\)$`, r.Out)
	r = o.Run("alpha", "list", "packages", dir, "--olmv1", "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	var rows []olmv1.PackageVerdict
	require.NoError(t, json.Unmarshal([]byte(r.Out), &rows))
	require.Len(t, rows, 1)
	assert.Equal(t, 0, rows[0].Installable)
	assert.Equal(t, 1, rows[0].Unknown)
	assert.Equal(t, 2, rows[0].Bundles)

	r = o.Run("alpha", "list", "channels", dir, "--olmv1")
	assert.NotEqual(t, exit.OK, r.Code, "channels take no --olmv1")
	assert.Contains(t, r.ErrOut, "unknown flag: --olmv1")
	r = o.Run("alpha", "list", "bundles", dir, "--pull")
	assert.NotEqual(t, exit.OK, r.Code)
	assert.Contains(t, r.ErrOut, "add --olmv1")
}
