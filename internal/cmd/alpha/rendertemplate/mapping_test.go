package rendertemplate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
)

// catalogRepo lays out a community-style catalog repository: operators/
// example-operator/ci.yaml mapping catalog-templates/ to catalogs.
func catalogRepo(t *testing.T, ci string, templates map[string]string) (root, ciFile string) {
	t.Helper()
	root = t.TempDir()
	pkg := filepath.Join(root, "operators", "example-operator")
	require.NoError(t, os.MkdirAll(filepath.Join(pkg, "catalog-templates"), 0o755))
	ciFile = filepath.Join(pkg, "ci.yaml")
	require.NoError(t, os.WriteFile(ciFile, []byte(ci), 0o644))
	for name, content := range templates {
		require.NoError(t, os.WriteFile(filepath.Join(pkg, "catalog-templates", name), []byte(content), 0o644))
	}
	return root, ciFile
}

const threeCatalogs = `---
updateGraph: replaces-mode
fbc:
  enabled: true
  catalog_mapping:
    - template_name: basic.yaml
      catalog_names: ["v4.15", "v4.16", "v4.17"]
      type: olm.template.basic
`

// TestRenderTemplateMapping (issue 31, item 2): one ci.yaml renders its
// template into three OpenShift catalogs where the repository keeps them,
// olm.csv.metadata only from v4.17, each as render-template alone would
// render it at that level.
func TestRenderTemplateMapping(t *testing.T) {
	t.Parallel()
	f := bundles(t)
	basicTmpl := f.basicTemplate(threeBundles...)
	root, ci := catalogRepo(t, threeCatalogs, map[string]string{"basic.yaml": basicTmpl})
	r := f.run(t, "alpha", "render-template", "--mapping", ci)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Empty(t, r.Out, "catalogs go to files")

	tmpl := writeFile(t, "basic.yaml", basicTmpl)
	plain := f.run(t, "alpha", "render-template", "basic", tmpl, "-o", "yaml")
	require.Equal(t, exit.OK, plain.Code, plain.ErrOut)
	meta := f.run(t, "alpha", "render-template", "basic", tmpl, "-o", "yaml", "--migrate-level", "bundle-object-to-csv-metadata")
	require.Equal(t, exit.OK, meta.Code, meta.ErrOut)
	for cat, want := range map[string]string{"v4.15": plain.Out, "v4.16": plain.Out, "v4.17": meta.Out} {
		file := filepath.Join(root, "catalogs", cat, "example-operator", "catalog.yaml")
		got, err := os.ReadFile(file)
		require.NoError(t, err, cat)
		assert.Equal(t, want, string(got), cat)
		assert.Contains(t, r.ErrOut, "wrote "+file+" (3 bundles, ", cat)
	}
	assert.Contains(t, r.ErrOut, "catalogs/v4.17/example-operator/catalog.yaml (3 bundles, olm.csv.metadata)")

	// The catalogs validate as written.
	for _, cat := range []string{"v4.15", "v4.17"} {
		v := f.run(t, "validate", filepath.Join(root, "catalogs", cat))
		assert.Equal(t, exit.OK, v.Code, "%s: %s", cat, v.ErrOut)
	}

	// --output-dir and -o json.
	out := t.TempDir()
	r = f.run(t, "alpha", "render-template", "--mapping", ci, "--output-dir", out, "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	_, err := os.Stat(filepath.Join(out, "v4.16", "example-operator", "catalog.json"))
	assert.NoError(t, err)
}

// TestRenderTemplateMappingAllOrNone: one catalog that fails (an image that
// cannot be pulled) writes none, and says which; a mapping that is wrong
// is refused before anything is pulled, naming the field.
func TestRenderTemplateMappingAllOrNone(t *testing.T) {
	t.Parallel()
	f := bundles(t)
	ci := threeCatalogs + `    - template_name: broken.yaml
      catalog_names: ["v4.18"]
      type: olm.template.basic
`
	broken := strings.Replace(f.basicTemplate(threeBundles...), f.refs["example-operator.v0.3.0"], f.reg.Ref("example-operator-bundle:missing"), 1)
	root, file := catalogRepo(t, ci, map[string]string{"basic.yaml": f.basicTemplate(threeBundles...), "broken.yaml": broken})
	old := filepath.Join(root, "catalogs", "v4.15", "example-operator", "catalog.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(old), 0o755))
	require.NoError(t, os.WriteFile(old, []byte("old\n"), 0o644))

	r := f.run(t, "alpha", "render-template", "--mapping", file)
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "catalog v4.18: render ")
	assert.Contains(t, r.ErrOut, "example-operator-bundle:missing")
	assert.Contains(t, r.ErrOut, "1 of 4 catalogs failed; nothing was written")
	got, err := os.ReadFile(old)
	require.NoError(t, err)
	assert.Equal(t, "old\n", string(got), "a catalog that rendered is not written either")
	for _, cat := range []string{"v4.16", "v4.17", "v4.18"} {
		_, err := os.Stat(filepath.Join(root, "catalogs", cat))
		assert.True(t, os.IsNotExist(err), cat)
	}
	entries, err := os.ReadDir(filepath.Dir(old))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left")

	for _, c := range []struct{ ci, want string }{
		{strings.Replace(threeCatalogs, `"v4.17"`, `"latest"`, 1), `fbc.catalog_mapping[0].catalog_names[2]: catalog "latest": not an OpenShift version such as v4.16`},
		{strings.Replace(threeCatalogs, "olm.template.basic", "olm.template.fancy", 1), `fbc.catalog_mapping[0].type: type "olm.template.fancy": want olm.template.basic or olm.semver`},
		{"fbc:\n  enabled: true\n", "fbc.catalog_mapping: no entry"},
		{threeCatalogs + "    - template_name: basic.yaml\n      catalog_names: [\"v4.16\"]\n      type: olm.template.basic\n", "catalog v4.16 is mapped from basic.yaml already"},
	} {
		_, file := catalogRepo(t, c.ci, map[string]string{"basic.yaml": f.basicTemplate(threeBundles...)})
		r := f.run(t, "alpha", "render-template", "--mapping", file)
		assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
		assert.Contains(t, r.ErrOut, c.want)
	}

	// Outside operators/<package>/ the catalogs' place must be given.
	lone := writeFile(t, "ci.yaml", threeCatalogs)
	require.NoError(t, os.MkdirAll(filepath.Join(filepath.Dir(lone), "catalog-templates"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(lone), "catalog-templates", "basic.yaml"), []byte(f.basicTemplate(threeBundles...)), 0o644))
	r = f.run(t, "alpha", "render-template", "--mapping", lone)
	assert.Equal(t, exit.Failed, r.Code)
	assert.Contains(t, r.ErrOut, "say where the catalogs go with --output-dir")

	r = f.run(t, "alpha", "render-template", "basic", "x.yaml", "--mapping", file)
	assert.Equal(t, exit.UpstreamUsage, r.Code, r.ErrOut)
}

// TestRenderTemplateMappingRefusesLinksOut (issue 40, item 4): a catalog
// directory that a symbolic link takes out of the repository (or out of
// --output-dir) is refused, naming the link, before any image is pulled;
// nothing is written through it.
func TestRenderTemplateMappingRefusesLinksOut(t *testing.T) {
	t.Parallel()
	tmpl := "schema: olm.template.basic\nentries:\n" + pkgBlob + channelBlob +
		"  - schema: olm.bundle\n    image: registry.invalid/example-operator-bundle:v0.1.0\n"
	root, ci := catalogRepo(t, threeCatalogs, map[string]string{"basic.yaml": tmpl})
	outside := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "catalogs"), 0o755))
	link := filepath.Join(root, "catalogs", "v4.16")
	require.NoError(t, os.Symlink(outside, link))
	r := cmdtest.New(t).Run("alpha", "render-template", "--mapping", ci)
	assert.NotEqual(t, exit.OK, r.Code)
	assert.Contains(t, r.ErrOut, link+" is a symbolic link to "+outside)
	assert.NotContains(t, r.ErrOut, "registry.invalid", "refused before pulling")
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "written through the link")

	out := t.TempDir()
	outLink := filepath.Join(out, "v4.17")
	require.NoError(t, os.Symlink(outside, outLink))
	r = cmdtest.New(t).Run("alpha", "render-template", "--mapping", ci, "--output-dir", out)
	assert.NotEqual(t, exit.OK, r.Code)
	assert.Contains(t, r.ErrOut, outLink+" is a symbolic link to "+outside)
	entries, err = os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "written through the link")
}

// TestRenderTemplateMappingOneErrorOnce (issue 36): an image that cannot
// be pulled fails every catalog of its template the same way: the error
// is printed once, naming the catalogs.
func TestRenderTemplateMappingOneErrorOnce(t *testing.T) {
	t.Parallel()
	f := bundles(t)
	broken := strings.Replace(f.basicTemplate(threeBundles...), f.refs["example-operator.v0.3.0"], f.reg.Ref("example-operator-bundle:missing"), 1)
	_, file := catalogRepo(t, threeCatalogs, map[string]string{"basic.yaml": broken})
	r := f.run(t, "alpha", "render-template", "--mapping", file)
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "catalogs v4.15, v4.16, v4.17: render ")
	assert.Equal(t, 1, strings.Count(r.ErrOut, "cannot be pulled"), r.ErrOut)
	assert.Contains(t, r.ErrOut, "3 of 3 catalogs failed; nothing was written")
}
