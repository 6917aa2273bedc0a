package rendertemplate_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/fbc"
)

// substitutesTemplate is a substitutes template whose entries are the
// package, the stable channel and the rendered bundles of threeBundles,
// followed by subs (YAML list items).
func (f *fixture) substitutesTemplate(t *testing.T, subs string) (string, *fbc.Catalog) {
	t.Helper()
	entries := &fbc.Catalog{}
	require.NoError(t, entries.LoadFile("blobs.json", []byte(`{"schema":"olm.package","name":"example-operator","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"example-operator","entries":[{"name":"example-operator.v0.1.0"},{"name":"example-operator.v0.2.0","replaces":"example-operator.v0.1.0"},{"name":"example-operator.v0.3.0","replaces":"example-operator.v0.2.0","skips":["example-operator.v0.1.0"]}]}
`)))
	entries.Merge(f.rendered(t, "", threeBundles...))
	var b strings.Builder
	b.WriteString("schema: olm.template.substitutes\nentries:\n")
	for _, blob := range blobsOf(t, entries) {
		fmt.Fprintf(&b, "- %s\n", blob)
	}
	b.WriteString("substitutions:\n" + subs)
	return b.String(), entries
}

// blobsOf is each blob of c as one line of JSON (valid YAML flow style).
func blobsOf(t *testing.T, c *fbc.Catalog) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(writeCatalog(t, c, fbc.FormatJSON)), "\n}\n") {
		var v any
		require.NoError(t, json.Unmarshal([]byte(strings.TrimSuffix(l, "}")+"}"), &v), l)
		j, err := json.Marshal(v)
		require.NoError(t, err)
		out = append(out, string(j))
	}
	return out
}

// TestRenderTemplateSubstitutes applies a substitution as upstream does:
// the substitute takes the base's edges plus a skip of the base, the base
// keeps none, and what replaced the base replaces the substitute and
// skips the base; the substitute's bundle is added.
func TestRenderTemplateSubstitutes(t *testing.T) {
	t.Parallel()
	f := bundles(t)
	sub := f.refs["example-operator-v0.2.0-1"]
	tmpl, entries := f.substitutesTemplate(t, fmt.Sprintf("- name: %s\n  base: example-operator.v0.2.0\n", sub))
	file := writeFile(t, "subs.yaml", tmpl)

	want := &fbc.Catalog{Packages: entries.Packages, Bundles: entries.Bundles}
	want.Channels = []fbc.Channel{{Schema: "olm.channel", Name: "stable", Package: "example-operator", Entries: []fbc.ChannelEntry{
		{Name: "example-operator.v0.1.0"},
		{Name: "example-operator.v0.2.0"},
		{Name: "example-operator.v0.3.0", Replaces: "example-operator-v0.2.0-1", Skips: []string{"example-operator.v0.1.0", "example-operator.v0.2.0"}},
		{Name: "example-operator-v0.2.0-1", Replaces: "example-operator.v0.1.0", Skips: []string{"example-operator.v0.2.0"}},
	}}}
	want.Merge(f.rendered(t, "", "example-operator-v0.2.0-1"))
	for _, args := range [][]string{{"substitutes", file}, {file}} {
		r := f.run(t, append([]string{"alpha", "render-template"}, args...)...)
		require.Equal(t, 0, r.Code, r.ErrOut)
		assert.Equal(t, writeCatalog(t, want, fbc.FormatJSON), r.Out)
	}
	// The result is a valid catalog.
	r := f.run(t, "alpha", "render-template", file)
	out := &fbc.Catalog{}
	require.NoError(t, out.LoadFile("out.json", []byte(r.Out)))
	assert.Empty(t, fbc.Validate(out))
}

// TestRenderTemplateSubstitutesErrors: upstream's checks, each an error
// naming the substitution at fault; nothing printed.
func TestRenderTemplateSubstitutesErrors(t *testing.T) {
	t.Parallel()
	f := bundles(t)
	sub := f.refs["example-operator-v0.2.0-1"]
	old := f.refs["example-operator.v0.1.0"]
	cases := []struct{ name, subs, want string }{
		{"base used twice", fmt.Sprintf("- {name: %s, base: example-operator.v0.2.0}\n- {name: %s, base: example-operator.v0.2.0}\n", sub, old),
			"substitutions[1].base: example-operator.v0.2.0 is already substituted"},
		{"image for two bases", fmt.Sprintf("- {name: %s, base: example-operator.v0.2.0}\n- {name: %s, base: example-operator.v0.1.0}\n", sub, sub),
			"substitutions[1].name: " + sub + " already substitutes for example-operator.v0.2.0"},
		{"base not in the catalog", fmt.Sprintf("- {name: %s, base: example-operator.v0.9.0}\n", sub),
			`substitutions[0].base: no bundle "example-operator.v0.9.0" among the entries`},
		{"not above the base", fmt.Sprintf("- {name: %s, base: example-operator.v0.2.0}\n", old),
			"substitutions[0]: the substitute " + old + " (example-operator.v0.1.0, version 0.1.0) is not above the base example-operator.v0.2.0"},
		{"name and base alike", "- {name: example-operator.v0.2.0, base: example-operator.v0.2.0}\n", "substitutions[0]: name and base are both"},
		{"no name", "- {base: example-operator.v0.2.0}\n", "substitutions[0].name: missing"},
		{"no base", fmt.Sprintf("- {name: %s}\n", sub), "substitutions[0].base: missing"},
		{"unknown field", fmt.Sprintf("- {name: %s, bases: example-operator.v0.2.0}\n", sub), `substitutions[0].bases: unknown field "bases"; the fields here are name, base`},
		{"unpullable", fmt.Sprintf("- {name: %s, base: example-operator.v0.2.0}\n", f.reg.Ref("nothing:1")), "substitutions[0].name: bundle image " + f.reg.Ref("nothing:1") + ": cannot be pulled"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmpl, _ := f.substitutesTemplate(t, c.subs)
			file := writeFile(t, "s.yaml", tmpl)
			r := f.run(t, "alpha", "render-template", file)
			assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
			assert.Empty(t, r.Out)
			assert.Contains(t, r.ErrOut, file+":")
			assert.Contains(t, r.ErrOut, c.want)
		})
	}
	// Entries that are not a valid catalog are refused before any pull.
	tmpl, _ := f.substitutesTemplate(t, fmt.Sprintf("- {name: %s, base: example-operator.v0.2.0}\n", sub))
	tmpl = strings.Replace(tmpl, `"defaultChannel":"stable"`, `"defaultChannel":"fast"`, 1)
	r := f.run(t, "alpha", "render-template", writeFile(t, "s.yaml", tmpl))
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "entries: the entries are not a valid catalog")
	assert.Contains(t, r.ErrOut, "fast")
}
