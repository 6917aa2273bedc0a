package template_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/template"
	"github.com/opmkit/opm/internal/fbc/template/basic"
	"github.com/opmkit/opm/internal/fbc/template/substitutes"
)

// TestDetect tells the type from the schema, in YAML and JSON.
func TestDetect(t *testing.T) {
	t.Parallel()
	for data, want := range map[string]string{
		"schema: olm.template.basic\n":                  "basic",
		"# a comment\nschema: olm.semver\nstable: {}\n": "semver",
		`{"schema": "olm.template.substitutes"}`:        "substitutes",
	} {
		got, err := template.Detect("t.yaml", []byte(data))
		require.NoError(t, err, data)
		assert.Equal(t, want, got)
	}
	for data, want := range map[string]string{
		"":                                "t.yaml: the template is empty",
		"schema: olm.fancy\n":             `t.yaml:1: schema: unknown template schema "olm.fancy"`,
		"entries: []\n":                   "t.yaml:1: schema: missing",
		"- a\n":                           "t.yaml:1: the template must be an object with a schema, not a list",
		"schema: [a\n":                    "t.yaml:",
		"a: 1\nschema: 3\n":               "t.yaml:2: schema: must be a string, not a number",
		"schema: olm.semver\n---\nx: 1\n": "t.yaml:3: a template file holds one document",
	} {
		_, err := template.Detect("t.yaml", []byte(data))
		require.Error(t, err, data)
		assert.Contains(t, err.Error(), want, data)
		var te *template.Error
		assert.True(t, errors.As(err, &te), "%T", err)
	}
}

// TestLines: errors point at the line of the field, in YAML and in JSON.
func TestLines(t *testing.T) {
	t.Parallel()
	y := "schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: p\n  defaultChannel: s\n  colour: red\n"
	_, err := basic.Parse("t.yaml", []byte(y))
	require.Error(t, err)
	assert.Equal(t, `t.yaml:6: entries[0].colour: unknown field "colour"; the fields here are schema, name, defaultChannel, icon, description, properties`, err.Error())

	j := "{\n  \"schema\": \"olm.template.basic\",\n  \"entries\": [\n    {\"schema\": \"olm.bundle\",\n     \"image\": 7}\n  ]\n}\n"
	_, err = basic.Parse("t.json", []byte(j))
	require.Error(t, err)
	assert.Equal(t, "t.json:5: entries[0].image: must be a string, not a number", err.Error())
}

// TestBasicRender: entries kept (keys sorted), bundle entries replaced by
// what RenderBundle gives, every failing image reported.
func TestBasicRender(t *testing.T) {
	t.Parallel()
	data := []byte("schema: olm.template.basic\nentries:\n- {schema: olm.package, name: p, defaultChannel: s}\n- {schema: olm.bundle, image: img/a:1}\n- {schema: olm.bundle, image: img/b:1}\n- {schema: my.schema, package: p, z: 1, a: 2}\n")
	render := func(_ context.Context, image string) (*fbc.Bundle, error) {
		if image == "img/b:1" {
			return nil, fmt.Errorf("no such image")
		}
		return &fbc.Bundle{Schema: "olm.bundle", Name: "p.v1", Package: "p", Image: image}, nil
	}
	_, err := basic.Render(context.Background(), data, basic.Options{RenderBundle: render, Source: "t.yaml"})
	require.Error(t, err)
	assert.Equal(t, "t.yaml:5: entries[2].image: bundle image img/b:1: no such image", err.Error())

	ok := func(_ context.Context, image string) (*fbc.Bundle, error) {
		return &fbc.Bundle{Schema: "olm.bundle", Name: "p." + image, Package: "p", Image: image}, nil
	}
	c, err := basic.Render(context.Background(), data, basic.Options{RenderBundle: ok, Source: "t.yaml"})
	require.NoError(t, err)
	require.Len(t, c.Bundles, 2)
	assert.Equal(t, fbc.Position{File: "t.yaml", Line: 4}, c.Bundles[0].Pos)
	require.Len(t, c.Others, 1)
	assert.Equal(t, `{"a":2,"package":"p","schema":"my.schema","z":1}`, string(c.Others[0].Blob))
}

