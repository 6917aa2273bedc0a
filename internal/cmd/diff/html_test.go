package diff_test

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

// TestDiffHTML: -o html is one well-formed, self-contained page: the
// summary, then each changed channel's graph before and after, the edge
// lost red in the before picture, the edges added green in the after one.
func TestDiffHTML(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	r := o.Run("diff", oldDir, newDir, "-o", "html")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	d := xml.NewDecoder(bytes.NewReader([]byte(r.Out)))
	for {
		_, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "well-formed page")
	}
	assert.True(t, strings.HasPrefix(r.Out, "<!DOCTYPE html>\n"))
	assert.NotContains(t, r.Out, "<script")
	assert.Contains(t, r.Out, "3 edge(s) added, 1 edge(s) lost")
	// stable changed: a picture before and one after, with the a.v2 -> a.v3
	// edge lost (red) and a.v1 -> a.v3, a.v3 -> a.v4 and a.v1's skipRange
	// edge into a.v4 added (green).
	stable := r.Out[strings.Index(r.Out, "<h3>channel stable <span class=\"changed\">"):]
	stable = stable[:strings.Index(stable, "</section>")]
	before := stable[strings.Index(stable, "<figcaption>before"):strings.Index(stable, "<figcaption>after")]
	after := stable[strings.Index(stable, "<figcaption>after"):]
	assert.Equal(t, 1, strings.Count(before, `class="edge replaces removed"`), before)
	assert.Contains(t, before, "<title>a.v2 → a.v3 (replaces)</title>")
	assert.NotContains(t, before, " added\"")
	assert.Equal(t, 2, strings.Count(after, `class="edge replaces added"`), after)
	assert.Equal(t, 1, strings.Count(after, `class="edge range added"`), after)
	assert.Contains(t, after, `class="node head added"`, "a.v4 is a new entry, and a head")
	assert.NotContains(t, after, " removed\"")
	// An added channel has an after picture only, a removed one a before.
	fast := r.Out[strings.Index(r.Out, "<h3>channel fast"):]
	fast = fast[:strings.Index(fast, "</section>")]
	assert.Contains(t, fast, "<figcaption>before")
	assert.NotContains(t, fast, "<figcaption>after")

	again := o.Run("diff", oldDir, newDir, "-o", "html")
	assert.Equal(t, r.Out, again.Out, "same catalogs, same page")

	r = o.Run("diff", oldDir, oldDir, "-o", "html")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "<p>No differences.</p>")
}
