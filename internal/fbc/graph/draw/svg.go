package draw

import (
	"fmt"
	"io"
	"strings"

	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/printable"
)

// CSS styles the pictures: in a standalone SVG's <style>, or a page's.
// Colours are chosen to read on white and in print; diff marks override
// an edge's colour and keep its dash pattern.
const CSS = `svg text{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12px;fill:#1f2328}
.node rect{fill:#fff;stroke:#57606a;stroke-width:1.2}
.node.head rect{stroke:#0a3069;stroke-width:3.5;fill:#ddf4ff}
.node.deprecated rect{fill:#ffd8a8}
.node.skipped rect{stroke:#cf222e;stroke-dasharray:5 3}
.node.missing rect{fill:#f6f8fa;stroke:#8c959f;stroke-dasharray:3 3}
.node.fold rect{fill:#f6f8fa;stroke-width:2.2}
.node.group rect{fill:#fff8f0;stroke:#bc4c00}
.node.added rect{stroke:#1a7f37;stroke-width:3.5}
.node.removed rect{stroke:#cf222e;stroke-width:3.5}
.edge{fill:none;stroke:#424a53;stroke-width:1.3}
.edge.skips{stroke:#0969da;stroke-dasharray:7 4}
.edge.range{stroke:#8250df;stroke-dasharray:4 3;stroke-width:1.6}
.edge.added{stroke:#1a7f37;stroke-width:2.6}
.edge.removed{stroke:#cf222e;stroke-width:2.6}
.cluster{fill:none;stroke:#d0d7de;stroke-width:1}
.title{font-weight:bold}
`

// arrow colours, by marker name.
var arrows = []struct{ name, color string }{
	{"replaces", "#424a53"}, {"skips", "#0969da"}, {"range", "#8250df"}, {"added", "#1a7f37"}, {"removed", "#cf222e"},
}

func defs(b *strings.Builder, id string) {
	b.WriteString("<defs>")
	for _, a := range arrows {
		fmt.Fprintf(b, `<marker id="%s-%s" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="%s"/></marker>`, id, a.name, a.color)
	}
	b.WriteString("</defs>\n")
}

