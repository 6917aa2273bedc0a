// Package draw lays out a channel's upgrade graph and draws it as SVG, or
// as a self-contained HTML page of SVG pictures, with no external tool:
// a layered layout (newest at the top, each edge pointing up), bundles
// ordered within a layer by barycenter sweeps to cut crossings, replaces
// and skips as arrows, and each skipRange as one bracket beside the graph
// spanning the bundles it covers (drawing one arrow per covered bundle
// grows with the square of the channel and reads as a smear).
package draw

import (
	"sort"

	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/printable"
)

// Mark colours a bundle or edge of a diff picture.
type Mark int

// Marks.
const (
	Unmarked Mark = iota
	Added
	Removed
)

// EdgeKey names an edge: from, to and kind (graph.EdgeReplaces, ...).
type EdgeKey struct{ From, To, Kind string }

// Channel is what one picture shows: a channel, its title, and for a diff
// the edges and bundles to colour.
type Channel struct {
	Title   string
	Doc     graph.DocChannel
	Edges   map[EdgeKey]Mark
	Bundles map[string]Mark
}

// Sizes of the drawing, in SVG user units (pixels). Text is monospace so
// that a label's width is known without font metrics.
const (
	charW    = 7.3
	lineH    = 15.0
	padX     = 8.0
	padY     = 6.0
	gapX     = 28.0
	gapY     = 34.0
	laneW    = 9.0
	margin   = 14.0
	bulgeMin = 26.0
	bulgeMax = 140.0
)

// Box is a bundle as drawn: its top-left corner, size and text lines.
type Box struct {
	Name       string
	Lines      []string
	X, Y, W, H float64
	Layer      int
	Head       bool
	Deprecated bool
	Skipped    bool
	// Missing: a bundle some entry replaces or skips that the channel
	// does not hold.
	Missing bool
	Mark    Mark
}

// Link is a replaces or skips edge between two boxes (indexes).
type Link struct {
	From, To int
	Kind     string
	Mark     Mark
}

// Span is a skipRange: To's range covers the bundles drawn between Top and
// Bottom (their centres); the bracket stands in lane Lane left of the
// boxes.
type Span struct {
	To          int
	Range       string
	Covered     int
	Top, Bottom float64
	Lane        int
	Mark        Mark
}

// Layout is a channel placed on the plane.
type Layout struct {
	Boxes         []Box
	Links         []Link
	Spans         []Span
	Width, Height float64
	Layers        int
	// Left is where the boxes begin (the brackets' lanes lie before it).
	Left float64
}

// Lay places a channel: layers by longest path to a head (a bundle's layer
// is one more than the highest layer of what it upgrades to, so every edge
// points up and the heads are on top), order within layers by barycenter
// sweeps, then coordinates. Edges that close a cycle are kept but take no
// part in layering. Same input, same layout.
func Lay(ch Channel) *Layout {
	l := &Layout{}
	index := map[string]int{}
	skipRange := map[string]string{}
	for _, e := range ch.Doc.Edges {
		if e.Kind == graph.EdgeSkipRange {
			skipRange[e.To] = e.SkipRange
		}
	}
	heads := map[string]bool{}
	for _, h := range ch.Doc.Heads {
		heads[h] = true
	}
	add := func(b Box) int {
		index[b.Name] = len(l.Boxes)
		l.Boxes = append(l.Boxes, b)
		return len(l.Boxes) - 1
	}
	for _, b := range ch.Doc.Bundles {
		if _, dup := index[b.Name]; dup {
			continue
		}
		lines := []string{printable.Name(b.Name)}
		if b.Version != "" {
			lines = append(lines, b.Version)
		}
		if r, ok := skipRange[b.Name]; ok {
			lines = append(lines, "skipRange "+printable.Name(r))
		}
		add(Box{Name: b.Name, Lines: lines, Head: heads[b.Name], Deprecated: b.Deprecated, Skipped: b.Skipped, Mark: ch.Bundles[b.Name]})
	}
	for _, e := range ch.Doc.Edges {
		if _, ok := index[e.From]; !ok {
			add(Box{Name: e.From, Lines: []string{printable.Name(e.From), "(not in channel)"}, Missing: true, Mark: ch.Bundles[e.From]})
		}
		if _, ok := index[e.To]; !ok {
			add(Box{Name: e.To, Lines: []string{printable.Name(e.To), "(not in channel)"}, Missing: true, Mark: ch.Bundles[e.To]})
		}
	}
	n := len(l.Boxes)
	out := make([][]int, n)
	spanOf := map[int]*Span{}
	var spanOrder []int
	for _, e := range ch.Doc.Edges {
		f, t := index[e.From], index[e.To]
		out[f] = append(out[f], t)
		m := ch.Edges[EdgeKey{e.From, e.To, e.Kind}]
		if e.Kind != graph.EdgeSkipRange {
			l.Links = append(l.Links, Link{From: f, To: t, Kind: e.Kind, Mark: m})
			continue
		}
		s := spanOf[t]
		if s == nil {
			s = &Span{To: t, Range: e.SkipRange}
			spanOf[t] = s
			spanOrder = append(spanOrder, t)
		}
		s.Covered++
		if m > s.Mark {
			s.Mark = m
		}
	}
	layer := layers(out)
	for i := range l.Boxes {
		l.Boxes[i].Layer = layer[i]
		if layer[i]+1 > l.Layers {
			l.Layers = layer[i] + 1
		}
	}
	rows := order(l.Boxes, l.Links, l.Layers)
	for _, t := range spanOrder {
		l.Spans = append(l.Spans, *spanOf[t])
	}
	l.place(rows, ch.Doc.Edges, index)
	return l
}

