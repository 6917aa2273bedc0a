package diff_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
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

// TestDiffHTMLExpand: a channel of eight releases, the last one new, draws
// its old releases as one folded run before and after; with --expand
// every bundle is its own box, the same edges marked.
func TestDiffHTMLExpand(t *testing.T) {
	t.Parallel()
	write := func(n int) string {
		var lines, entries []string
		lines = append(lines, `{"schema":"olm.package","name":"c","defaultChannel":"stable"}`)
		for i := 1; i <= n; i++ {
			e := fmt.Sprintf(`{"name":"c.v%d.0.0"`, i)
			if i > 1 {
				e += fmt.Sprintf(`,"replaces":"c.v%d.0.0"`, i-1)
			}
			entries = append(entries, e+"}")
			lines = append(lines, fmt.Sprintf(`{"schema":"olm.bundle","name":"c.v%d.0.0","package":"c","image":"example.com/c:%d","properties":[{"type":"olm.package","value":{"packageName":"c","version":"%d.0.0"}}]}`, i, i, i))
		}
		lines = append(lines, `{"schema":"olm.channel","name":"stable","package":"c","entries":[`+strings.Join(entries, ",")+`]}`)
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
		return dir
	}
	oldC, newC := write(7), write(8)
	o := cmdtest.New(t)
	folded := o.Run("diff", oldC, newC, "-o", "html")
	require.Equal(t, exit.OK, folded.Code, folded.ErrOut)
	expanded := o.Run("diff", oldC, newC, "-o", "html", "--expand")
	require.Equal(t, exit.OK, expanded.Code, expanded.ErrOut)

	// The channel's section, past the legend (which shows a fold too).
	section := func(page string) string { return page[strings.Index(page, `<section class="channel">`):] }
	f, x := section(folded.Out), section(expanded.Out)
	boxes := regexp.MustCompile(`<g class="node[^"]*"><title>`)
	assert.Equal(t, 2, strings.Count(f, `<g class="node fold">`), "a folded run before and after")
	assert.Equal(t, 0, strings.Count(x, `<g class="node fold">`), "--expand folds nothing")
	assert.Equal(t, 7+8, len(boxes.FindAllString(x, -1)), "--expand: every bundle its own box, before and after")
	assert.Less(t, len(boxes.FindAllString(f, -1)), 7+8)
	for _, r := range []string{f, x} {
		assert.Equal(t, 1, strings.Count(r, `class="edge replaces added"`), "c.v7 -> c.v8 added")
		assert.Contains(t, r, `class="node head added"`)
	}
}
