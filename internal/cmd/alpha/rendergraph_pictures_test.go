package alpha_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
)

// TestRenderGraphPictures: -o svg is one standalone SVG document and -o
// html one page, both well-formed, marking heads, skips, skipRanges and
// deprecated bundles, a cluster or section per channel; --channel keeps
// one; same input, same bytes.
func TestRenderGraphPictures(t *testing.T) {
	t.Parallel()
	const demo = "../../fbc/graph/testdata/upgrades"
	o := cmdtest.New(t)

	r := o.Run("alpha", "render-graph", demo, "-o", "svg")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.True(t, strings.HasPrefix(r.Out, `<?xml version="1.0" encoding="UTF-8"?>`+"\n<svg "), r.Out[:min(len(r.Out), 80)])
	parses(t, r.Out)
	assert.Equal(t, 3, strings.Count(r.Out, `class="cluster"`), "a cluster per channel")
	for _, want := range []string{"demo / stable (default)", "demo / fast", `class="node head"`, `class="edge skips"`, `class="edge range"`, `class="node deprecated"`, "skipRange &gt;=1.0.0 &lt;1.2.0"} {
		assert.Contains(t, r.Out, want)
	}
	again := o.Run("alpha", "render-graph", demo, "-o", "svg")
	assert.Equal(t, r.Out, again.Out, "same catalog, same picture")

	r = o.Run("alpha", "render-graph", demo, "--channel", "stable", "-o", "svg")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Equal(t, 1, strings.Count(r.Out, `class="cluster"`))

	r = o.Run("alpha", "render-graph", demo, "-o", "html")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	parses(t, r.Out)
	assert.True(t, strings.HasPrefix(r.Out, "<!DOCTYPE html>\n"))
	assert.Contains(t, r.Out, "<title>Upgrade graph of demo</title>")
	assert.Equal(t, 3, strings.Count(r.Out, `<section class="channel">`))
	assert.NotContains(t, r.Out, "<script")
}

func parses(t *testing.T, s string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader([]byte(s)))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		require.NoError(t, err, "well-formed XML")
	}
}

// TestRenderGraphFoldsUnlessExpand: a chain of 30 plain replaces steps is
// the head and one folded box; --expand draws all 30 (svg and html).
func TestRenderGraphFoldsUnlessExpand(t *testing.T) {
	t.Parallel()
	const chain = "testdata/docs/cert-utils-operator"
	o := cmdtest.New(t)
	for _, format := range []string{"svg", "html"} {
		r := o.Run("alpha", "render-graph", chain, "-o", format)
		require.Equal(t, exit.OK, r.Code, r.ErrOut)
		parses(t, r.Out)
		// Drawn boxes have a title (the legend's do not).
		boxes := regexp.MustCompile(`<g class="node[^"]*"><title>`)
		assert.Len(t, boxes.FindAllString(r.Out, -1), 2, format)
		assert.Contains(t, r.Out, "cert-utils-operator.v0.0.1 → … →</text>", format)
		assert.Contains(t, r.Out, "0.0.1 … 1.3.11, 29 bundles", format)

		r = o.Run("alpha", "render-graph", chain, "-o", format, "--expand")
		require.Equal(t, exit.OK, r.Code, r.ErrOut)
		assert.Len(t, boxes.FindAllString(r.Out, -1), 30, format)
		assert.NotContains(t, r.Out, `<g class="node fold"><title>`, format)
	}
}
