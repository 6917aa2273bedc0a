package draw

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/shareddata"
)

// TestCompactRangesDrawTheSame: a document that holds each skipRange once
// (GraphOptions.CompactRanges, what every command draws from) gives the
// same bytes as one with an edge per covered bundle, and as one with those
// edges alone (no Ranges), in svg, html and --expand, over the reference
// catalogs and the demo fixture.
func TestCompactRangesDrawTheSame(t *testing.T) {
	dir := shareddata.Require(t, "reference", "index")
	files, err := filepath.Glob(filepath.Join(dir, "*.fbc.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no reference catalogs in %s: %v", dir, err)
	}
	catalogs := map[string]*fbc.Catalog{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c := &fbc.Catalog{}
		if err := c.LoadFile(filepath.Base(f), raw); err != nil {
			t.Fatal(err)
		}
		catalogs[filepath.Base(f)] = c
	}
	demo, err := fbc.LoadDir("../testdata/upgrades")
	if err != nil {
		t.Fatal(err)
	}
	catalogs["demo"] = demo

	brackets := 0
	for name, c := range catalogs {
		expanded, _, err := graph.NewDocument(c, graph.GraphOptions{})
		if err != nil {
			t.Fatal(err)
		}
		compact, _, err := graph.NewDocument(c, graph.GraphOptions{CompactRanges: true})
		if err != nil {
			t.Fatal(err)
		}
		edgesOnly, _, err := graph.NewDocument(c, graph.GraphOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range compact.Packages {
			for _, ch := range p.Channels {
				for _, e := range ch.Edges {
					if e.Kind == graph.EdgeSkipRange {
						t.Fatalf("%s: a compact document lists skipRange edge %s -> %s", name, e.From, e.To)
					}
				}
			}
		}
		for i := range edgesOnly.Packages {
			for j := range edgesOnly.Packages[i].Channels {
				edgesOnly.Packages[i].Channels[j].Ranges = nil
			}
		}
		for _, o := range []Options{{}, {Expand: true}} {
			want := svgOf(t, expanded, o)
			brackets += strings.Count(want, `class="edge range`)
			if got := svgOf(t, compact, o); got != want {
				t.Errorf("%s (expand %v): the compact document draws another svg", name, o.Expand)
			}
			if got := svgOf(t, edgesOnly, o); got != want {
				t.Errorf("%s (expand %v): the document without Ranges draws another svg", name, o.Expand)
			}
			var a, b bytes.Buffer
			if err := WriteHTMLWith(&a, expanded, o); err != nil {
				t.Fatal(err)
			}
			if err := WriteHTMLWith(&b, compact, o); err != nil {
				t.Fatal(err)
			}
			if a.String() != b.String() {
				t.Errorf("%s (expand %v): the compact document draws another html page", name, o.Expand)
			}
		}
	}
	if brackets == 0 {
		t.Error("no skipRange bracket drawn: the comparison proves nothing")
	}
}

func svgOf(t *testing.T, doc *graph.Document, o Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteSVGWith(&b, doc, o); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
