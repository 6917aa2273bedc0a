// Package authoring runs docs/fbc.md's authoring guide and its
// replacement for operator-sdk's catalog-build target, as written there,
// against a registry of its own: bundle images built by opm from
// testdata, a sqlite index image, then migrate, convert-template, an edit,
// render-template, validate, and the Makefile targets. It walks
// docs/getting-started.md and supply-chain.md's CI recipe the same way.
package authoring

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/template/templatetest"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/registrytest"
)

const buildTags = "containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub"

var repoRoot = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}()

// block is the text between <!-- name:begin --> and <!-- name:end --> in
// docs/fbc.md, split into its fenced code blocks.
func blocks(t *testing.T, name string) []string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "fbc.md"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?s)<!-- ` + name + `:begin -->(.*?)<!-- ` + name + `:end -->`).FindSubmatch(doc)
	require.NotNil(t, m, "docs/fbc.md has no %s section", name)
	var out []string
	for _, f := range regexp.MustCompile("(?s)```[a-z]*\n(.*?)```").FindAllSubmatch(m[1], -1) {
		out = append(out, string(f[1]))
	}
	return out
}

// built is the directory opm is built into, once for the package's tests
// (TestMain removes it).
var built struct {
	once sync.Once
	dir  string
	out  []byte
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// buildOpm builds opm (once) and returns the directory holding it.
func buildOpm(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "opm-authoring-"); built.err != nil {
			return
		}
		cmd := exec.Command("go", "build", "-tags", buildTags, "-o", filepath.Join(built.dir, "opm"), "./cmd/opm")
		cmd.Dir = repoRoot
		built.out, built.err = cmd.CombinedOutput()
	})
	require.NoError(t, built.err, "%s", built.out)
	return built.dir
}

type shell struct {
	t   *testing.T
	dir string
	env []string
}

func (s shell) run(script string, env ...string) string {
	s.t.Helper()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = s.dir
	cmd.Env = append(append(os.Environ(), s.env...), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(s.t, err, "%s\n%s", script, out)
	return string(out)
}

// TestAuthoringGuide runs the guide and the Makefile targets.
func TestAuthoringGuide(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: -short (builds opm and runs the guide against a registry)")
	}
	if _, err := exec.LookPath("make"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("make is required under CI (apt-get install -y make)")
		}
		t.Skip("skipping: make is not installed (apt-get install -y make)")
	}
	reg := registrytest.Start(t)
	bin := buildOpm(t)
	work := t.TempDir()
	sh := shell{t: t, dir: work, env: []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"OPM_USE_HTTP=true", // the test registry is plain HTTP
		"HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir(),
	}}
	// The guide's names, on this registry.
	names := strings.NewReplacer("quay.io/me/", reg.Addr+"/", "my-operator", "example-operator")

	// Bundle images built by opm from testdata, and today's sqlite index
	// image of the first two (on a small base: its content is not served).
	bundle := func(v, replaces string) string {
		name := "example-operator.v" + v
		if replaces != "" {
			replaces = "example-operator.v" + replaces
		}
		return templatetest.Push(t, templatetest.Version(t, name, v, "", replaces), reg.Addr+"/example-operator-bundle:v"+v)
	}
	b1, b2, b3 := bundle("0.1.0", ""), bundle("0.2.0", "0.1.0"), bundle("0.3.0", "0.2.0")
	base := pushBase(t, reg.Addr+"/base:1")
	sh.run("opm index add --bundles " + b1 + "," + b2 + " -i " + base + " --tag " + reg.Addr + "/index:1")

	// The guide: migrate and convert; the edit, with the yq the guide
	// names (or the same edit made here when there is none); render and
	// validate.
	guide := blocks(t, "authoring-guide")
	require.Len(t, guide, 3)
	sh.run(names.Replace(guide[0]))
	require.True(t, strings.HasPrefix(guide[1], "yq -i "), guide[1])
	tmplPath := filepath.Join(work, "catalog-templates", "example-operator.yaml")
	switch yqKind() {
	case "mikefarah":
		sh.run(names.Replace(guide[1]))
	case "jq":
		sh.run(names.Replace(strings.Replace(guide[1], "yq -i ", "yq -y -i ", 1)))
	default:
		t.Log("yq is not installed: the test makes the guide's edit itself")
		editTemplate(t, tmplPath, b3)
	}
	sh.run(names.Replace(guide[2]))

	// The rendered catalog: the three bundles as opm render prints their
	// images, in the stable channel.
	got, err := fbc.LoadDir(filepath.Join(work, "catalog"))
	require.NoError(t, err)
	assert.Empty(t, fbc.Validate(got))
	var bundleNames []string
	for _, b := range got.Bundles {
		bundleNames = append(bundleNames, b.Name+"@"+b.Image)
	}
	assert.ElementsMatch(t, []string{"example-operator.v0.1.0@" + b1, "example-operator.v0.2.0@" + b2, "example-operator.v0.3.0@" + b3}, bundleNames)
	require.Len(t, got.Channels, 1)
	assert.Equal(t, fbc.ChannelEntry{Name: "example-operator.v0.3.0", Replaces: "example-operator.v0.2.0"}, got.Channels[0].Entries[2])
	direct := sh.run("opm render " + b3)
	var one fbc.Catalog
	require.NoError(t, one.LoadFile("b3.json", []byte(direct)))
	for _, b := range got.Bundles {
		if b.Name == "example-operator.v0.3.0" {
			// The same blob, in upstream's order for a bundle image.
			want := one.Bundles[0]
			assert.ElementsMatch(t, want.Properties, b.Properties)
			assert.ElementsMatch(t, want.RelatedImages, b.RelatedImages)
			want.Properties, b.Properties, want.RelatedImages, b.RelatedImages = nil, nil, nil, nil
			b.Pos = want.Pos
			assert.Equal(t, want, b, "the rendered bundle is opm render's")
		}
	}

	// The Makefile: catalog-build makes the next release an FBC image of
	// today's index plus the new bundle, pushed; catalog-render renders
	// the templates and writes the Dockerfile.
	mk := blocks(t, "catalog-build")
	require.Len(t, mk, 1)
	require.NoError(t, os.WriteFile(filepath.Join(work, "Makefile"), []byte(mk[0]), 0o644))
	sh.run("make catalog-build catalog-push IMAGE_TAG_BASE=" + reg.Addr + "/example-operator VERSION=0.3.0 BUNDLE_IMG=" + b3 + " CATALOG_BASE_IMG=" + reg.Addr + "/index:1")
	out := sh.run("opm render " + reg.Addr + "/example-operator-catalog:v0.3.0")
	var shipped fbc.Catalog
	require.NoError(t, shipped.LoadFile("shipped.json", []byte(out)))
	assert.Len(t, shipped.Bundles, 3)
	labels := sh.run("opm index inspect " + reg.Addr + "/example-operator-catalog:v0.3.0 -o json")
	assert.Contains(t, labels, "example-operator.v0.3.0")

	require.NoError(t, os.RemoveAll(filepath.Join(work, "catalog")))
	sh.run("make catalog-render", "OPM_BASE_IMAGE="+base, "OPM_BUILDER_IMAGE="+base)
	again, err := fbc.LoadDir(filepath.Join(work, "catalog"))
	require.NoError(t, err)
	assert.Len(t, again.Bundles, 3)
	df, err := os.ReadFile(filepath.Join(work, "catalog.Dockerfile"))
	require.NoError(t, err)
	assert.Contains(t, string(df), "ADD catalog /configs\n")
}

// editTemplate makes the guide's yq edit: the bundle image b3 and its
// channel entry.
func editTemplate(t *testing.T, tmplPath, b3 string) {
	t.Helper()
	tmpl, err := os.ReadFile(tmplPath)
	require.NoError(t, err)
	edited := strings.Replace(string(tmpl), "  - name: example-operator.v0.2.0\n    replaces: example-operator.v0.1.0\n",
		"  - name: example-operator.v0.2.0\n    replaces: example-operator.v0.1.0\n  - name: example-operator.v0.3.0\n    replaces: example-operator.v0.2.0\n", 1)
	require.NotEqual(t, string(tmpl), edited, "the template's stable channel, as convert-template wrote it:\n%s", tmpl)
	edited = strings.Replace(edited, "schema: olm.template.basic\n", "- image: "+b3+"\n  schema: olm.bundle\nschema: olm.template.basic\n", 1)
	require.NoError(t, os.WriteFile(tmplPath, []byte(edited), 0o644))
}

// yqKind says which yq is on PATH: "mikefarah" (the guide's), "jq" (the jq
// wrapper Debian and Ubuntu package as yq), or "" (none).
func yqKind() string {
	out, err := exec.Command("yq", "--version").CombinedOutput()
	switch {
	case err != nil:
		return ""
	case strings.Contains(string(out), "mikefarah"):
		return "mikefarah"
	}
	return "jq"
}

// TestGuideNamesItsYq: the guide's yq step is mikefarah's yq, and says so
// (Debian's yq is another program, which refuses -i without -y).
func TestGuideNamesItsYq(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "fbc.md"))
	require.NoError(t, err)
	assert.Contains(t, string(doc), "[mikefarah's `yq`](https://github.com/mikefarah/yq)")
	assert.Contains(t, string(doc), "write `yq -y -i` instead of `yq -i`")
}

// pushBase pushes a small image to stand for the base of an index image.
func pushBase(t *testing.T, ref string) string {
	t.Helper()
	lb := image.NewLayerBuilder()
	require.NoError(t, lb.AddFile("etc/base-release", []byte("test base\n")))
	l, err := lb.Layer()
	require.NoError(t, err)
	img, err := image.NewImage(image.ImageConfig{Platform: image.Platform{OS: "linux", Architecture: runtime.GOARCH}, User: "1001"}, l)
	require.NoError(t, err)
	c, err := image.NewClient(image.Options{UseHTTP: true})
	require.NoError(t, err)
	r, err := image.ParseReference(ref)
	require.NoError(t, err)
	_, err = c.Write(context.Background(), img, r)
	require.NoError(t, err)
	return ref
}

// TestCatalogRepository walks docs/fbc.md's catalog-repository workflow: a
// release's bundle added to the mapped template, every OpenShift catalog
// rendered (csv-metadata only from v4.17), validated in one run, and the
// release gate against the published index passing.
func TestCatalogRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: -short (builds opm and runs the workflow against a registry)")
	}
	reg := registrytest.Start(t)
	bin := buildOpm(t)
	work := t.TempDir()
	sh := shell{t: t, dir: work, env: []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"OPM_USE_HTTP=true",
		"HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir(),
	}}
	names := strings.NewReplacer("quay.io/me/", reg.Addr+"/", "my-operator", "example-operator")
	bundle := func(v, replaces string) string {
		name := "example-operator.v" + v
		if replaces != "" {
			replaces = "example-operator.v" + replaces
		}
		return templatetest.Push(t, templatetest.Version(t, name, v, "", replaces), reg.Addr+"/example-operator-bundle:v"+v)
	}
	b1, b2 := bundle("0.1.0", ""), bundle("0.2.0", "0.1.0")
	bundle("0.3.0", "0.2.0") // the release the doc adds
	// What is published: an FBC index of the first two.
	base := pushBase(t, reg.Addr+"/base:1")
	sh.run("opm index add --bundles " + b1 + "," + b2 + " -i " + base + " --catalog-format fbc --tag " + reg.Addr + "/index:v4.17")

	doc := blocks(t, "catalog-repository")
	require.Len(t, doc, 3)
	pkg := filepath.Join(work, "operators", "example-operator")
	require.NoError(t, os.MkdirAll(filepath.Join(pkg, "catalog-templates"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "ci.yaml"), []byte(doc[1]), 0o644))
	tmpl := `schema: olm.template.basic
