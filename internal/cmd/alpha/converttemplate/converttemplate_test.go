package converttemplate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/alpha/converttemplate"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/fbc/template/templatetest"
	"github.com/opmkit/opm/internal/registrytest"
)

// A catalog with what conversion must carry through: HTML characters,
// numbers, key order, a deprecation and a blob of another schema.
const catalogJSON = `{
    "schema": "olm.package",
    "name": "op",
    "defaultChannel": "stable",
    "description": "<b>ops</b> & more"
}
{
    "schema": "olm.channel",
    "name": "stable",
    "package": "op",
    "entries": [
        {"name": "op.v1.0.0"},
        {"name": "op.v1.1.0", "replaces": "op.v1.0.0"}
    ]
}
{
    "schema": "olm.bundle",
    "name": "op.v1.0.0",
    "package": "op",
    "image": "quay.io/me/op-bundle:v1.0.0",
    "properties": [{"type": "olm.package", "value": {"packageName": "op", "version": "1.0.0"}}]
}
{
    "schema": "olm.bundle",
    "name": "op.v1.1.0",
    "package": "op",
    "image": "quay.io/me/op-bundle:v1.1.0",
    "properties": [{"type": "olm.package", "value": {"packageName": "op", "version": "1.1.0"}}]
}
{
    "schema": "olm.deprecations",
    "package": "op",
    "entries": [{"reference": {"schema": "olm.bundle", "name": "op.v1.0.0"}, "message": "old"}]
}
{
    "schema": "example.com/notes",
    "package": "op",
    "size": 1.50,
    "count": 3
}
`

// wantBasic is upstream's conversion of catalogJSON: keys sorted, HTML
// characters escaped, bundles cut to schema and image, indented by four
// spaces, and a blank line after.
const wantBasic = `{
    "schema": "olm.template.basic",
    "entries": [
        {
            "defaultChannel": "stable",
            "description": "\u003cb\u003eops\u003c/b\u003e \u0026 more",
            "name": "op",
            "schema": "olm.package"
        },
        {
            "entries": [
                {
                    "name": "op.v1.0.0"
                },
                {
                    "name": "op.v1.1.0",
                    "replaces": "op.v1.0.0"
                }
            ],
            "name": "stable",
            "package": "op",
            "schema": "olm.channel"
        },
        {
            "schema": "olm.bundle",
            "image": "quay.io/me/op-bundle:v1.0.0"
        },
        {
            "schema": "olm.bundle",
            "image": "quay.io/me/op-bundle:v1.1.0"
        },
        {
            "entries": [
                {
                    "message": "old",
                    "reference": {
                        "name": "op.v1.0.0",
                        "schema": "olm.bundle"
                    }
                }
            ],
            "package": "op",
            "schema": "olm.deprecations"
        },
        {
            "count": 3,
            "package": "op",
            "schema": "example.com/notes",
            "size": 1.5
        }
    ]
}
`

const wantBasicYAML = `---
entries:
- defaultChannel: stable
  description: <b>ops</b> & more
  name: op
  schema: olm.package
- entries:
  - name: op.v1.0.0
  - name: op.v1.1.0
    replaces: op.v1.0.0
  name: stable
  package: op
  schema: olm.channel
- image: quay.io/me/op-bundle:v1.0.0
  schema: olm.bundle
- image: quay.io/me/op-bundle:v1.1.0
  schema: olm.bundle
- entries:
  - message: old
    reference:
      name: op.v1.0.0
      schema: olm.bundle
  package: op
  schema: olm.deprecations
- count: 3
  package: op
  schema: example.com/notes
  size: 1.5
schema: olm.template.basic

`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func runStdin(t *testing.T, in string, args ...string) cmdtest.Result {
	t.Helper()
	o := cmdtest.New(t)
	o.Configure = func(f *factory.Factory) { f.IO.In = strings.NewReader(in) }
	return o.Run(args...)
}