// layers gives each node its longest-path distance to a sink, following
// out; an edge back into the path being walked (a cycle) is ignored.
func layers(out [][]int) []int {
	const (
		unseen = iota
		open
		done
	)
	state := make([]int, len(out))
	layer := make([]int, len(out))
	var visit func(int)
	visit = func(v int) {
		state[v] = open
		for _, w := range out[v] {
			if state[w] == unseen {
				visit(w)
			}
			if state[w] == done && layer[w]+1 > layer[v] {
				layer[v] = layer[w] + 1
			}
		}
		state[v] = done
	}
	for v := range out {
		if state[v] == unseen {
			visit(v)
		}
	}
	return layer
}

// order sorts the boxes of each layer: first as given (highest version
// first), then by the mean position of their replaces and skips
// neighbours, sweeping down then up a few times.
func order(boxes []Box, links []Link, nLayers int) [][]int {
	rows := make([][]int, nLayers)
	for i, b := range boxes {
		rows[b.Layer] = append(rows[b.Layer], i)
	}
	pos := make([]float64, len(boxes))
	setPos := func() {
		for _, r := range rows {
			for k, v := range r {
				// Centred, so that layers of different widths compare.
				pos[v] = float64(k) - float64(len(r)-1)/2
			}
		}
	}
	setPos()
	up := make([][]int, len(boxes))   // neighbours in layers above
	down := make([][]int, len(boxes)) // neighbours in layers below
	for _, k := range links {
		a, b := k.From, k.To
		if boxes[a].Layer == boxes[b].Layer {
			continue
		}
		if boxes[a].Layer < boxes[b].Layer {
			a, b = b, a
		}
		// a is below b.
		up[a] = append(up[a], b)
		down[b] = append(down[b], a)
	}
	sweep := func(r []int, nb [][]int) {
		bary := make(map[int]float64, len(r))
		for _, v := range r {
			if len(nb[v]) == 0 {
				bary[v] = pos[v]
				continue
			}
			s := 0.0
			for _, w := range nb[v] {
				s += pos[w]
			}
			bary[v] = s / float64(len(nb[v]))
		}
		sort.SliceStable(r, func(i, j int) bool { return bary[r[i]] < bary[r[j]] })
	}
	for it := 0; it < 4; it++ {
		for li := 1; li < nLayers; li++ {
			sweep(rows[li], up)
			setPos()
		}
		for li := nLayers - 2; li >= 0; li-- {
			sweep(rows[li], down)
			setPos()
		}
	}
	return rows
}

