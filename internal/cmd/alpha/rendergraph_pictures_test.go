package alpha_test

import (
	"bytes"
	"encoding/xml"
	"io"
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
