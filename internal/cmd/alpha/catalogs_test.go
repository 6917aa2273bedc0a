package alpha_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/catalogtest"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/internal/shareddata"
)

const deprecatedDir = "testdata/deprecated"

// TestListAndGraphOfCatalogDir: alpha list and render-graph read a
// file-based catalog directory, with its deprecations styled.
func TestListAndGraphOfCatalogDir(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	r := o.Run("alpha", "list", "packages", deprecatedDir)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Equal(t, "NAME  DISPLAY NAME  DEFAULT CHANNEL\np                   stable\n", r.Out)
	r = o.Run("alpha", "list", "channels", deprecatedDir, "p")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Equal(t, "PACKAGE  CHANNEL  HEAD\np        old      p.v1.0.0\np        stable   p.v1.1.0\n", r.Out)
	r = o.Run("alpha", "list", "bundles", deprecatedDir)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "p        stable   p.v1.1.0  p.v1.0.0  p.v1.0.1              r/p:1.1.0\n")
	r = o.Run("alpha", "list", "bundles", deprecatedDir, "nope")
	assert.Equal(t, exit.Failed, r.Code)
	assert.Contains(t, r.ErrOut, `package "nope" not found`)

	r = o.Run("alpha", "render-graph", deprecatedDir)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	// Ids are generated: p1 the package, c2 channel old, n5 and n6 the
	// deprecated bundles of stable.
	assert.Contains(t, r.Out, "style p1 fill:#989695\nstyle c2 fill:#DCD0FF\nclass n5,n6 deprecated\n")
	assert.NotContains(t, r.Out, "linkStyle", "skipped edges are drawn only with --draw-v0-semantics")
	r = o.Run("alpha", "render-graph", deprecatedDir, "--draw-v0-semantics")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "class n6 deprecatedskipped\nlinkStyle 2 ")

	// A bundle is not an index, as upstream.
	r = o.Run("alpha", "list", "packages", validBundle)
	assert.NotEqual(t, exit.OK, r.Code)
	assert.Contains(t, r.ErrOut, "is a bundle directory; this command takes a sqlite database or sqlite index image or file-based catalog directory or file-based catalog image")
}