entries:
  - schema: olm.package
    name: example-operator
    defaultChannel: stable
  - schema: olm.channel
    package: example-operator
    name: stable
    entries:
      - name: example-operator.v0.1.0
      - name: example-operator.v0.2.0
        replaces: example-operator.v0.1.0
  - schema: olm.bundle
    image: ` + b1 + `
  - schema: olm.bundle
    image: ` + b2 + `
`
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "catalog-templates", "basic.yaml"), []byte(tmpl), 0o644))

	out := sh.run(names.Replace(doc[2]))
	assert.Contains(t, out, "channel stable: entry example-operator.v0.3.0, replaces example-operator.v0.2.0")
	assert.Contains(t, out, "3 catalogs, 0 errors")
	for _, cat := range []string{"v4.15", "v4.16", "v4.17"} {
		c, err := fbc.LoadDir(filepath.Join(work, "catalogs", cat))
		require.NoError(t, err, cat)
		assert.Len(t, c.Bundles, 3, cat)
		hasMeta := false
		for _, b := range c.Bundles {
			for _, p := range b.Properties {
				hasMeta = hasMeta || p.Type == fbc.PropertyCSVMetadata
			}
		}
		assert.Equal(t, cat == "v4.17", hasMeta, "%s: olm.csv.metadata only from v4.17", cat)
	}
}
