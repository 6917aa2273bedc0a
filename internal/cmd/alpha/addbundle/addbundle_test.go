package addbundle_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/fbc/template/templatetest"
	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/internal/shareddata"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// pushVersions pushes example-operator bundles v0.1.0..v0.3.0.
func pushVersions(t *testing.T) map[string]string {
	t.Helper()
	reg := registrytest.Start(t)
	refs := map[string]string{}
	for _, v := range []string{"0.1.0", "0.2.0", "0.3.0"} {
		dir := templatetest.Version(t, "example-operator.v"+v, v, "", "")
		refs[v] = templatetest.Push(t, dir, reg.Ref("example-operator-bundle:v"+v))
	}
	return refs
}

func basicTemplate(refs map[string]string) string {
	return `schema: olm.template.basic
entries:
  # the package
  - schema: olm.package
    name: example-operator
    defaultChannel: stable
  - schema: olm.channel
    package: example-operator
    name: stable
    entries:
      - name: example-operator.v0.1.0
      - name: example-operator.v0.2.0
        replaces: example-operator.v0.1.0   # the fix
  - schema: olm.bundle
    image: ` + refs["0.1.0"] + `
  - schema: olm.bundle
    image: ` + refs["0.2.0"] + `
`
}

// TestAddBundleBasic (issue 31, item 1): the bundle joins the default
// channel replacing its head, the file keeps its comments, the template
// renders with the new head, and adding it again changes nothing.
func TestAddBundleBasic(t *testing.T) {
	t.Parallel()
	refs := pushVersions(t)
	o := cmdtest.New(t)
	file := filepath.Join(t.TempDir(), "basic.yaml")
	require.NoError(t, os.WriteFile(file, []byte(basicTemplate(refs)), 0o644))

	r := o.Run("alpha", "template", "add-bundle", file, "--image", refs["0.3.0"], "--use-http")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "channel stable: entry example-operator.v0.3.0, replaces example-operator.v0.2.0")
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	want := strings.Replace(basicTemplate(refs), "        replaces: example-operator.v0.1.0   # the fix\n",
		"        replaces: example-operator.v0.1.0   # the fix\n      - name: example-operator.v0.3.0\n        replaces: example-operator.v0.2.0\n", 1) +
		"  - schema: olm.bundle\n    image: " + refs["0.3.0"] + "\n"
	assert.Equal(t, want, string(got))

	rr := o.Run("alpha", "render-template", file, "--use-http")
	require.Equal(t, exit.OK, rr.Code, rr.ErrOut)
	assert.Contains(t, rr.Out, `"name": "example-operator.v0.3.0"`)
	lr := o.Run("alpha", "list", "channels", writeCatalog(t, rr.Out))
	require.Equal(t, exit.OK, lr.Code, lr.ErrOut)
	assert.Contains(t, lr.Out, "example-operator.v0.3.0", "the new bundle heads the channel")

	r = o.Run("alpha", "template", "add-bundle", file, "--image", refs["0.3.0"], "--use-http")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "is there already")
	again, _ := os.ReadFile(file)
	assert.Equal(t, string(got), string(again))
}

func writeCatalog(t *testing.T, content string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(content), 0o644))
	return dir
}

