package olmv1

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/shareddata"
)

// fixture: package a has a head a.v3 (csv-metadata, AllNamespaces), a.v2
// owning an API service in OwnNamespace only, and a.v1 declaring a
// dependency; package b's bundle has properties only.
const fixture = `{"schema":"olm.package","name":"a","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"a","entries":[{"name":"a.v1"},{"name":"a.v2","replaces":"a.v1"},{"name":"a.v3","replaces":"a.v2"}]}
{"schema":"olm.bundle","name":"a.v1","package":"a","image":"example.invalid/a:1","properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.0.0"}},{"type":"olm.package.required","value":{"packageName":"x","versionRange":">=1.0.0"}},{"type":"olm.csv.metadata","value":{"installModes":[{"type":"AllNamespaces","supported":true}]}}]}
{"schema":"olm.bundle","name":"a.v2","package":"a","image":"example.invalid/a:2","properties":[{"type":"olm.package","value":{"packageName":"a","version":"2.0.0"}},{"type":"olm.csv.metadata","value":{"installModes":[{"type":"OwnNamespace","supported":true},{"type":"AllNamespaces","supported":false}],"apiServiceDefinitions":{"owned":[{"name":"v1.api.example.com"}]}}}]}
{"schema":"olm.bundle","name":"a.v3","package":"a","image":"example.invalid/a:3","properties":[{"type":"olm.package","value":{"packageName":"a","version":"3.0.0"}},{"type":"olm.csv.metadata","value":{"installModes":[{"type":"AllNamespaces","supported":true}]}}]}
{"schema":"olm.package","name":"b","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"b","entries":[{"name":"b.v1"}]}
{"schema":"olm.bundle","name":"b.v1","package":"b","image":"example.invalid/b:1","properties":[{"type":"olm.package","value":{"packageName":"b","version":"1.0.0"}}]}
`

func load(t *testing.T, s string) *fbc.Catalog {
	t.Helper()
	c := &fbc.Catalog{}
	require.NoError(t, c.LoadFile("catalog.json", []byte(s)))
	return c
}

func reasonRules(v Verdict, severity string) []string {
	var out []string
	for _, r := range v.Reasons {
		if r.Severity == severity {
			out = append(out, r.Rule)
		}
	}
	return out
}

// TestJudgeFromCatalog: what the catalog's properties and csv-metadata
// say, bundle by bundle, and what they cannot say.
func TestJudgeFromCatalog(t *testing.T) {
	t.Parallel()
	c := load(t, fixture)
	vs, err := Judge(context.Background(), c, Options{})
	require.NoError(t, err)
	require.Len(t, vs, 4)
	by := map[string]Verdict{}
	for _, v := range vs {
		by[v.Name] = v
	}
	assert.Equal(t, []string{"a.v1", "a.v2", "a.v3", "b.v1"}, []string{vs[0].Name, vs[1].Name, vs[2].Name, vs[3].Name}, "by package, then name")

	v1 := by["a.v1"]
	assert.False(t, v1.Installable)
	assert.Equal(t, []string{"olmv1-dependencies"}, reasonRules(v1, "error"))
	assert.Equal(t, "1.0.0", v1.Version)
	assert.Equal(t, []string{"stable"}, v1.Channels)

	v2 := by["a.v2"]
	assert.False(t, v2.Installable)
	assert.ElementsMatch(t, []string{"olmv1-all-namespaces", "olmv1-apiservices"}, reasonRules(v2, "error"))
	assert.Equal(t, FromCSVMetadata, v2.From)

	v3 := by["a.v3"]
	assert.True(t, v3.Installable, "%+v", v3)
	assert.False(t, v3.Complete, "csv-metadata says nothing of webhooks")
	assert.Equal(t, []string{"olmv1-webhooks"}, reasonRules(v3, "unknown"))

	b1 := by["b.v1"]
	assert.Equal(t, FromProperties, b1.From)
	assert.True(t, b1.Installable, "nothing known stops it")
	assert.False(t, b1.Complete)

	only, err := Judge(context.Background(), c, Options{Package: "b"})
	require.NoError(t, err)
	require.Len(t, only, 1)
	_, err = Judge(context.Background(), c, Options{Package: "nope"})
	assert.ErrorContains(t, err, `package "nope" not found (the catalog has a, b)`)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Judge(ctx, c, Options{})
	assert.ErrorIs(t, err, context.Canceled)
}

