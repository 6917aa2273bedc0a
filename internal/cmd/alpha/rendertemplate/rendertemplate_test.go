package rendertemplate_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/cmd/alpha/rendertemplate"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/template/templatetest"
	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/internal/shareddata"
)

// fixture is one registry holding the bundle images the tests render:
// testdata/bundles/valid at three versions (one a release of another),
// and an index-like image that is not a bundle.
type fixture struct {
	reg  *registrytest.Registry
	refs map[string]string // by bundle name
	dirs map[string]string // the bundle directories, by bundle name
}

// bundles starts a registry for one test and pushes the bundle images.
func bundles(t *testing.T) *fixture {
	t.Helper()
	reg := registrytest.Start(t)
	f := &fixture{reg: reg, refs: map[string]string{}, dirs: map[string]string{}}
	for _, b := range []struct{ name, version, release, replaces string }{
		{"example-operator.v0.1.0", "0.1.0", "", ""},
		{"example-operator.v0.2.0", "0.2.0", "", "example-operator.v0.1.0"},
		{"example-operator-v0.2.0-1", "0.2.0", "1", "example-operator.v0.1.0"},
		{"example-operator.v0.3.0", "0.3.0", "", "example-operator.v0.2.0"},
	} {
		dir := templatetest.Version(t, b.name, b.version, b.release, b.replaces)
		f.dirs[b.name] = dir
		f.refs[b.name] = templatetest.Push(t, dir, reg.Ref("example-operator-bundle:"+strings.Trim(strings.TrimPrefix(b.name, "example-operator"), ".-")))
	}
	return f
}

func (f *fixture) run(t *testing.T, args ...string) cmdtest.Result {
	t.Helper()
	return cmdtest.New(t).Run(append(args, "--use-http")...)
}

// rendered is opm render of each image, as one catalog, each blob in the
// order upstream's render of a bundle image gives (upstreamOrder).
func (f *fixture) rendered(t *testing.T, level string, names ...string) *fbc.Catalog {
	t.Helper()
	out := &fbc.Catalog{}
	for _, n := range names {
		args := []string{"render", f.refs[n]}
		if level != "" {
			args = append(args, "--migrate-level", level)
		}
		r := f.run(t, args...)
		require.Equal(t, 0, r.Code, r.ErrOut)
		one := &fbc.Catalog{}
		require.NoError(t, one.LoadFile(n+".json", []byte(r.Out)))
		require.Len(t, one.Bundles, 1)
		// The property values as the render wrote them: reading a catalog
		// re-encodes them as upstream's reading does (keys sorted), while a
		// bundle rendered anew keeps the order upstream builds them in
		// (olm.package: packageName, version, release).
		var written fbc.Bundle
		require.NoError(t, json.Unmarshal([]byte(r.Out), &written))
		one.Bundles[0].Properties = written.Properties
		upstreamOrder(t, &one.Bundles[0], f.dirs[n])
		out.Merge(one)
	}
	return out
}

// upstreamOrder orders a bundle image's blob as upstream's render does
// (opm render orders it as a rendered index does): properties by type then
// value, olm.csv.metadata last; related images as the CSV in dir lists
// them, then the bundle image, then the others by image.
func upstreamOrder(t *testing.T, b *fbc.Bundle, dir string) {
	t.Helper()
	var props, meta []fbc.Property
	for _, p := range b.Properties {
		if p.Type == "olm.csv.metadata" {
			meta = append(meta, p)
		} else {
			props = append(props, p)
		}
	}
	sort.SliceStable(props, func(i, j int) bool {
		if props[i].Type != props[j].Type {
			return props[i].Type < props[j].Type
		}
		return string(props[i].Value) < string(props[j].Value)
	})
	b.Properties = append(props, meta...)

	lb, err := bundle.LoadDir(dir)
	require.NoError(t, err)
	var related []fbc.RelatedImage
	seen := map[string]bool{}
	for _, ri := range lb.CSV.Spec.RelatedImages {
		related = append(related, fbc.RelatedImage{Name: ri.Name, Image: ri.Image})
		seen[ri.Image] = true
	}
	if !seen[b.Image] {
		related = append(related, fbc.RelatedImage{Image: b.Image})
		seen[b.Image] = true
	}
	var rest []string
	for _, ri := range b.RelatedImages {
		if !seen[ri.Image] {
			seen[ri.Image] = true
			rest = append(rest, ri.Image)
		}
	}
	sort.Strings(rest)
	for _, img := range rest {
		related = append(related, fbc.RelatedImage{Image: img})
	}
	b.RelatedImages = related
}