// TestAddBundleAllAndRefusals: --all edits every template of a mapping
// (basic and semver); an edge that leaves two heads is refused and no
// template changes.
func TestAddBundleAllAndRefusals(t *testing.T) {
	t.Parallel()
	refs := pushVersions(t)
	o := cmdtest.New(t)
	root := t.TempDir()
	pkg := filepath.Join(root, "operators", "example-operator")
	require.NoError(t, os.MkdirAll(filepath.Join(pkg, "catalog-templates"), 0o755))
	ci := filepath.Join(pkg, "ci.yaml")
	require.NoError(t, os.WriteFile(ci, []byte(`fbc:
  enabled: true
  catalog_mapping:
    - template_name: basic.yaml
      catalog_names: ["v4.16"]
      type: olm.template.basic
    - template_name: semver.yaml
      catalog_names: ["v4.17"]
      type: olm.semver
`), 0o644))
	basic := filepath.Join(pkg, "catalog-templates", "basic.yaml")
	semver := filepath.Join(pkg, "catalog-templates", "semver.yaml")
	require.NoError(t, os.WriteFile(basic, []byte(basicTemplate(refs)), 0o644))
	semverText := "schema: olm.semver\nstable:\n  bundles:\n    - image: " + refs["0.1.0"] + "\n    - image: " + refs["0.2.0"] + "\n"
	require.NoError(t, os.WriteFile(semver, []byte(semverText), 0o644))

	// Two heads: 0.3.0 replacing 0.1.0 leaves 0.2.0 a head too.
	r := o.Run("alpha", "template", "add-bundle", "--all", "--mapping", ci, "--image", refs["0.3.0"], "--replaces", "example-operator.v0.1.0", "--channel", "stable", "--use-http")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "would leave 2 heads")
	assert.Contains(t, r.ErrOut, "--replaces example-operator.v0.2.0")
	assert.Contains(t, r.ErrOut, "no template was changed")
	b, _ := os.ReadFile(basic)
	assert.Equal(t, basicTemplate(refs), string(b))

	// --all with the semver template: the edges come from versions, so
	// no --replaces; the basic one replaces its head.
	r = o.Run("alpha", "template", "add-bundle", "--all", "--mapping", ci, "--image", refs["0.3.0"], "--channel", "stable", "--use-http")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	s, _ := os.ReadFile(semver)
	assert.Equal(t, semverText+"    - image: "+refs["0.3.0"]+"\n", string(s))
	rr := o.Run("alpha", "render-template", "--mapping", ci, "--use-http")
	require.Equal(t, exit.OK, rr.Code, rr.ErrOut)
	for _, cat := range []string{"v4.16", "v4.17"} {
		data, err := os.ReadFile(filepath.Join(root, "catalogs", cat, "example-operator", "catalog.yaml"))
		require.NoError(t, err)
		assert.Contains(t, string(data), "example-operator.v0.3.0", cat)
	}

	r = o.Run("alpha", "template", "add-bundle", basic, "--image", refs["0.3.0"], "--channel", "fast", "--use-http")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "channel fast created: entry example-operator.v0.3.0")
	b, _ = os.ReadFile(basic)
	assert.Contains(t, string(b), "    name: fast\n    entries:\n      - name: example-operator.v0.3.0\n", "a block channel in a block file")

	r = o.Run("alpha", "template", "add-bundle", basic)
	assert.Equal(t, exit.UpstreamUsage, r.Code)
	assert.Contains(t, r.ErrOut, "--image")
}

// TestAddBundleAllRefusesLinksOut (issue 40, item 4): --all edits the
// templates of a repository in place; catalog-templates/ linked out of
// the repository is refused, naming the link, and the template it leads
// to is left as it was (nothing is pulled).
func TestAddBundleAllRefusesLinksOut(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	pkg := filepath.Join(root, "operators", "example-operator")
	require.NoError(t, os.MkdirAll(pkg, 0o755))
	ci := filepath.Join(pkg, "ci.yaml")
	require.NoError(t, os.WriteFile(ci, []byte("fbc:\n  enabled: true\n  catalog_mapping:\n    - template_name: basic.yaml\n      catalog_names: [\"v4.16\"]\n      type: olm.template.basic\n"), 0o644))
	outside := t.TempDir()
	tmpl := basicTemplate(map[string]string{"0.1.0": "registry.invalid/b:v0.1.0", "0.2.0": "registry.invalid/b:v0.2.0"})
	require.NoError(t, os.WriteFile(filepath.Join(outside, "basic.yaml"), []byte(tmpl), 0o644))
	link := filepath.Join(pkg, "catalog-templates")
	require.NoError(t, os.Symlink(outside, link))

	r := cmdtest.New(t).Run("alpha", "template", "add-bundle", "--all", "--mapping", ci, "--image", "registry.invalid/b:v0.3.0")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, link+" is a symbolic link to "+outside)
	assert.Contains(t, r.ErrOut, "no template was changed")
	got, err := os.ReadFile(filepath.Join(outside, "basic.yaml"))
	require.NoError(t, err)
	assert.Equal(t, tmpl, string(got))
}