// TestPackages: a package's line: its default channel's head, whether
// that is installable, and the bundles known installable, the yes? ones
// counted apart.
func TestPackages(t *testing.T) {
	t.Parallel()
	c := load(t, fixture)
	vs, err := Judge(context.Background(), c, Options{})
	require.NoError(t, err)
	rows := Packages(c, vs)
	require.Len(t, rows, 2)
	a := rows[0]
	assert.Equal(t, "a", a.Name)
	assert.Equal(t, "a.v3", a.Head)
	assert.True(t, a.HeadInstallable)
	assert.False(t, a.HeadComplete)
	assert.Equal(t, 3, a.Bundles)
	assert.Equal(t, 0, a.Installable)
	assert.Equal(t, 1, a.Unknown)
	assert.False(t, a.Complete)

	var tbl strings.Builder
	require.NoError(t, WritePackageTable(&tbl, rows))
	lines := strings.Split(strings.TrimSpace(tbl.String()), "\n")
	require.Len(t, lines, 3)
	assert.Regexp(t, `^a +stable +a\.v3 +yes\? +0/3 \(1 yes\?\)$`, lines[1])
	assert.Regexp(t, `^b +stable +b\.v1 +yes\? +0/1 \(1 yes\?\)$`, lines[2])

	tbl.Reset()
	require.NoError(t, WriteTable(&tbl, vs))
	assert.Contains(t, tbl.String(), "a.v2")
	assert.Regexp(t, `(?m)^a +a\.v2 +2\.0\.0 +no +error: `, tbl.String())
	assert.Regexp(t, `(?m)^a +a\.v3 +3\.0\.0 +yes\? +unknown: `, tbl.String())

	doc, err := json.Marshal(rows[0])
	require.NoError(t, err)
	assert.Contains(t, string(doc), `"installable":0,"installableUnknown":1`)
}

// TestJudgeManifestsAndPull: a real bundle's manifests in the catalog
// (olm.bundle.object) are checked as operator-controller checks them,
// completely; a csv-metadata entry with Pull reads the image instead; a
// pull that fails is an error naming the bundle; a referenced manifest is
// refused.
func TestJudgeManifestsAndPull(t *testing.T) {
	t.Parallel()
	dir := shareddata.Require(t, "corpus", "real", "marin3r", "0.13.1")
	b, err := bundle.LoadDir(dir)
	require.NoError(t, err)
	blob, err := fbc.RenderBundle(b, "quay.io/3scale/marin3r-bundle:v0.13.1", fbc.RenderOptions{})
	require.NoError(t, err)
	c := &fbc.Catalog{
		Packages: []fbc.Package{{Schema: fbc.SchemaPackage, Name: blob.Package, DefaultChannel: "stable"}},
		Channels: []fbc.Channel{{Schema: fbc.SchemaChannel, Package: blob.Package, Name: "stable", Entries: []fbc.ChannelEntry{{Name: blob.Name}}}},
		Bundles:  []fbc.Bundle{*blob},
	}
	vs, err := Judge(context.Background(), c, Options{})
	require.NoError(t, err)
	require.Len(t, vs, 1)
	v := vs[0]
	assert.Equal(t, FromBundleObjects, v.From)
	assert.True(t, v.Complete)
	assert.True(t, v.Installable, "%+v", v)
	assert.Contains(t, reasonRules(v, "warning"), "olmv1-webhooks", "marin3r has webhooks")

	// The same bundle with csv-metadata only, and Pull.
	meta := *blob
	meta.Properties = nil
	for _, p := range blob.Properties {
		if p.Type != fbc.PropertyBundleObject {
			meta.Properties = append(meta.Properties, p)
		}
	}
	meta.Properties = append(meta.Properties, fbc.Property{Type: fbc.PropertyCSVMetadata, Value: json.RawMessage(`{"installModes":[{"type":"AllNamespaces","supported":true}]}`)})
	c.Bundles = []fbc.Bundle{meta}
	pulled := 0
	vs, err = Judge(context.Background(), c, Options{Pull: func(_ context.Context, image string) (*bundle.Bundle, error) {
		pulled++
		assert.Equal(t, blob.Image, image)
		return b, nil
	}})
	require.NoError(t, err)
	assert.Equal(t, 1, pulled)
	assert.Equal(t, FromImage, vs[0].From)
	assert.True(t, vs[0].Complete)
	assert.Contains(t, reasonRules(vs[0], "warning"), "olmv1-webhooks")

	_, err = Judge(context.Background(), c, Options{Pull: func(context.Context, string) (*bundle.Bundle, error) {
		return nil, errors.New("registry down")
	}})
	assert.ErrorContains(t, err, "bundle "+blob.Name+": pull "+blob.Image+": registry down")

	ref := meta
	ref.Properties = append(append([]fbc.Property(nil), meta.Properties...), fbc.Property{Type: fbc.PropertyBundleObject, Value: json.RawMessage(`{"ref":"objects/csv.yaml"}`)})
	c.Bundles = []fbc.Bundle{ref}
	_, err = Judge(context.Background(), c, Options{})
	assert.ErrorContains(t, err, "a reference to objects/csv.yaml instead of data")
}