func writeCatalog(t *testing.T, c *fbc.Catalog, format fbc.Format) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, fbc.Write(&b, c, format))
	return b.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

const (
	pkgBlob = `  - schema: olm.package
    name: example-operator
    defaultChannel: stable
    description: "Widgets <and> more & more"
`
	channelBlob = `  - schema: olm.channel
    package: example-operator
    name: stable
    entries:
      - name: example-operator.v0.1.0
      - name: example-operator.v0.2.0
        replaces: example-operator.v0.1.0
      - name: example-operator.v0.3.0
        replaces: example-operator.v0.2.0
        skips: [example-operator.v0.1.0]
`
	deprecationBlob = `  - schema: olm.deprecations
    package: example-operator
    entries:
      - message: use 0.3.0
        reference: {name: example-operator.v0.1.0, schema: olm.bundle}
`
	customBlob = `  - schema: example.com/notes
    package: example-operator
    zeta: 1
    alpha: [b, a]
`
)

func (f *fixture) basicTemplate(names ...string) string {
	var b strings.Builder
	b.WriteString("schema: olm.template.basic\nentries:\n" + pkgBlob + channelBlob)
	for _, n := range names {
		fmt.Fprintf(&b, "  - schema: olm.bundle\n    image: %s\n", f.refs[n])
	}
	b.WriteString(deprecationBlob + customBlob)
	return b.String()
}

// expectedBasic is the catalog a basic template renders to, as upstream
// builds it: the template's blobs (keys sorted, deprecations in their
// field order) plus opm render of each image.
func expectedBasic(t *testing.T, f *fixture, level string, names ...string) *fbc.Catalog {
	t.Helper()
	want := &fbc.Catalog{}
	require.NoError(t, want.LoadFile("blobs.json", []byte(`{"defaultChannel":"stable","description":"Widgets <and> more & more","name":"example-operator","schema":"olm.package"}
{"entries":[{"name":"example-operator.v0.1.0"},{"name":"example-operator.v0.2.0","replaces":"example-operator.v0.1.0"},{"name":"example-operator.v0.3.0","replaces":"example-operator.v0.2.0","skips":["example-operator.v0.1.0"]}],"name":"stable","package":"example-operator","schema":"olm.channel"}
{"schema":"olm.deprecations","package":"example-operator","entries":[{"reference":{"schema":"olm.bundle","name":"example-operator.v0.1.0"},"message":"use 0.3.0"}]}
{"alpha":["b","a"],"package":"example-operator","schema":"example.com/notes","zeta":1}
`)))
	want.Merge(f.rendered(t, level, names...))
	return want
}

var threeBundles = []string{"example-operator.v0.1.0", "example-operator.v0.2.0", "example-operator.v0.3.0"}

// TestRenderTemplateBasic renders a basic template from a file, by type
// and detected, as JSON and YAML, and from stdin: each is the template's
// blobs plus each image's opm render, written as upstream writes catalogs.
func TestRenderTemplateBasic(t *testing.T) {
	t.Parallel()
	f := bundles(t)
	tmpl := writeFile(t, "basic.yaml", f.basicTemplate(threeBundles...))
	want := expectedBasic(t, f, "", threeBundles...)
	wantJSON := writeCatalog(t, want, fbc.FormatJSON)
	for _, args := range [][]string{
		{"alpha", "render-template", "basic", tmpl},
		{"alpha", "render-template", tmpl},
		{"alpha", "render-template", tmpl, "-o", "json"},
	} {
		r := f.run(t, args...)
		require.Equal(t, 0, r.Code, "%v: %s", args, r.ErrOut)
		assert.Equal(t, wantJSON, r.Out, "%v", args)
		assert.Empty(t, r.ErrOut, "no progress line off a terminal")
	}
	r := f.run(t, "alpha", "render-template", tmpl, "-o", "yaml")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Equal(t, writeCatalog(t, want, fbc.FormatYAML), r.Out)

	// stdin: no argument, "-", and a type alone.
	for _, args := range [][]string{{}, {"-"}, {"basic"}, {"basic", "-"}} {
		res := runStdin(t, f.basicTemplate(threeBundles...), append([]string{"alpha", "render-template", "--use-http"}, args...)...)
		require.Equal(t, 0, res.Code, "%v: %s", args, res.ErrOut)
		assert.Equal(t, wantJSON, res.Out, "%v", args)
	}
}

