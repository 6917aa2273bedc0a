package draw

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
)

// demo is the graph package's fixture: three channels with replaces,
// skips, skipRanges and a deprecated bundle.
func demo(t testing.TB) *graph.Document {
	t.Helper()
	c, err := fbc.LoadDir("../testdata/upgrades")
	if err != nil {
		t.Fatal(err)
	}
	doc, _, err := graph.NewDocument(c, graph.GraphOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// synthetic is a channel of n bundles: a replaces chain, every fifth
// bundle skipping the one before it and branching a z-stream off, every
// tenth with a skipRange over the ten below it, a few deprecated.
func synthetic(n int) graph.DocChannel {
	var entries []fbc.ChannelEntry
	ch := &fbc.Channel{Name: "stable", Package: "big"}
	vers := map[string]semver.Version{}
	name := func(i int) string { return fmt.Sprintf("big.v%d.%d.0", i/10+1, i%10) }
	for i := 0; i < n; i++ {
		e := fbc.ChannelEntry{Name: name(i)}
		if i > 0 {
			e.Replaces = name(i - 1)
		}
		if i%5 == 0 && i > 1 {
			e.Replaces = name(i - 2)
			e.Skips = []string{name(i - 1)}
		}
		if i%10 == 9 {
			e.SkipRange = fmt.Sprintf(">=%d.0.0 <%d.9.0", i/10+1, i/10+1)
		}
		entries = append(entries, e)
		vers[name(i)] = semver.Version{Major: uint64(i/10 + 1), Minor: uint64(i % 10)}
	}
	ch.Entries = entries
	deprecated := map[string]bool{name(n / 2): true, name(n / 3): true}
	dc, _ := graph.NewDocChannel(ch, vers, deprecated)
	return dc
}

func TestLayersPointUpAndBoxesDoNotOverlap(t *testing.T) {
	chans := Channels(demo(t))
	chans = append(chans, Channel{Title: "big", Doc: synthetic(300)})
	for _, ch := range chans {
		t.Run(ch.Title, func(t *testing.T) { checkLayout(t, ch) })
	}
}

// checkLayout: every bundle is drawn once; every edge points up (its
// target's box above its source's) unless both ends share a box or the
// source is a skip group beside its entry; boxes lie inside the picture
// and do not overlap; brackets stand left of the boxes.
func checkLayout(t *testing.T, ch Channel) {
	t.Helper()
	l := Lay(ch)
	at := map[string]Box{}
	for _, b := range l.Boxes {
		for _, m := range b.Members {
			if _, dup := at[m]; dup {
				t.Errorf("bundle %s drawn twice", m)
			}
			at[m] = b
		}
	}
	for _, b := range ch.Doc.Bundles {
		if _, ok := at[b.Name]; !ok {
			t.Errorf("bundle %s not drawn", b.Name)
		}
	}
	for _, e := range ch.Doc.Edges {
		if e.From == "" {
			continue // a range given once, with no source
		}
		from, to := at[e.From], at[e.To]
		if from.Name == to.Name || from.Kind == KindGroup {
			// Inside one box, or a group beside its entry.
			continue
		}
		// Newer on top: an edge's target is in a higher layer (a
		// lower number) and drawn above its source.
		if to.Layer >= from.Layer || to.Y+to.H > from.Y {
			t.Errorf("edge %s -> %s (%s): target layer %d y %.1f, source layer %d y %.1f", e.From, e.To, e.Kind, to.Layer, to.Y, from.Layer, from.Y)
		}
	}
	for i, a := range l.Boxes {
		if a.X < l.Left || a.X+a.W > l.Width || a.Y < 0 || a.Y+a.H > l.Height {
			t.Errorf("box %s (%.1f,%.1f %.1fx%.1f) outside the %.1fx%.1f picture", a.Name, a.X, a.Y, a.W, a.H, l.Width, l.Height)
		}
		for _, b := range l.Boxes[i+1:] {
			if a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H {
				t.Errorf("boxes %s and %s overlap", a.Name, b.Name)
			}
		}
	}
	for _, s := range l.Spans {
		if x := l.LaneX(s.Lane); x < 0 || x >= l.Left {
			t.Errorf("skipRange bracket of %s at x %.1f, not left of the boxes (%.1f)", l.Boxes[s.To].Name, x, l.Left)
		}
	}
}

func TestSpansShareALaneOnlyWhenApart(t *testing.T) {
	l := Lay(Channel{Doc: synthetic(300)})
	if len(l.Spans) != 30 {
		t.Fatalf("%d skipRange brackets, want 30", len(l.Spans))
	}
	for i, a := range l.Spans {
		for _, b := range l.Spans[i+1:] {
			if a.Lane != b.Lane {
				continue
			}
			alo, ahi := extent(l, a)
			blo, bhi := extent(l, b)
			if alo <= bhi && blo <= ahi {
				t.Errorf("brackets of %s and %s overlap in lane %d", l.Boxes[a.To].Name, l.Boxes[b.To].Name, a.Lane)
			}
		}
	}
}

func extent(l *Layout, s Span) (float64, float64) {
	t := l.Boxes[s.To]
	c := t.Y + t.H/2
	return min(s.Top, c), max(s.Bottom, c)
}

func TestBarycenterUncrossesABranch(t *testing.T) {
	// Two lines, a and b, from one root; given interleaved, the layers
	// must come out with each line on one side.
	ch := graph.DocChannel{
		Name:  "x",
		Heads: []string{"a2", "b2"},
		Bundles: []graph.DocBundle{
			{Name: "a2"}, {Name: "b2"}, {Name: "b1"}, {Name: "a1"}, {Name: "root"},
		},
		Edges: []graph.DocEdge{
			{From: "a1", To: "a2", Kind: graph.EdgeReplaces},
			{From: "b1", To: "b2", Kind: graph.EdgeReplaces},
			{From: "root", To: "a1", Kind: graph.EdgeReplaces},
			{From: "root", To: "b1", Kind: graph.EdgeReplaces},
		},
	}
	l := Lay(Channel{Doc: ch})
	x := map[string]float64{}
	for _, b := range l.Boxes {
		x[b.Name] = b.X
	}
	if (x["a2"] < x["b2"]) != (x["a1"] < x["b1"]) {
		t.Errorf("a and b cross: a2 %.0f b2 %.0f, a1 %.0f b1 %.0f", x["a2"], x["b2"], x["a1"], x["b1"])
	}
}

func TestCycleStillLaysOut(t *testing.T) {
	ch := graph.DocChannel{
		Name:    "loop",
		Bundles: []graph.DocBundle{{Name: "a"}, {Name: "b"}},
		Edges:   []graph.DocEdge{{From: "a", To: "b", Kind: graph.EdgeReplaces}, {From: "b", To: "a", Kind: graph.EdgeReplaces}},
	}
	var b bytes.Buffer
	if err := WriteSVG(&b, &graph.Document{Packages: []graph.DocPackage{{Name: "p", Channels: []graph.DocChannel{ch}}}}); err != nil {
		t.Fatal(err)
	}
	wellFormed(t, b.Bytes())
}

func TestSVGAndHTMLAreWellFormedAndDeterministic(t *testing.T) {
	doc := demo(t)
	// Names that need escaping must not break the document.
	doc.Packages[0].Channels[0].Bundles[0].Name = `<evil & "name"` + "\x01"
	doc.Packages[0].Channels[0].Edges = append(doc.Packages[0].Channels[0].Edges, graph.DocEdge{From: "]]><x>", To: doc.Packages[0].Channels[0].Bundles[0].Name, Kind: graph.EdgeSkips})
	for name, write := range map[string]func(io.Writer, *graph.Document) error{"svg": WriteSVG, "html": WriteHTML} {
		t.Run(name, func(t *testing.T) {
			var a, b bytes.Buffer
			if err := write(&a, doc); err != nil {
				t.Fatal(err)
			}
			if err := write(&b, doc); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Error("two writes of one document differ")
			}
			wellFormed(t, a.Bytes())
			s := a.String()
			for _, want := range []string{"demo / stable (default)", "demo / fast", "demo / candidate-1.0", "skipRange &gt;=1.0.0 &lt;1.2.0", `class="node head"`, `class="node deprecated"`, `class="node skipped"`, "&lt;evil &amp; &quot;name&quot;\\x01"} {
				if !strings.Contains(s, want) {
					t.Errorf("output lacks %q", want)
				}
			}
			if name == "html" {
				for _, bad := range []string{"<script", "http://", "https://", "src="} {
					if strings.Contains(strings.ReplaceAll(s, "http://www.w3.org/2000/svg", ""), bad) {
						t.Errorf("page has %q: it must stand alone", bad)
					}
				}
				if strings.Count(s, "<svg ") != 4 { // legend and three channels
					t.Errorf("%d svg elements, want 4", strings.Count(s, "<svg "))
				}
			}
		})
	}
}

// wellFormed parses data as XML to its end.
func wellFormed(t *testing.T, data []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
	}
}