// place gives the boxes their coordinates: layers top down, each centred
// on the widest; the skipRange brackets lanes to the left, and room to the
// right for the arcs of edges that span several layers.
func (l *Layout) place(rows [][]int, edges []graph.DocEdge, index map[string]int) {
	maxRow := 0.0
	for _, r := range rows {
		w := 0.0
		for k, v := range r {
			b := &l.Boxes[v]
			b.W, b.H = boxSize(b.Lines)
			if k > 0 {
				w += gapX
			}
			w += b.W
		}
		if w > maxRow {
			maxRow = w
		}
	}
	// Lanes first need the boxes' heights (y), not x: place y.
	y := margin
	for _, r := range rows {
		h := 0.0
		for _, v := range r {
			if l.Boxes[v].H > h {
				h = l.Boxes[v].H
			}
		}
		for _, v := range r {
			l.Boxes[v].Y = y + (h-l.Boxes[v].H)/2
		}
		y += h + gapY
	}
	l.Height = y - gapY + margin
	if len(rows) == 0 {
		l.Height = 2 * margin
	}
	lanes := l.assignLanes(edges, index)
	l.Left = margin + float64(lanes)*laneW
	if lanes > 0 {
		l.Left += laneW
	}
	right := 0.0
	for _, r := range rows {
		w := 0.0
		for k, v := range r {
			if k > 0 {
				w += gapX
			}
			w += l.Boxes[v].W
		}
		x := l.Left + (maxRow-w)/2
		for _, v := range r {
			l.Boxes[v].X = x
			x += l.Boxes[v].W + gapX
			if x-gapX > right {
				right = x - gapX
			}
		}
	}
	bulge := 0.0
	for _, k := range l.Links {
		if d := l.bulge(k); d > bulge {
			bulge = d
		}
	}
	l.Width = right + bulge + margin
	if l.Width < l.Left+margin {
		l.Width = l.Left + margin
	}
}

// assignLanes finds each skipRange bracket's extent and gives it the
// lowest lane no overlapping bracket holds; it returns the lane count.
func (l *Layout) assignLanes(edges []graph.DocEdge, index map[string]int) int {
	at := map[int]int{}
	for i := range l.Spans {
		at[l.Spans[i].To] = i
		l.Spans[i].Top, l.Spans[i].Bottom = -1, -1
	}
	for _, e := range edges {
		if e.Kind != graph.EdgeSkipRange {
			continue
		}
		s := &l.Spans[at[index[e.To]]]
		b := l.Boxes[index[e.From]]
		c := b.Y + b.H/2
		if s.Top < 0 || c < s.Top {
			s.Top = c
		}
		if c > s.Bottom {
			s.Bottom = c
		}
	}
	type iv struct {
		lo, hi float64
		i      int
	}
	ivs := make([]iv, len(l.Spans))
	for i, s := range l.Spans {
		t := l.Boxes[s.To]
		lo := min(s.Top, t.Y+t.H/2)
		ivs[i] = iv{lo, max(s.Bottom, t.Y+t.H/2), i}
	}
	sort.SliceStable(ivs, func(a, b int) bool { return ivs[a].lo < ivs[b].lo })
	var laneEnd []float64 // per lane, where its last bracket ends
	for _, v := range ivs {
		lane := -1
		for k, end := range laneEnd {
			if end < v.lo-2 {
				lane = k
				break
			}
		}
		if lane < 0 {
			lane = len(laneEnd)
			laneEnd = append(laneEnd, 0)
		}
		laneEnd[lane] = v.hi
		l.Spans[v.i].Lane = lane
	}
	return len(laneEnd)
}

// LaneX is the x of a bracket's lane: lane 0 nearest the boxes.
func (l *Layout) LaneX(lane int) float64 { return l.Left - laneW*float64(lane+1) }

// bulge is how far right of the boxes an edge arcs: 0 for an edge between
// adjacent layers (drawn straight), more the more layers it spans.
func (l *Layout) bulge(k Link) float64 {
	span := l.Boxes[k.From].Layer - l.Boxes[k.To].Layer
	if span < 0 {
		span = -span
	}
	if span == 1 {
		return 0
	}
	return min(bulgeMin+8*float64(span), bulgeMax)
}

func boxSize(lines []string) (float64, float64) {
	w := 0
	for _, s := range lines {
		if n := len([]rune(s)); n > w {
			w = n
		}
	}
	return float64(w)*charW + 2*padX, float64(len(lines))*lineH + 2*padY
}