// runStdin runs opm with in as its standard input.
func runStdin(t *testing.T, in string, args ...string) cmdtest.Result {
	t.Helper()
	o := cmdtest.New(t)
	o.Configure = func(f *factory.Factory) { f.IO.In = strings.NewReader(in) }
	return o.Run(args...)
}

// TestRenderTemplateMigrateLevel: --migrate-level reaches each bundle's
// render, as opm render --migrate-level does.
func TestRenderTemplateMigrateLevel(t *testing.T) {
	t.Parallel()
	f := bundles(t)
	tmpl := writeFile(t, "basic.json", mustJSONTemplate(t, f.basicTemplate(threeBundles...)))
	r := f.run(t, "alpha", "render-template", "basic", tmpl, "--migrate-level", "bundle-object-to-csv-metadata")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Equal(t, writeCatalog(t, expectedBasic(t, f, "bundle-object-to-csv-metadata", threeBundles...), fbc.FormatJSON), r.Out)
	assert.Contains(t, r.Out, `"olm.csv.metadata"`)
	assert.NotContains(t, r.Out, `"olm.bundle.object"`)

	r = f.run(t, "alpha", "render-template", tmpl, "--migrate-level", "everything")
	assert.Equal(t, exit.UpstreamUsage, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "bundle-object-to-csv-metadata")
	assert.Empty(t, r.Out)
}

// mustJSONTemplate is a YAML template as JSON (a .json template is read as
// JSON).
func mustJSONTemplate(t *testing.T, y string) string {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	require.NoError(t, err)
	return string(j)
}

// TestRenderTemplateProgress: on a terminal, a progress line counts the
// bundles pulled, on stderr; stdout holds the catalog alone.
func TestRenderTemplateProgress(t *testing.T) {
	t.Parallel()
	f := bundles(t)
	tmpl := writeFile(t, "basic.yaml", f.basicTemplate(threeBundles...))
	o := cmdtest.New(t)
	r := o.RunTTY("alpha", "render-template", tmpl, "--use-http")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "3/3")
	assert.Equal(t, writeCatalog(t, expectedBasic(t, f, "", threeBundles...), fbc.FormatJSON), r.Out)
}

// TestRenderTemplateMermaid draws the rendered channels as upstream's
// mermaid writer does: bundles from the highest version down, edges,
// the deprecated bundle and the edge into a skipped bundle styled.
func TestRenderTemplateMermaid(t *testing.T) {
	t.Parallel()
	f := bundles(t)
	tmpl := writeFile(t, "basic.yaml", f.basicTemplate(threeBundles...))
	r := f.run(t, "alpha", "render-template", tmpl, "-o", "mermaid")
	require.Equal(t, 0, r.Code, r.ErrOut)
	want := `graph LR
  classDef deprecated fill:#E8960F
  classDef skipped stroke:#FF0000,stroke-width:4px
  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px
  %% package "example-operator"
  subgraph p1["example-operator"]
    %% channel "stable"
    subgraph c2["stable"]
      n3["example-operator.v0.3.0"]
      n4["example-operator.v0.1.0"]-- skip --> n3["example-operator.v0.3.0"]
      n5["example-operator.v0.2.0"]-- replace --> n3["example-operator.v0.3.0"]
      n5["example-operator.v0.2.0"]
      n4["example-operator.v0.1.0"]-- replace --> n5["example-operator.v0.2.0"]
      n4["example-operator.v0.1.0"]
    end
  end
class n4 deprecatedskipped
`
	assert.Equal(t, want, r.Out)
}

