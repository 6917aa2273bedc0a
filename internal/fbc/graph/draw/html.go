package draw

import (
	"fmt"
	"io"
	"strings"

	"github.com/opmkit/opm/internal/fbc/graph"
)

// pageCSS styles the page around the pictures.
const pageCSS = `body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#1f2328;margin:24px;max-width:none}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #d0d7de}h3{margin-bottom:.3em}
section.channel{margin:1em 0 2em}
.pic{overflow-x:auto;border:1px solid #d0d7de;border-radius:6px;padding:8px;background:#fff}
.pics{display:flex;gap:16px;flex-wrap:wrap;align-items:flex-start}
.note{color:#57606a}
.added{color:#1a7f37}.removed{color:#cf222e}.changed{color:#9a6700}
code{background:#f6f8fa;padding:0 .3em;border-radius:4px}
`

// PageStart begins a self-contained HTML page (also well-formed XML): no
// script, no external asset, its styles inline.
func PageStart(b *strings.Builder, title string) {
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n")
	fmt.Fprintf(b, "<title>%s</title>\n<style>\n%s%s</style>\n</head>\n<body>\n<h1>%s</h1>\n", Escape(title), pageCSS, CSS, Escape(title))
}

// PageEnd ends the page PageStart began.
func PageEnd(b *strings.Builder) {
	b.WriteString("<p class=\"note\">Drawn by opm.</p>\n</body>\n</html>\n")
}

// WriteHTML writes a Document as one HTML page: a legend, then per
// package its channels, each with its facts and its picture.
func WriteHTML(w io.Writer, doc *graph.Document) error { return WriteHTMLWith(w, doc, Options{}) }

// WriteHTMLWith is WriteHTML with options.
func WriteHTMLWith(w io.Writer, doc *graph.Document, o Options) error {
	var b strings.Builder
	PageStart(&b, docTitle(doc))
	b.WriteString("<div class=\"legend\">\n" + Legend(false, "lg") + "</div>\n")
	n := 0
	for _, p := range doc.Packages {
		fmt.Fprintf(&b, "<h2>%s</h2>\n<p>default channel <code>%s</code>", Escape(p.Name), Escape(p.DefaultChannel))
		if p.Deprecated {
			b.WriteString("; the package is deprecated")
		}
		b.WriteString("</p>\n")
		for _, ch := range p.Channels {
			fmt.Fprintf(&b, "<section class=\"channel\">\n<h3>%s</h3>\n<p class=\"note\">%s</p>\n<div class=\"pic\">\n", Escape(ChannelTitle(p, ch)), channelFacts(ch))
			InlineSVG(&b, Channel{Title: ChannelTitle(p, ch), Doc: ch, Expand: o.Expand}, fmt.Sprintf("c%d", n))
			b.WriteString("</div>\n</section>\n")
			n++
		}
	}
	if n == 0 {
		b.WriteString("<p>No channel to draw.</p>\n")
	}
	PageEnd(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// channelFacts is a line of escaped HTML: bundle, edge and skipRange
// counts, heads.
func channelFacts(ch graph.DocChannel) string {
	var heads []string
	for _, h := range ch.Heads {
		heads = append(heads, "<code>"+Escape(h)+"</code>")
	}
	// Ranges are counted once each, however many bundles they cover (or
	// edges the document lists for them).
	edges, ranges := 0, map[string]bool{}
	for _, r := range ch.Ranges {
		ranges[r.To] = true
	}
	for _, e := range ch.Edges {
		if e.Kind == graph.EdgeSkipRange {
			ranges[e.To] = true
			continue
		}
		edges++
	}
	s := fmt.Sprintf("%d bundles, %d replaces and skips %s, %d %s; ", len(ch.Bundles), edges, plural(edges, "edge", "edges"), len(ranges), plural(len(ranges), "skipRange", "skipRanges"))
	switch len(heads) {
	case 0:
		s += "no head (a cycle)"
	case 1:
		s += "head " + heads[0]
	default:
		s += "heads " + strings.Join(heads, ", ")
	}
	return s
}

// ChannelFacts is channelFacts for other pages.
func ChannelFacts(ch graph.DocChannel) string { return channelFacts(ch) }