// TestConvertBasic: a catalog file (JSON, or YAML whatever its name),
// stdin, and -o yaml, each converted as upstream prints it.
func TestConvertBasic(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "catalog.json", catalogJSON)
	r := cmdtest.Run(t, "alpha", "convert-template", "basic", file)
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Equal(t, wantBasic, r.Out)
	assert.Empty(t, r.ErrOut)

	r = cmdtest.Run(t, "alpha", "convert-template", "basic", file, "-o", "yaml")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Equal(t, wantBasicYAML, r.Out)

	for _, args := range [][]string{{}, {"-"}} {
		r := runStdin(t, catalogJSON, append([]string{"alpha", "convert-template", "basic"}, args...)...)
		require.Equal(t, 0, r.Code, r.ErrOut)
		assert.Equal(t, wantBasic, r.Out)
	}
	// The YAML form of the same catalog (the YAML of render -o yaml),
	// under a name ending in .json: content decides.
	y := writeFile(t, "catalog.json", yamlCatalog(t, file))
	r = cmdtest.Run(t, "alpha", "convert-template", "basic", y)
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Equal(t, wantBasic, r.Out)
}

// yamlCatalog is the catalog file as opm render -o yaml prints it.
func yamlCatalog(t *testing.T, file string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "c.json"), []byte(catalogJSON), 0o644))
	r := cmdtest.Run(t, "render", dir, "-o", "yaml")
	require.Equal(t, 0, r.Code, r.ErrOut)
	// render sorts the blobs; put them back in the file's order.
	docs := strings.Split(strings.TrimPrefix(r.Out, "---\n"), "---\n")
	require.Len(t, docs, 6)
	order := []int{0, 1, 2, 3, 5, 4} // render writes other schemas before olm.deprecations
	var b strings.Builder
	for _, i := range order {
		b.WriteString("---\n" + docs[i])
	}
	return b.String()
}

// TestConvertSubstitutes keeps every blob whole and adds an empty list of
// substitutions.
func TestConvertSubstitutes(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "catalog.json", catalogJSON)
	r := cmdtest.Run(t, "alpha", "convert-template", "substitutes", file)
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.True(t, strings.HasPrefix(r.Out, "{\n    \"schema\": \"olm.template.substitutes\",\n    \"entries\": [\n"), r.Out)
	assert.True(t, strings.HasSuffix(r.Out, "    ],\n    \"substitutions\": []\n}\n"), r.Out)
	assert.Contains(t, r.Out, `"properties": [`)
	assert.Contains(t, r.Out, `"image": "quay.io/me/op-bundle:v1.1.0",`+"\n"+`            "name": "op.v1.1.0",`)
	r = cmdtest.Run(t, "alpha", "convert-template", "substitutes", file, "-o", "yaml")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "\nsubstitutions: []\n\n")
}

// TestConvertDirectory: a catalog directory (opm migrate's output) is
// converted in opm render's order.
func TestConvertDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "op"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "op", "catalog.json"), []byte(catalogJSON), 0o644))
	r := cmdtest.Run(t, "alpha", "convert-template", "basic", dir)
	require.Equal(t, 0, r.Code, r.ErrOut)
	// render order: package, channels, bundles, other schemas, deprecations.
	i := strings.Index(r.Out, `"schema": "example.com/notes"`)
	j := strings.Index(r.Out, `"schema": "olm.deprecations"`)
	assert.True(t, i > 0 && j > i, r.Out)
	assert.Equal(t, len(wantBasic), len(r.Out))
}