// TestRenderTemplateErrors: each problem is one error naming the file,
// line and field, exit status 1 (2 for usage), and nothing on stdout.
func TestRenderTemplateErrors(t *testing.T) {
	t.Parallel()
	f := bundles(t)
	good := f.basicTemplate(threeBundles...)
	missing := f.reg.Ref("example-operator-bundle:v9.9.9")
	cases := []struct {
		name, template string
		args           []string
		code           int
		want           []string
	}{
		{"unpullable image", strings.Replace(good, f.refs["example-operator.v0.2.0"], missing, 1), nil, exit.Failed,
			[]string{"t.yaml:20: entries[3].image: bundle image " + missing + ": cannot be pulled", "manifest unknown", "nothing was printed"}},
		{"unknown field", strings.Replace(good, "defaultChannel:", "defaultchannel:", 1), nil, exit.Failed,
			[]string{`t.yaml:5: entries[0].defaultchannel: unknown field "defaultchannel" (did you mean defaultChannel? field names are case-sensitive)`}},
		{"unknown top-level field", good + "extra: 1\n", nil, exit.Failed, []string{`t.yaml:32: extra: unknown field "extra"; the fields here are schema, entries`}},
		{"unknown field of a channel entry", strings.Replace(good, "replaces: example-operator.v0.1.0", "replace: example-operator.v0.1.0", 1), nil, exit.Failed,
			[]string{`t.yaml:13: entries[1].entries[1].replace: unknown field "replace"`}},
		{"bundle entry with properties", strings.Replace(good, "  - schema: olm.bundle\n", "  - schema: olm.bundle\n    properties: []\n", 1), nil, exit.Failed,
			[]string{"t.yaml:18: entries[2].properties: a basic template's olm.bundle entry gives only its image"}},
		{"bundle entry without image", strings.Replace(good, "    image: "+f.refs["example-operator.v0.1.0"]+"\n", "", 1), nil, exit.Failed,
			[]string{"t.yaml:17: entries[2].image: missing"}},
		{"YAML syntax", strings.Replace(good, "name: stable\n", "name: [stable\n", 1), nil, exit.Failed, []string{"t.yaml:", "not valid YAML or JSON"}},
		{"wrong type of field", "schema: olm.template.basic\nentries: 3\n", []string{"basic"}, exit.Failed,
			[]string{"t.yaml:2: entries: must be a list, not a number"}},
		{"schema of another type", strings.Replace(good, "olm.template.basic", "olm.template.substitutes", 1), []string{"basic"}, exit.Failed,
			[]string{`t.yaml:1: schema: "olm.template.substitutes" is the schema of a substitutes template, not of a basic template`}},
		{"unknown schema", strings.Replace(good, "olm.template.basic", "olm.template.fancy", 1), nil, exit.Failed,
			[]string{`t.yaml:1: schema: unknown template schema "olm.template.fancy"`}},
		{"no schema", "entries: []\n", nil, exit.Failed, []string{"t.yaml:1: schema: missing"}},
		{"two documents", good + "---\nschema: olm.template.basic\n", nil, exit.Failed, []string{"t.yaml:33: a template file holds one document"}},
		{"an entry without schema", strings.Replace(good, "  - schema: olm.package\n", "  - schemas: olm.package\n", 1), nil, exit.Failed, []string{"t.yaml:3: entries[0].schema: missing"}},
		{"unknown type", good, []string{"fancy"}, exit.UpstreamUsage, []string{`unknown template type "fancy"`}},
		{"bad output", good, []string{"-o", "table"}, exit.UpstreamUsage, []string{`invalid --output "table": use json, yaml or mermaid`}},
		{"index image as a bundle", strings.Replace(good, f.refs["example-operator.v0.2.0"], f.indexImage(t), 1), nil, exit.Failed,
			[]string{"t.yaml:20: entries[3].image: bundle image", "is an index image, not a bundle image"}},
		{"local layout as a bundle (issue 35)", strings.Replace(good, f.refs["example-operator.v0.2.0"], "oci:/var/tmp/layout:1", 1), nil, exit.Failed,
			[]string{"t.yaml:20: entries[3].image: bundle image oci:/var/tmp/layout:1", "the oci: transport reads this machine's files"}},
		{"directory as a bundle", strings.Replace(good, f.refs["example-operator.v0.2.0"], templatetest.ValidBundle(), 1), nil, exit.Failed,
			[]string{"t.yaml:20: entries[3].image", "is a directory here, but a template names bundle images"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tmpl := writeFile(t, "t.yaml", c.template)
			args := []string{"alpha", "render-template"}
			if len(c.args) > 0 && !strings.HasPrefix(c.args[0], "-") {
				args = append(args, c.args[0], tmpl)
				args = append(args, c.args[1:]...)
			} else {
				args = append(append(args, tmpl), c.args...)
			}
			r := f.run(t, args...)
			assert.Equal(t, c.code, r.Code, r.ErrOut)
			assert.Empty(t, r.Out, "nothing printed")
			for _, w := range c.want {
				assert.Contains(t, strings.ReplaceAll(r.ErrOut, tmpl, "t.yaml"), w)
			}
			assert.Equal(t, 1, strings.Count(r.ErrOut, "error:"), "one error: %s", r.ErrOut)
		})
	}
	// A missing file, and a directory as the file.
	r := f.run(t, "alpha", "render-template", "basic", filepath.Join(t.TempDir(), "none.yaml"))
	assert.Equal(t, exit.Failed, r.Code)
	assert.Contains(t, r.ErrOut, "none.yaml: no such file or directory")
}

