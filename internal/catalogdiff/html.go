package catalogdiff

import (
	"fmt"
	"io"
	"strings"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/fbc/graph/draw"
)

// WriteHTML prints the diff as one self-contained HTML page (inline SVG
// and CSS, no script, no external asset): the summary, the release gates'
// violations, then per package what changed and, for each channel that
// changed, its upgrade graph before and after, the edges lost drawn red in
// the before picture and the edges added green in the after one (bundles
// removed and added outlined likewise). old and new are the two sides r
// was compared from: the pictures are drawn from them.
func WriteHTML(w io.Writer, r *Result, old, new *Catalog) error {
	return WriteHTMLWith(w, r, old, new, HTMLOptions{})
}

// HTMLOptions choose how WriteHTMLWith draws.
type HTMLOptions struct {
	// Expand draws every bundle of a picture as its own box: no folded
	// runs, no skip groups (draw.Channel.Expand).
	Expand bool
}

// WriteHTMLWith is WriteHTML with options.
func WriteHTMLWith(w io.Writer, r *Result, old, new *Catalog, o HTMLOptions) error {
	var b strings.Builder
	draw.PageStart(&b, "Catalog diff: "+r.Old+" → "+r.New)
	if len(r.FailOn) > 0 {
		fmt.Fprintf(&b, "<p>Release gates: <code>%s</code></p>\n", esc(strings.Join(r.FailOn, ", ")))
	}
	if len(r.Violations) > 0 {
		b.WriteString("<ul class=\"violations\">\n")
		for _, v := range r.Violations {
			where := v.Package
			if v.Channel != "" {
				where += " channel " + v.Channel
			}
			fmt.Fprintf(&b, "<li class=\"removed\">--fail-on %s: <code>%s</code>: %s</li>\n", esc(v.Gate), esc(where), esc(v.What))
		}
		b.WriteString("</ul>\n")
	}
	if r.Equal {
		b.WriteString("<p>No differences.</p>\n")
		draw.PageEnd(&b)
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "<p><strong>%s</strong></p>\n", esc(SummaryLine(r)))
	b.WriteString("<div class=\"legend\">\n" + draw.Legend(true, "lg") + "</div>\n")
	pic := 0
	for _, p := range r.Packages {
		fmt.Fprintf(&b, "<h2>%s <span class=\"%s\">(%s)</span></h2>\n<ul>\n", esc(p.Name), p.Status, p.Status)
		if p.DefaultChannel != nil {
			fmt.Fprintf(&b, "<li>default channel <code>%s</code> → <code>%s</code></li>\n", esc(orNone(p.DefaultChannel.Old)), esc(orNone(p.DefaultChannel.New)))
		}
		for _, x := range p.BundlesAdded {
			fmt.Fprintf(&b, "<li class=\"added\">+ bundle <code>%s</code> %s <code>%s</code></li>\n", esc(x.Name), esc(x.Version), esc(x.Image))
		}
		for _, x := range p.BundlesRemoved {
			fmt.Fprintf(&b, "<li class=\"removed\">− bundle <code>%s</code> %s <code>%s</code></li>\n", esc(x.Name), esc(x.Version), esc(x.Image))
		}
		for _, x := range p.BundlesChanged {
			fmt.Fprintf(&b, "<li class=\"changed\">~ bundle <code>%s</code>: %s</li>\n", esc(x.Name), esc(bundleChange(x)))
		}
		for _, d := range p.DeprecationsAdded {
			fmt.Fprintf(&b, "<li class=\"added\">+ deprecation of <code>%s</code>: %s</li>\n", esc(deprecated(d.Schema, d.Name)), esc(d.Message))
		}
		for _, d := range p.DeprecationsRemoved {
			fmt.Fprintf(&b, "<li class=\"removed\">− deprecation of <code>%s</code>: %s</li>\n", esc(deprecated(d.Schema, d.Name)), esc(d.Message))
		}
		for _, d := range p.DeprecationsChanged {
			fmt.Fprintf(&b, "<li class=\"changed\">~ deprecation of <code>%s</code>: %s → %s</li>\n", esc(deprecated(d.Schema, d.Name)), esc(d.Message.Old), esc(d.Message.New))
		}
		b.WriteString("</ul>\n")
		for _, c := range p.Channels {
			writeHTMLChannel(&b, p.Name, c, old.side(p.Name), new.side(p.Name), o, &pic)
		}
	}
	draw.PageEnd(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHTMLChannel is a channel's section: its changes as a list, then
// the pictures of the sides that have it.
func writeHTMLChannel(b *strings.Builder, pkg string, c Channel, o, n *side, opts HTMLOptions, pic *int) {
	fmt.Fprintf(b, "<section class=\"channel\">\n<h3>channel %s <span class=\"%s\">(%s)</span></h3>\n<ul>\n", esc(c.Name), c.Status, c.Status)
	if c.Head != nil {
		fmt.Fprintf(b, "<li>head <code>%s</code> → <code>%s</code></li>\n", esc(orNone(c.Head.Old)), esc(orNone(c.Head.New)))
	}
	if c.Status == Changed {
		for _, e := range c.EntriesAdded {
			fmt.Fprintf(b, "<li class=\"added\">+ entry <code>%s</code></li>\n", esc(e))
		}
		for _, e := range c.EntriesRemoved {
			fmt.Fprintf(b, "<li class=\"removed\">− entry <code>%s</code></li>\n", esc(e))
		}
	}
	for _, e := range c.EdgesAdded {
		fmt.Fprintf(b, "<li class=\"added\">+ edge %s</li>\n", esc(edge(e)))
	}
	for _, e := range c.EdgesRemoved {
		fmt.Fprintf(b, "<li class=\"removed\">− edge %s</li>\n", esc(edge(e)))
	}
	for _, u := range c.Unreachable {
		fmt.Fprintf(b, "<li class=\"removed\">⚠ <code>%s</code> is unreachable: no upgrade path leads from it to the head</li>\n", esc(u))
	}
	b.WriteString("</ul>\n<div class=\"pics\">\n")
	marks := func(edges []Edge, entries []string, m draw.Mark) (map[draw.EdgeKey]draw.Mark, map[string]draw.Mark) {
		em, bm := map[draw.EdgeKey]draw.Mark{}, map[string]draw.Mark{}
		for _, e := range edges {
			em[draw.EdgeKey{From: e.From, To: e.To, Kind: e.Kind}] = m
		}
		for _, e := range entries {
			bm[e] = m
		}
		return em, bm
	}
	if ch := o.channels[c.Name]; ch != nil {
		em, bm := marks(c.EdgesRemoved, c.EntriesRemoved, draw.Removed)
		picture(b, "before", pkg, ch, o, em, bm, opts, pic)
	}
	if ch := n.channels[c.Name]; ch != nil {
		em, bm := marks(c.EdgesAdded, c.EntriesAdded, draw.Added)
		picture(b, "after", pkg, ch, n, em, bm, opts, pic)
	}
	b.WriteString("</div>\n</section>\n")
}

func picture(b *strings.Builder, when, pkg string, ch *fbc.Channel, s *side, em map[draw.EdgeKey]draw.Mark, bm map[string]draw.Mark, opts HTMLOptions, pic *int) {
	deprecated := map[string]bool{}
	for k := range s.deps {
		if k[0] == fbc.SchemaBundle {
			deprecated[k[1]] = true
		}
	}
	// Each skipRange once (Ranges), not an edge per covered bundle.
	dc, _ := graph.NewDocChannelRanges(ch, s.versions, deprecated)
	dc.Deprecated = hasKey(s.deps, fbc.SchemaChannel, ch.Name)
	title := pkg + " / " + ch.Name + " " + when
	fmt.Fprintf(b, "<figure class=\"pic\">\n<figcaption>%s: %s</figcaption>\n", when, draw.ChannelFacts(dc))
	draw.InlineSVG(b, draw.Channel{Title: title, Doc: dc, Edges: em, Bundles: bm, Expand: opts.Expand}, fmt.Sprintf("p%d", *pic))
	b.WriteString("</figure>\n")
	*pic++
}

func hasKey(m map[[2]string]string, schema, name string) bool {
	_, ok := m[[2]string{schema, name}]
	return ok
}

// esc is text made printable and safe in HTML.
func esc(s string) string { return draw.Escape(s) }