// TestSubstitutesParse refuses what upstream's decoding would let
// through silently.
func TestSubstitutesParse(t *testing.T) {
	t.Parallel()
	_, err := substitutes.Parse("s.yaml", []byte("schema: olm.template.substitutes\nentries: []\nsubstitutions:\n- name: a\n  base: b\n  extra: c\n"))
	require.Error(t, err)
	assert.Equal(t, `s.yaml:6: substitutions[0].extra: unknown field "extra"; the fields here are name, base`, err.Error())
	tm, err := substitutes.Parse("s.yaml", []byte("schema: olm.template.substitutes\nentries: []\nsubstitutions: [{name: img/a:2, base: a.v1}]\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"img/a:2"}, tm.Images())
}

// FuzzParse feeds arbitrary bytes to the template readers: they must not
// panic, every error must be a *template.Error, and a basic template that
// parses renders (with a stand-in renderer) to a catalog that writes and
// loads back. Seeds are in testdata/fuzz/FuzzParse as well as below.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"schema: olm.template.basic\nentries:\n- {schema: olm.package, name: p, defaultChannel: s}\n- {schema: olm.bundle, image: a/b:1}\n",
		`{"schema":"olm.template.substitutes","entries":[{"schema":"olm.channel","name":"s","package":"p","entries":[{"name":"a"}]}],"substitutions":[{"name":"x/y:1","base":"a"}]}`,
		"schema: olm.semver\nstable:\n  bundles:\n  - image: a/b:1\n",
		"schema: olm.template.basic\nentries: [1, [], null, {schema: 3}]\n",
		"a: &x [*x]\n", "schema: [", "---\n---\n", "\xff\xfe",
	} {
		f.Add("t.yaml", []byte(s))
		f.Add("t.json", []byte(s))
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		if name != "t.json" {
			name = "t.yaml"
		}
		isTemplateError := func(err error) {
			var te *template.Error
			if err != nil && !errors.As(err, &te) {
				t.Fatalf("error of type %T, want *template.Error: %v", err, err)
			}
		}
		_, err := template.Detect(name, data)
		isTemplateError(err)
		_, err = substitutes.Parse(name, data)
		isTemplateError(err)
		bt, err := basic.Parse(name, data)
		isTemplateError(err)
		if err != nil {
			return
		}
		c, err := bt.Render(context.Background(), func(_ context.Context, image string) (*fbc.Bundle, error) {
			return &fbc.Bundle{Schema: "olm.bundle", Name: "b", Package: "p", Image: image}, nil
		})
		if err != nil {
			t.Fatalf("a parsed template failed to render: %v", err)
		}
		if len(c.Bundles) != len(bt.Images()) {
			t.Fatalf("%d bundles for %d images", len(c.Bundles), len(bt.Images()))
		}
	})
}

// TestBasicRenderRefusesDuplicateBundles: two entries whose images hold
// the same bundle (the same image twice, or two tags of one bundle) gave
// a catalog with the bundle twice and exit 0; it is refused, naming both
// entries.
func TestBasicRenderRefusesDuplicateBundles(t *testing.T) {
	t.Parallel()
	data := []byte("schema: olm.template.basic\nentries:\n- {schema: olm.package, name: p, defaultChannel: s}\n- {schema: olm.bundle, image: img/a:1}\n- {schema: olm.bundle, image: img/a:latest}\n")
	render := func(_ context.Context, image string) (*fbc.Bundle, error) {
		return &fbc.Bundle{Schema: "olm.bundle", Name: "p.v1", Package: "p", Image: image}, nil
	}
	_, err := basic.Render(context.Background(), data, basic.Options{RenderBundle: render, Source: "t.yaml"})
	require.Error(t, err)
	assert.Equal(t, "t.yaml:5: entries[2].image: bundle image img/a:latest: holds bundle p.v1 of package p, which line 4 (img/a:1) gives already; keep one of the entries", err.Error())
}

// TestDeepTemplateRefused: a template nested deeper than catalogs may be
// (a property value 9,990 lists deep, 20 KB) is refused while parsing,
// naming the line and the field, in YAML and JSON; render-template wrote
// such a value out indented, hundreds of MB. 100 levels pass.
func TestDeepTemplateRefused(t *testing.T) {
	t.Parallel()
	tmpl := func(depth int) string {
		return "{\"schema\": \"olm.template.basic\", \"entries\": [\n" +
			"{\"schema\": \"olm.package\", \"name\": \"p\", \"properties\": [\n" +
			"{\"type\": \"example.com/deep\", \"value\":\n" + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "}]}]}\n"
	}
	_, err := basic.Parse("t.json", []byte(tmpl(9990)))
	assert.ErrorContains(t, err, "t.json:4: entries[0].properties[0].value[0][0]")
	assert.ErrorContains(t, err, "nested more than 100 deep")
	for _, name := range []string{"t.json", "t.yaml"} {
		_, err := basic.Parse(name, []byte(tmpl(150)))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), name+":4: entries[0].properties[0].value[0][0][0][0][0][0][0][0][0][0]", name)
		assert.Contains(t, err.Error(), "nested more than 100 deep", name)
		// The template, entries, the entry, properties, the property: 5.
		_, err = basic.Parse(name, []byte(tmpl(95)))
		assert.NoError(t, err, name)
		_, err = basic.Parse(name, []byte(tmpl(96)))
		assert.ErrorContains(t, err, "more than 100 deep", name)
	}
}