// indexImage pushes an image with the FBC index label.
func (f *fixture) indexImage(t *testing.T) string {
	t.Helper()
	dir := templatetest.Version(t, "index-like", "0.1.0", "", "")
	ann := filepath.Join(dir, "metadata", "annotations.yaml")
	data, err := os.ReadFile(ann)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(ann, append(data, []byte("  operators.operatorframework.io.index.configs.v1: /configs\n")...), 0o644))
	return templatetest.Push(t, dir, f.reg.Ref("index-like:1"))
}

// TestRenderTemplateCorpus renders a basic template of the real etcd
// bundles (from ../shared/corpus, built into images by opm): each bundle
// blob is opm render's of its image.
func TestRenderTemplateCorpus(t *testing.T) {
	t.Parallel()
	shareddata.Require(t, "corpus", "real")
	f := bundles(t)
	var tmpl strings.Builder
	tmpl.WriteString("schema: olm.template.basic\nentries:\n- {schema: olm.package, name: etcd, defaultChannel: singlenamespace-alpha}\n")
	var names []string
	for _, v := range []string{"0.9.0", "0.9.2", "0.9.4"} {
		ref := templatetest.Push(t, shareddata.Path("corpus", "real", "etcd", v), f.reg.Ref("etcd-bundle:"+v))
		f.refs["etcd "+v] = ref
		f.dirs["etcd "+v] = shareddata.Path("corpus", "real", "etcd", v)
		names = append(names, "etcd "+v)
		fmt.Fprintf(&tmpl, "- {schema: olm.bundle, image: %q}\n", ref)
	}
	r := f.run(t, "alpha", "render-template", writeFile(t, "etcd.yaml", tmpl.String()))
	require.Equal(t, 0, r.Code, r.ErrOut)
	want := &fbc.Catalog{Packages: []fbc.Package{{Schema: "olm.package", Name: "etcd", DefaultChannel: "singlenamespace-alpha"}}}
	want.Merge(f.rendered(t, "", names...))
	assert.Equal(t, writeCatalog(t, want, fbc.FormatJSON), r.Out)
}

// TestRenderTemplateFlags: the flags of upstream HEAD's render-template.
func TestRenderTemplateFlags(t *testing.T) {
	t.Parallel()
	o, err := cmdtest.Parse(t, rendertemplate.NewCmd, "semver", "t.yaml", "-o", "mermaid", "--migrate-level", "bundle-object-to-csv-metadata", "--use-http")
	require.NoError(t, err)
	assert.Equal(t, "semver", o.Type)
	assert.Equal(t, "t.yaml", o.File)
	assert.Equal(t, "mermaid", o.Output)
	assert.Equal(t, "bundle-object-to-csv-metadata", o.MigrateLevel)
	assert.True(t, o.Image.UseHTTP)
	o, err = cmdtest.Parse(t, rendertemplate.NewCmd, "substitutes")
	require.NoError(t, err)
	assert.Equal(t, "substitutes", o.Type)
	assert.Equal(t, "", o.File)
	o, err = cmdtest.Parse(t, rendertemplate.NewCmd, "my.yaml")
	require.NoError(t, err)
	assert.Equal(t, "", o.Type)
	assert.Equal(t, "my.yaml", o.File)
	_, err = cmdtest.Parse(t, rendertemplate.NewCmd, "a", "b", "c")
	assert.Error(t, err)
}