// TestListAndGraphOfImages: the same commands over a sqlite index image and
// a file-based catalog image of the same catalog (a reference database and
// upstream's render of it) print the same as over the database file.
func TestListAndGraphOfImages(t *testing.T) {
	t.Parallel()
	ref := shareddata.Require(t, "reference", "index")
	reg := registrytest.Start(t)
	o := cmdtest.New(t)
	db := filepath.Join(ref, "etcd.replaces.db")
	dir := filepath.Join(t.TempDir(), "catalog")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "etcd"), 0o755))
	data, err := os.ReadFile(filepath.Join(ref, "etcd.replaces.fbc.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "etcd", "catalog.json"), data, 0o644))
	catalogtest.PushDatabase(t, db, reg.Ref("etcd-sqlite:1"))
	catalogtest.PushCatalog(t, dir, reg.Ref("etcd-fbc:1"))

	for _, args := range [][]string{
		{"alpha", "list", "packages"},
		{"alpha", "list", "channels"},
		{"alpha", "list", "bundles"},
		{"alpha", "render-graph", "--draw-v0-semantics"},
	} {
		want := o.Run(append(args, db)...)
		require.Equal(t, exit.OK, want.Code, want.ErrOut)
		for _, src := range []string{dir, reg.Ref("etcd-sqlite:1"), reg.Ref("etcd-fbc:1")} {
			got := o.Run(append(args, src, "--use-http")...)
			require.Equal(t, exit.OK, got.Code, "%s %s: %s", strings.Join(args, " "), src, got.ErrOut)
			assert.Equal(t, want.Out, got.Out, "%s %s", strings.Join(args, " "), src)
		}
	}
}

// TestRenderGraphFormats: --channel keeps one channel; -o json is the
// graph as a document (heads, deprecated and skipped marks, one edge per
// skipRange-covered bundle); -o dot draws the same; mermaid stays the
// default.
func TestRenderGraphFormats(t *testing.T) {
	t.Parallel()
	const demo = "../../fbc/graph/testdata/upgrades"
	o := cmdtest.New(t)
	r := o.Run("alpha", "render-graph", demo, "--channel", "stable", "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	var doc graph.Document
	require.NoError(t, json.Unmarshal([]byte(r.Out), &doc))
	require.Len(t, doc.Packages, 1)
	p := doc.Packages[0]
	assert.Equal(t, "stable", p.DefaultChannel)
	require.Len(t, p.Channels, 1)
	ch := p.Channels[0]
	assert.Equal(t, []string{"demo.v2.0.0"}, ch.Heads)
	var names []string
	for _, b := range ch.Bundles {
		names = append(names, b.Name)
		assert.Equal(t, b.Name == "demo.v1.0.2", b.Skipped, b.Name)
	}
	assert.Equal(t, []string{"demo.v2.0.0", "demo.v1.2.0", "demo.v1.1.0", "demo.v1.0.2", "demo.v1.0.1", "demo.v1.0.0"}, names)
	assert.Contains(t, ch.Edges, graph.DocEdge{From: "demo.v1.0.2", To: "demo.v1.1.0", Kind: graph.EdgeSkips})
	assert.Len(t, ch.Edges, 5+1, "5 replaces, 1 skips; the skipRange is in ranges")
	assert.Equal(t, []graph.DocRange{{To: "demo.v1.2.0", SkipRange: ">=1.0.0 <1.2.0", Count: 4,
		Covers: []graph.DocSpan{{High: "demo.v1.1.0", Low: "demo.v1.0.0", Count: 4}}}}, ch.Ranges)

	// --minimum-edge leaves out edges from below it, as in the mermaid.
	r = o.Run("alpha", "render-graph", demo, "--channel", "stable", "--minimum-edge", "demo.v1.1.0", "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	doc = graph.Document{}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &doc))
	assert.Equal(t, []graph.DocEdge{
		{From: "demo.v1.1.0", To: "demo.v1.2.0", Kind: graph.EdgeReplaces},
		{From: "demo.v1.2.0", To: "demo.v2.0.0", Kind: graph.EdgeReplaces},
	}, doc.Packages[0].Channels[0].Edges)
	assert.Equal(t, []graph.DocRange{{To: "demo.v1.2.0", SkipRange: ">=1.0.0 <1.2.0", Count: 1,
		Covers: []graph.DocSpan{{High: "demo.v1.1.0", Low: "demo.v1.1.0", Count: 1}}}}, doc.Packages[0].Channels[0].Ranges)

	// --maximum-edge leaves out the bundles above it, in every format.
	r = o.Run("alpha", "render-graph", demo, "--channel", "stable", "--maximum-edge", "demo.v1.1.0", "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	doc = graph.Document{}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &doc))
	assert.Equal(t, []string{"demo.v1.1.0"}, doc.Packages[0].Channels[0].Heads)
	assert.Len(t, doc.Packages[0].Channels[0].Bundles, 4)
	r = o.Run("alpha", "render-graph", demo, "--channel", "stable", "--maximum-edge", "demo.v1.1.0")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.NotContains(t, r.Out, "demo.v1.2.0")
	assert.Regexp(t, `n\d+\["demo.v1.0.2"\]-- skip --> n\d+\["demo.v1.1.0"\]`, r.Out)
	r = o.Run("alpha", "render-graph", demo, "--maximum-edge", "nope", "-o", "dot")
	assert.Equal(t, exit.Failed, r.Code)
	assert.Contains(t, r.ErrOut, `unknown maximum edge name: "nope"`)

	r = o.Run("alpha", "render-graph", demo, "--channel", "fast", "-o", "dot")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	for _, line := range []string{
		"digraph \"upgrade graph\" {\n",
		"  subgraph cluster1 {\n    label=\"demo / fast\";\n",
		`    n2 [label="demo.v2.1.0\n2.1.0", peripheries=2, style=filled, fillcolor="#E8960F"];` + "\n",
		`    n4 [label="demo.v1.2.0\n1.2.0"];` + "\n",
		`    n5 [shape=note, style=dotted, label="demo.v2.0.0, demo.v1.2.0 (2 bundles)"];` + "\n",
		`  n4 -> n3;` + "\n",
		`  n5 -> n2 [style=dotted, label=">=1.2.0 <2.1.0"];` + "\n",
	} {
		assert.Contains(t, r.Out, line)
	}
	assert.NotContains(t, r.Out, "stable")

	r = o.Run("alpha", "render-graph", demo, "--channel", "fast")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.True(t, strings.HasPrefix(r.Out, "graph LR\n"), r.Out)
	assert.Contains(t, r.Out, `subgraph c2["fast"]`)
	assert.NotContains(t, r.Out, "stable")

	r = o.Run("alpha", "render-graph", demo, "-o", "png")
	assert.Equal(t, exit.UpstreamUsage, r.Code)
	assert.Contains(t, r.ErrOut, `invalid --output "png"`)
}