// TestAddBundleCSVEdgesPelorus (issue 36, item 1): pelorus 0.0.3's CSV
// replaces v0.0.2 and skips v0.0.2 and v0.0.1; the entry add-bundle writes
// has all three edges, so the rendered catalog loses no edge of the index
// `opm index add` builds from the same images (the documented gate), and
// --channel stable creates a block channel carrying the same edges.
func TestAddBundleCSVEdgesPelorus(t *testing.T) {
	t.Parallel()
	corpus := shareddata.Require(t, "corpus", "real", "pelorus-operator")
	reg := registrytest.Start(t)
	refs := map[string]string{}
	for _, v := range []string{"0.0.1", "0.0.2", "0.0.3"} {
		refs[v] = templatetest.Push(t, filepath.Join(corpus, v), reg.Ref("pelorus-bundle:"+v))
	}
	o := cmdtest.New(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "basic.yaml")
	tmpl := `schema: olm.template.basic
entries:
  - schema: olm.package
    name: pelorus-operator
    defaultChannel: alpha
  - schema: olm.channel
    package: pelorus-operator
    name: alpha
    entries:
      - name: pelorus-operator.v0.0.1
      - name: pelorus-operator.v0.0.2
        replaces: pelorus-operator.v0.0.1
        skips:
          - pelorus-operator.v0.0.1
  - schema: olm.bundle
    image: ` + refs["0.0.1"] + `
  - schema: olm.bundle
    image: ` + refs["0.0.2"] + `
`
	require.NoError(t, os.WriteFile(file, []byte(tmpl), 0o644))
	r := o.Run("alpha", "template", "add-bundle", file, "--image", refs["0.0.3"], "--use-http")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "channel alpha: entry pelorus-operator.v0.0.3, replaces pelorus-operator.v0.0.2, skips pelorus-operator.v0.0.2,pelorus-operator.v0.0.1 (from the CSV)")
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Contains(t, string(got), "      - name: pelorus-operator.v0.0.3\n        replaces: pelorus-operator.v0.0.2\n        skips:\n          - pelorus-operator.v0.0.2\n          - pelorus-operator.v0.0.1\n")

	rr := o.Run("alpha", "render-template", file, "--use-http")
	require.Equal(t, exit.OK, rr.Code, rr.ErrOut)
	catalog := writeCatalog(t, rr.Out)
	db := filepath.Join(dir, "index.db")
	ir := o.Run("index", "add", "--database", db, "--use-http", "-b", refs["0.0.1"]+","+refs["0.0.2"]+","+refs["0.0.3"])
	require.Equal(t, exit.OK, ir.Code, ir.ErrOut)
	dr := o.Run("diff", db, catalog, "--fail-on", "removed")
	assert.Equal(t, exit.OK, dr.Code, "the template's catalog keeps every edge of the index:\n%s%s", dr.Out, dr.ErrOut)

	// --no-csv-edges: the old behaviour, the head only.
	require.NoError(t, os.WriteFile(file, []byte(tmpl), 0o644))
	r = o.Run("alpha", "template", "add-bundle", file, "--image", refs["0.0.3"], "--no-csv-edges", "--use-http")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "entry pelorus-operator.v0.0.3, replaces pelorus-operator.v0.0.2 (the channel's head)")
	rr = o.Run("alpha", "render-template", file, "--use-http")
	require.Equal(t, exit.OK, rr.Code, rr.ErrOut)
	dr = o.Run("diff", db, writeCatalog(t, rr.Out), "--fail-on", "removed")
	assert.Equal(t, exit.Failed, dr.Code, "without the CSV's skips the gate trips:\n%s%s", dr.Out, dr.ErrOut)

	// A new channel: block style, the CSV's edges from alpha's bundles.
	require.NoError(t, os.WriteFile(file, []byte(tmpl), 0o644))
	r = o.Run("alpha", "template", "add-bundle", file, "--image", refs["0.0.3"], "--channel", "stable", "--use-http")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "channel stable created: entry pelorus-operator.v0.0.3, replaces pelorus-operator.v0.0.2")
	got, err = os.ReadFile(file)
	require.NoError(t, err)
	assert.Contains(t, string(got), "  - schema: olm.channel\n    package: pelorus-operator\n    name: stable\n    entries:\n      - name: pelorus-operator.v0.0.3\n        replaces: pelorus-operator.v0.0.2\n        skips:\n")
}