// Escape makes s safe as XML text or an attribute value: control
// characters shown as escapes (they are not allowed in XML), markup
// characters as entities.
func Escape(s string) string {
	return xmlEscaper.Replace(printable.Name(s))
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")

// escLine escapes a label line already made printable by Lay.
func escLine(s string) string { return xmlEscaper.Replace(s) }

func f(x float64) string { return fmt.Sprintf("%.1f", x) }

func edgeClass(kind string, m Mark) (class, marker string) {
	switch kind {
	case graph.EdgeSkips, KindGroupLink:
		class, marker = "edge skips", "skips"
	case graph.EdgeSkipRange:
		class, marker = "edge range", "range"
	default:
		class, marker = "edge replaces", "replaces"
	}
	switch m {
	case Added:
		class, marker = class+" added", "added"
	case Removed:
		class, marker = class+" removed", "removed"
	}
	return class, marker
}

// body draws the layout's edges, brackets and boxes (in that order, so
// boxes cover the edges that pass behind them); id prefixes marker ids.
func (l *Layout) body(b *strings.Builder, id string) {
	for _, k := range l.Links {
		fb, tb := l.Boxes[k.From], l.Boxes[k.To]
		class, marker := edgeClass(k.Kind, k.Mark)
		var d string
		switch span := fb.Layer - tb.Layer; {
		case k.Kind == KindGroupLink && fb.Y < tb.Y+tb.H && tb.Y < fb.Y+fb.H:
			// The group stands right of its entry: a short arrow left.
			d = "M" + f(fb.X) + "," + f(fb.Y+fb.H/2) + " L" + f(tb.X+tb.W) + "," + f(tb.Y+tb.H/2)
		case k.Kind == KindGroupLink:
			// Wrapped onto the line below: up into the entry.
			d = "M" + f(fb.X+fb.W/2) + "," + f(fb.Y) + " L" + f(tb.X+tb.W/2) + "," + f(tb.Y+tb.H)
		case span == 1 && fb.Y > tb.Y:
			d = "M" + f(fb.X+fb.W/2) + "," + f(fb.Y) + " L" + f(tb.X+tb.W/2) + "," + f(tb.Y+tb.H)
		case span == -1 && fb.Y < tb.Y:
			d = "M" + f(fb.X+fb.W/2) + "," + f(fb.Y+fb.H) + " L" + f(tb.X+tb.W/2) + "," + f(tb.Y)
		default:
			x1, y1 := fb.X+fb.W, fb.Y+fb.H/2
			x2, y2 := tb.X+tb.W, tb.Y+tb.H/2
			xr := max(x1, x2) + l.bulge(k)
			if span == 0 {
				xr = max(x1, x2) + bulgeMin
			}
			d = "M" + f(x1) + "," + f(y1) + " C" + f(xr) + "," + f(y1) + " " + f(xr) + "," + f(y2) + " " + f(x2) + "," + f(y2)
		}
		what := k.Kind
		if k.Kind == KindGroupLink {
			what = "skipped"
		}
		fmt.Fprintf(b, `<path class="%s" d="%s" marker-end="url(#%s-%s)"><title>%s</title></path>`+"\n",
			class, d, id, marker, escLine(printable.Name(l.Boxes[k.From].Name)+" → "+printable.Name(l.Boxes[k.To].Name)+" ("+what+")"))
	}
	for _, s := range l.Spans {
		t := l.Boxes[s.To]
		x := l.LaneX(s.Lane)
		ty := t.Y + t.H/2
		class, marker := edgeClass(graph.EdgeSkipRange, s.Mark)
		d := "M" + f(x+8) + "," + f(s.Bottom) + " H" + f(x) + " V" + f(min(s.Top, ty)) + " M" + f(x+8) + "," + f(s.Top) + " H" + f(x) +
			" M" + f(x) + "," + f(max(s.Bottom, ty)) + " V" + f(ty) + " H" + f(t.X)
		what := "bundle"
		if s.Covered != 1 {
			what = "bundles"
		}
		fmt.Fprintf(b, `<path class="%s" d="%s" marker-end="url(#%s-%s)"><title>%s</title></path>`+"\n",
			class, d, id, marker, escLine(fmt.Sprintf("skipRange %s of %s covers %d %s", printable.Name(s.Range), printable.Name(t.Name), s.Covered, what)))
	}
	for _, bx := range l.Boxes {
		class := "node"
		tip := bx.Lines[0]
		switch bx.Kind {
		case KindFold:
			class += " fold"
			tip = fmt.Sprintf("%d bundles, each replacing the one before: %s", len(bx.Members), printable.Name(strings.Join(bx.Members, ", ")))
		case KindGroup:
			class += " group"
			tip = fmt.Sprintf("%s %d bundles: %s", bx.Lines[0], len(bx.Members), printable.Name(strings.Join(bx.Members, ", ")))
		}
		for _, c := range []struct {
			on         bool
			name, text string
		}{
			{bx.Head, "head", "channel head"}, {bx.Deprecated, "deprecated", "deprecated"}, {bx.Skipped, "skipped", "skipped: OLM v0 never installs it here"},
			{bx.Missing, "missing", ""}, {bx.Mark == Added, "added", "added"}, {bx.Mark == Removed, "removed", "removed"},
		} {
			if c.on {
				class += " " + c.name
				if c.text != "" {
					tip += "; " + c.text
				}
			}
		}
		fmt.Fprintf(b, `<g class="%s"><title>%s</title><rect x="%s" y="%s" width="%s" height="%s" rx="4"/>`, class, escLine(tip), f(bx.X), f(bx.Y), f(bx.W), f(bx.H))
		for i, line := range bx.Lines {
			fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`, f(bx.X+bx.W/2), f(bx.Y+padY+float64(i+1)*lineH-3.5), escLine(line))
		}
		b.WriteString("</g>\n")
	}
}

// InlineSVG writes the channel as an <svg> element for an HTML page; id
// must be unique on the page (it prefixes the arrow markers' ids).
func InlineSVG(b *strings.Builder, ch Channel, id string) {
	l := Lay(ch)
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" role="img" aria-label="%s">`+"\n",
		f(l.Width), f(l.Height), f(l.Width), f(l.Height), Escape(ch.Title))
	defs(b, id)
	l.body(b, id)
	b.WriteString("</svg>\n")
}

// Legend is an <svg> element explaining the marks; diff adds the colours
// of edges added and lost. id prefixes its marker ids.
func Legend(diff bool, id string) string {
	var b strings.Builder
	defs(&b, id)
	x, w := 4.0, 0.0
	for _, n := range []struct{ class, label string }{
		{"node head", "channel head"}, {"node", "bundle"}, {"node deprecated", "deprecated"}, {"node skipped", "skipped"}, {"node missing", "not in channel"},
		{"node fold", "folded run"}, {"node group", "skip group"},
	} {
		wd := float64(len(n.label))*charW + 2*padX
		fmt.Fprintf(&b, `<g class="%s"><rect x="%s" y="4" width="%s" height="24" rx="4"/><text x="%s" y="20" text-anchor="middle">%s</text></g>`+"\n", n.class, f(x), f(wd), f(x+wd/2), n.label)
		x += wd + 12
	}
	w, x = x, 4
	items := []struct{ kind, label string }{{graph.EdgeReplaces, "replaces"}, {graph.EdgeSkips, "skips"}, {graph.EdgeSkipRange, "skipRange (bracket: bundles covered)"}}
	for _, it := range items {
		class, marker := edgeClass(it.kind, Unmarked)
		fmt.Fprintf(&b, `<path class="%s" d="M%s,52 H%s" marker-end="url(#%s-%s)"/><text x="%s" y="56">%s</text>`+"\n", class, f(x), f(x+40), id, marker, f(x+46), it.label)
		x += 46 + float64(len(it.label))*charW + 18
	}
	if diff {
		for _, it := range []struct {
			m     Mark
			label string
		}{{Added, "edge added"}, {Removed, "edge lost"}} {
			class, marker := edgeClass(graph.EdgeReplaces, it.m)
			fmt.Fprintf(&b, `<path class="%s" d="M%s,52 H%s" marker-end="url(#%s-%s)"/><text x="%s" y="56">%s</text>`+"\n", class, f(x), f(x+40), id, marker, f(x+46), it.label)
			x += 46 + float64(len(it.label))*charW + 18
		}
	}
	w = max(w, x)
	const h = 64.0
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" role="img" aria-label="legend">`+"\n", f(w), f(h), f(w), f(h)) +
		b.String() + "</svg>\n"
}

// Channels lists the pictures of a Document: one per package and
// channel, titled "package / channel", with (default) and (deprecated)
// marks.
func Channels(doc *graph.Document) []Channel {
	var out []Channel
	for _, p := range doc.Packages {
		for _, ch := range p.Channels {
			out = append(out, Channel{Title: ChannelTitle(p, ch), Doc: ch})
		}
	}
	return out
}

// ChannelTitle is "package / channel" with (default) and (deprecated)
// as they apply.
func ChannelTitle(p graph.DocPackage, ch graph.DocChannel) string {
	t := p.Name + " / " + ch.Name
	if ch.Name == p.DefaultChannel {
		t += " (default)"
	}
	if ch.Deprecated || p.Deprecated {
		t += " (deprecated)"
	}
	return t
}

// Options choose how pictures are drawn.
type Options struct {
	// Expand draws every bundle as its own box (see Channel.Expand).
	Expand bool
}

// WriteSVG draws a Document as one standalone SVG document: a legend,
// then per package its channels, each in a framed cluster, side by side
// while they fit in MaxDocWidth.
func WriteSVG(w io.Writer, doc *graph.Document) error { return WriteSVGWith(w, doc, Options{}) }

// MaxDocWidth is how wide a row of channel pictures in one SVG document
// grows before the next channel starts a new row.
const MaxDocWidth = 1240.0

// WriteSVGWith is WriteSVG with options.
func WriteSVGWith(w io.Writer, doc *graph.Document, o Options) error {
	const head, legendH, titleH, gap = 34.0, 72.0, 26.0, 24.0
	var body strings.Builder
	width, y := 780.0, head+legendH
	n := 0
	for _, p := range doc.Packages {
		x, rowH := margin, 0.0
		for _, ch := range p.Channels {
			l := Lay(Channel{Title: ChannelTitle(p, ch), Doc: ch, Expand: o.Expand})
			cw, chH := max(l.Width, float64(len([]rune(printable.Name(ChannelTitle(p, ch)))))*charW+2*padX), l.Height+titleH
			if x > margin && x+cw > MaxDocWidth {
				y += rowH + gap
				x, rowH = margin, 0
			}
			fmt.Fprintf(&body, `<g transform="translate(%s,%s)"><rect class="cluster" x="0" y="0" width="%s" height="%s" rx="6"/><text class="title" x="%s" y="18">%s</text>`+"\n",
				f(x), f(y), f(cw), f(chH), f(padX), Escape(ChannelTitle(p, ch)))
			fmt.Fprintf(&body, `<g transform="translate(0,%s)">`+"\n", f(titleH))
			l.body(&body, "g")
			body.WriteString("</g></g>\n")
			x += cw + gap
			rowH = max(rowH, chH)
			width = max(width, x-gap+margin)
			n++
		}
		y += rowH + gap
	}
	if n == 0 {
		body.WriteString(`<text x="14" y="130">no channel to draw</text>` + "\n")
		y += 40
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s">`+"\n", f(width), f(y), f(width), f(y))
	b.WriteString("<style>\n" + CSS + "</style>\n")
	b.WriteString(`<rect x="0" y="0" width="100%" height="100%" fill="#fff"/>` + "\n")
	defs(&b, "g")
	fmt.Fprintf(&b, `<text class="title" x="14" y="24">%s</text>`+"\n", Escape(docTitle(doc)))
	fmt.Fprintf(&b, `<g transform="translate(10,%s)">%s</g>`+"\n", f(head), strings.TrimSuffix(Legend(false, "lg"), "\n"))
	b.WriteString(body.String())
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func docTitle(doc *graph.Document) string {
	var names []string
	for _, p := range doc.Packages {
		names = append(names, p.Name)
	}
	if len(names) == 1 {
		return "Upgrade graph of " + names[0]
	}
	return "Upgrade graphs"
}