// TestConvertErrors: a catalog that does not load is refused with its file
// and line; nothing is printed.
func TestConvertErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, content string
		args          []string
		code          int
		want          string
	}{
		{"JSON syntax", "{\"schema\": \"olm.package\",\n \"name\": }\n", nil, exit.Failed, "c.json:2: JSON syntax error"},
		{"no schema", "{\"name\": \"x\"}\n", nil, exit.Failed, "c.json:1: the blob has no schema"},
		{"YAML syntax", "schema: olm.package\nname: [x\n", nil, exit.Failed, "c.json:"},
		{"wrong field type", "{\"schema\": \"olm.channel\", \"name\": \"s\", \"package\": \"p\", \"entries\": 3}\n", nil, exit.Failed, "c.json:1: olm.channel blob: field entries must be"},
		{"bad output", catalogJSON, []string{"-o", "toml"}, exit.UpstreamUsage, `invalid --output "toml": use json or yaml`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			file := writeFile(t, "c.json", c.content)
			r := cmdtest.Run(t, append([]string{"alpha", "convert-template", "basic", file}, c.args...)...)
			assert.Equal(t, c.code, r.Code, r.ErrOut)
			assert.Empty(t, r.Out)
			assert.Contains(t, strings.ReplaceAll(r.ErrOut, file, "c.json"), c.want)
		})
	}
	r := cmdtest.Run(t, "alpha", "convert-template", "basic", filepath.Join(t.TempDir(), "none.json"))
	assert.Equal(t, exit.Failed, r.Code)
	assert.Contains(t, r.ErrOut, "none.json: no such file or directory")
	r = cmdtest.Run(t, "alpha", "convert-template", "basic", "a", "b")
	assert.Equal(t, exit.UpstreamUsage, r.Code, r.ErrOut)
	r = cmdtest.Run(t, "alpha", "convert-template", "fancy")
	assert.Equal(t, exit.UpstreamUsage, r.Code, r.ErrOut)
}

// TestConvertRoundTrip: a catalog rendered from a basic template (bundle
// images in a real registry), converted back and rendered again, is the
// same catalog byte for byte, in JSON and YAML templates.
func TestConvertRoundTrip(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(t)
	var refs []string
	for _, v := range []struct{ name, version, replaces string }{
		{"example-operator.v0.1.0", "0.1.0", ""},
		{"example-operator.v0.2.0", "0.2.0", "example-operator.v0.1.0"},
	} {
		refs = append(refs, templatetest.Push(t, templatetest.Version(t, v.name, v.version, "", v.replaces), reg.Ref("op-bundle:"+v.version)))
	}
	tmpl := "schema: olm.template.basic\nentries:\n" +
		"- {schema: olm.package, name: example-operator, defaultChannel: stable}\n" +
		"- {schema: olm.channel, package: example-operator, name: stable, entries: [{name: example-operator.v0.1.0}, {name: example-operator.v0.2.0, replaces: example-operator.v0.1.0}]}\n" +
		"- {schema: olm.bundle, image: " + refs[0] + "}\n- {schema: olm.bundle, image: " + refs[1] + "}\n"
	o := cmdtest.New(t)
	r := o.Run("alpha", "render-template", writeFile(t, "t.yaml", tmpl), "--use-http")
	require.Equal(t, 0, r.Code, r.ErrOut)
	catalog := r.Out
	for _, format := range []string{"json", "yaml"} {
		r = o.Run("alpha", "convert-template", "basic", writeFile(t, "catalog.json", catalog), "-o", format)
		require.Equal(t, 0, r.Code, r.ErrOut)
		r = o.Run("alpha", "render-template", writeFile(t, "back."+format, r.Out), "--use-http")
		require.Equal(t, 0, r.Code, r.ErrOut)
		assert.Equal(t, catalog, r.Out, format)
	}
}

// TestConvertFlags: -o/--output on both subcommands, as upstream HEAD, and
// --max-input-size (default 1GiB).
func TestConvertFlags(t *testing.T) {
	t.Parallel()
	o, err := cmdtest.Parse(t, converttemplate.NewBasicCmd, "-o", "yaml", "c.json")
	require.NoError(t, err)
	assert.Equal(t, converttemplate.Options{Type: "basic", Input: "c.json", Output: "yaml", MaxInput: 1 << 30}, *o)
	o, err = cmdtest.Parse(t, converttemplate.NewSubstitutesCmd, "--output", "json", "--max-input-size", "0")
	require.NoError(t, err)
	assert.Equal(t, converttemplate.Options{Type: "substitutes", Output: "json", MaxInput: -1}, *o, "0 is no limit")
}
