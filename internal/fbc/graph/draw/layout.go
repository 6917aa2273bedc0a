// Package draw lays out a channel's upgrade graph and draws it as SVG, or
// as a self-contained HTML page of SVG pictures, with no external tool:
// a layered layout (newest at the top, each edge pointing up), bundles
// ordered within a layer by barycenter sweeps to cut crossings, replaces
// and skips as arrows, and each skipRange as one bracket beside the graph
// spanning the bundles it covers (drawing one arrow per covered bundle
// grows with the square of the channel and reads as a smear).
package draw

import (
	"fmt"
	"sort"

	"github.com/blang/semver/v4"

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
	// Expand draws every bundle as its own box: no folded runs, no skip
	// groups.
	Expand bool
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

// Kinds of box.
const (
	// KindBundle is one bundle.
	KindBundle = iota
	// KindFold is a run of plain replaces steps drawn as one box.
	KindFold
	// KindGroup is the bundles one entry skips, that lead nowhere else,
	// drawn as one box beside that entry.
	KindGroup
)

// Box is a bundle, a folded run or a skip group as drawn: its top-left
// corner, size and text lines. Members are the bundles it stands for, in
// version order (one for a bundle's box).
type Box struct {
	Name       string
	Kind       int
	Members    []string
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
	// beside: a skip group's entry (box index), drawn next to it.
	beside int
}

// Link is a replaces or skips edge between two boxes (indexes); a skip
// group's link has Kind KindGroupLink.
type Link struct {
	From, To int
	Kind     string
	Mark     Mark
}

// KindGroupLink is the Kind of the link from a skip group to its entry.
const KindGroupLink = "group"

// Span is a skipRange: To's range covers Covered bundles, drawn between
// Top and Bottom (their boxes' centres); the bracket stands in lane Lane
// left of the boxes. A folded run's skipRanges make one span.
type Span struct {
	To          int
	Range       string
	Covered     int
	Top, Bottom float64
	Lane        int
	Mark        Mark
	nodes       []int // segment tree nodes of the covered positions
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

	tree  segTree
	boxAt []int // box of each position in version order (-1: none)
}

// node is a bundle of the channel, or one an edge names that it lacks.
type node struct {
	name, version string
	ver           semver.Version
	hasVer        bool
	head, dep     bool
	skipped, miss bool
	mark          Mark
	rng           string // its skipRange
	pos           int    // in version order, -1 without a version
	ivs           []interval
	in, out       []int // explicit (replaces, skips) neighbours, deduplicated
	inKinds       []string
	outKinds      []string
	box           int
}

// Lay places a channel: skip groups and folded runs first (unless
// ch.Expand), then layers by longest path to a head (a box's layer is one
// more than the highest layer of what it upgrades to, so every edge points
// up and the heads are on top), order within layers by barycenter sweeps,
// then coordinates, a layer wider than the picture wrapped onto several
// lines. A skipRange takes part as intervals of versions, never as an edge
// per covered bundle, so a layout costs n log n in the channel. Edges that
// close a cycle are kept but take no part in layering. Same input, same
// layout.
func Lay(ch Channel) *Layout {
	l := &Layout{}
	nodes, index := readNodes(ch)
	n := len(nodes)

	// Positions in version order, and each range's intervals over them.
	var order []int
	for i := range nodes {
		if nodes[i].hasVer {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return nodes[order[a]].ver.LT(nodes[order[b]].ver) })
	vs := make([]semver.Version, len(order))
	for p, i := range order {
		nodes[i].pos = p
		vs[p] = nodes[i].ver
	}
	var owners []int
	for i := range nodes {
		nd := &nodes[i]
		if nd.rng == "" {
			continue
		}
		ivs, ok := coverage(nd.rng, vs)
		if !ok {
			continue
		}
		if nd.pos >= 0 {
			ivs = without(ivs, []int{nd.pos})
		}
		nd.ivs = ivs
		owners = append(owners, i)
	}
	// Per position: how many ranges cover it, a hash of which, and (when
	// one does) whose.
	cnt := make([]int, len(vs)+1)
	hash := make([]uint64, len(vs)+1)
	who := make([]int, len(vs)+1)
	for _, o := range owners {
		for _, iv := range nodes[o].ivs {
			cnt[iv.lo]++
			cnt[iv.hi]--
			hash[iv.lo] ^= mix(o)
			hash[iv.hi] ^= mix(o)
			who[iv.lo] += o
			who[iv.hi] -= o
		}
	}
	for p := 1; p < len(vs); p++ {
		cnt[p] += cnt[p-1]
		hash[p] ^= hash[p-1]
		who[p] += who[p-1]
	}
	covCnt := func(i int) int {
		if nodes[i].pos < 0 {
			return 0
		}
		return cnt[nodes[i].pos]
	}
	sig := func(i int) uint64 {
		if nodes[i].pos < 0 {
			return 0
		}
		return hash[nodes[i].pos]
	}

	for i := range nodes {
		nodes[i].box = -1
	}
	groupOf := make([]int, n) // entry a bundle is grouped beside, or -1
	for i := range groupOf {
		groupOf[i] = -1
	}
	if !ch.Expand {
		findGroups(nodes, groupOf, covCnt, func(i int) int { return who[nodes[i].pos] })
	}
	var folds [][]int
	if !ch.Expand {
		folds = findFolds(nodes, groupOf, sig)
	}

	// Boxes: bundles left alone, then folds, then groups.
	folded := make([]bool, n)
	for _, f := range folds {
		for _, i := range f {
			folded[i] = true
		}
	}
	for i := range nodes {
		nd := &nodes[i]
		if groupOf[i] >= 0 || folded[i] {
			continue
		}
		lines := []string{printable.Name(nd.name)}
		switch {
		case nd.miss:
			lines = append(lines, "(not in channel)")
		case nd.version != "":
			lines = append(lines, nd.version)
		}
		if nd.rng != "" {
			lines = append(lines, "skipRange "+printable.Name(nd.rng))
		}
		nd.box = len(l.Boxes)
		l.Boxes = append(l.Boxes, Box{Name: nd.name, Kind: KindBundle, Members: []string{nd.name}, Lines: lines, Head: nd.head, Deprecated: nd.dep, Skipped: nd.skipped, Missing: nd.miss, Mark: nd.mark, beside: -1})
	}
	for _, f := range folds {
		b := len(l.Boxes)
		var names []string
		ranges := 0
		for _, i := range f {
			nodes[i].box = b
			names = append(names, nodes[i].name)
			if nodes[i].rng != "" {
				ranges++
			}
		}
		first, last := nodes[f[0]], nodes[f[len(f)-1]]
		lines := []string{printable.Name(first.name) + " → … →", printable.Name(last.name)}
		lines = append(lines, fmt.Sprintf("%s … %s, %d bundles", first.version, last.version, len(f)))
		switch {
		case ranges == 1:
			for _, i := range f {
				if nodes[i].rng != "" {
					lines = append(lines, "skipRange "+printable.Name(nodes[i].rng)+" ("+printable.Name(nodes[i].version)+")")
				}
			}
		case ranges > 1:
			lines = append(lines, fmt.Sprintf("%d with a skipRange", ranges))
		}
		l.Boxes = append(l.Boxes, Box{Name: last.name, Kind: KindFold, Members: names, Lines: lines, beside: -1})
	}
	groups := map[int][]int{}
	var groupOrder []int
	for i := range nodes {
		if x := groupOf[i]; x >= 0 {
			if groups[x] == nil {
				groupOrder = append(groupOrder, x)
			}
			groups[x] = append(groups[x], i)
		}
	}
	for _, x := range groupOrder {
		ms := groups[x]
		sort.SliceStable(ms, func(a, b int) bool { return nodes[ms[a]].ver.LT(nodes[ms[b]].ver) })
		b := len(l.Boxes)
		var names []string
		skipped := true
		for _, i := range ms {
			nodes[i].box = b
			names = append(names, nodes[i].name)
			skipped = skipped && nodes[i].skipped
		}
		lines := []string{"skipped by " + printable.Name(nodes[x].name) + ":"}
		lines = append(lines, fmt.Sprintf("%s … %s, %d bundles", nodes[ms[0]].version, nodes[ms[len(ms)-1]].version, len(ms)))
		lines = append(lines, nameLines(names)...)
		l.Boxes = append(l.Boxes, Box{Name: "skipped by " + nodes[x].name, Kind: KindGroup, Members: names, Lines: lines, Skipped: skipped, beside: x})
	}
	for i := range l.Boxes {
		if x := l.Boxes[i].beside; x >= 0 {
			l.Boxes[i].beside = nodes[x].box
		}
	}

	// Links between boxes, each once.
	type lk struct {
		f, t int
		kind string
	}
	seen := map[lk]int{}
	for i := range nodes {
		for k, j := range nodes[i].out {
			fb, tb := nodes[i].box, nodes[j].box
			if fb == tb {
				continue
			}
			kind := nodes[i].outKinds[k]
			if l.Boxes[fb].Kind == KindGroup {
				kind = KindGroupLink
			}
			m := ch.Edges[EdgeKey{nodes[i].name, nodes[j].name, nodes[i].outKinds[k]}]
			key := lk{fb, tb, kind}
			if at, ok := seen[key]; ok {
				l.Links[at].Mark = max(l.Links[at].Mark, m)
				continue
			}
			seen[key] = len(l.Links)
			l.Links = append(l.Links, Link{From: fb, To: tb, Kind: kind, Mark: m})
		}
	}

	// Spans: a bundle's skipRange, or the union of a fold's.
	l.tree = newSegTree(len(vs))
	l.boxAt = make([]int, len(vs))
	for p, i := range order {
		l.boxAt[p] = nodes[i].box
	}
	rangeMark := map[string]Mark{}
	for k, m := range ch.Edges {
		if k.Kind == graph.EdgeSkipRange && m > rangeMark[k.To] {
			rangeMark[k.To] = m
		}
	}
	spanAt := map[int]int{}
	for _, o := range owners {
		b := nodes[o].box
		if _, done := spanAt[b]; done {
			continue
		}
		spanAt[b] = -1
		s := Span{To: b, Range: nodes[o].rng, Mark: rangeMark[nodes[o].name]}
		var ivs []interval
		if l.Boxes[b].Kind == KindFold {
			var lists [][]interval
			var own []int
			ranges := 0
			for _, name := range l.Boxes[b].Members {
				i := index[name]
				lists = append(lists, nodes[i].ivs)
				if nodes[i].pos >= 0 {
					own = append(own, nodes[i].pos)
				}
				if nodes[i].rng != "" {
					ranges++
					s.Mark = max(s.Mark, rangeMark[name])
				}
			}
			sort.Ints(own)
			ivs = without(union(lists...), own)
			if ranges > 1 {
				s.Range = fmt.Sprintf("(the skipRanges of %d folded bundles)", ranges)
			}
		} else {
			ivs = nodes[o].ivs
		}
		s.Covered = size(ivs)
		if s.Covered == 0 {
			continue
		}
		s.nodes = l.tree.nodes(ivs)
		spanAt[b] = len(l.Spans)
		l.Spans = append(l.Spans, s)
	}

	l.layer()
	rows := orderRows(l.Boxes, l.Links, l.Layers)
	l.place(rows)
	return l
}

// readNodes reads the channel's bundles, and the bundles its edges name
// that it lacks; index finds a node by name.
func readNodes(ch Channel) ([]node, map[string]int) {
	var nodes []node
	index := map[string]int{}
	heads := map[string]bool{}
	for _, h := range ch.Doc.Heads {
		heads[h] = true
	}
	add := func(nd node) int {
		nd.pos = -1
		index[nd.name] = len(nodes)
		nodes = append(nodes, nd)
		return len(nodes) - 1
	}
	for _, b := range ch.Doc.Bundles {
		if _, dup := index[b.Name]; dup {
			continue
		}
		nd := node{name: b.Name, version: b.Version, head: heads[b.Name], dep: b.Deprecated, skipped: b.Skipped, mark: ch.Bundles[b.Name]}
		if v, err := semver.Parse(b.Version); err == nil {
			nd.ver, nd.hasVer = v, true
		}
		add(nd)
	}
	// Only a skipRange's text and entry matter: its coverage is read
	// from the versions. A document lists each once in Ranges; one built
	// without Ranges gives it as edges (those of one range together).
	setRange := func(to, rng string) {
		if i, ok := index[to]; ok && nodes[i].rng == "" {
			nodes[i].rng = rng
		}
	}
	for _, r := range ch.Doc.Ranges {
		setRange(r.To, r.SkipRange)
	}
	type ek struct{ f, t int }
	seen := map[ek]bool{}
	last := ""
	for _, e := range ch.Doc.Edges {
		if e.Kind == graph.EdgeSkipRange {
			if e.To != last {
				last = e.To
				setRange(e.To, e.SkipRange)
			}
			continue
		}
		for _, name := range []string{e.From, e.To} {
			if _, ok := index[name]; !ok {
				add(node{name: name, miss: true, mark: ch.Bundles[name]})
			}
		}
		f, t := index[e.From], index[e.To]
		if seen[ek{f, t}] {
			// One arrow between two bundles: skips over replaces when
			// both (the drawing showed both before; the first wins).
			continue
		}
		seen[ek{f, t}] = true
		nodes[f].out = append(nodes[f].out, t)
		nodes[f].outKinds = append(nodes[f].outKinds, e.Kind)
		nodes[t].in = append(nodes[t].in, f)
		nodes[t].inKinds = append(nodes[t].inKinds, e.Kind)
	}
	return nodes, index
}

// findGroups finds, for each entry X, the bundles X skips (by skips or its
// skipRange) from which nothing else leads: every edge out of them goes to
// X or to another of them, nothing but each other leads into them, and
// they have no skipRange of their own and are no head, deprecated or
// marked. Two or more make a group (groupOf[i] = X).
func findGroups(nodes []node, groupOf []int, covCnt func(int) int, coverer func(int) int) {
	// X of each candidate: the one range covering it, else the one entry
	// skipping it.
	target := make([]int, len(nodes))
	for i := range nodes {
		target[i] = -1
		nd := &nodes[i]
		if nd.head || nd.dep || nd.miss || nd.mark != Unmarked || nd.rng != "" {
			continue
		}
		x := -1
		switch c := covCnt(i); {
		case c > 1:
			continue
		case c == 1:
			x = coverer(i)
		}
		for k, j := range nd.out {
			if nd.outKinds[k] != graph.EdgeSkips {
				continue
			}
			if x >= 0 && j != x {
				x = -2
				break
			}
			x = j
		}
		if x >= 0 {
			target[i] = x
		}
	}
	// Drop candidates with an edge to or from outside their group until
	// none has one (a drop can only cause drops, so this ends).
	bad := func(i int) bool {
		x := target[i]
		for _, j := range nodes[i].out {
			if j != x && target[j] != x {
				return true
			}
		}
		for _, j := range nodes[i].in {
			if target[j] != x {
				return true
			}
		}
		return false
	}
	var work []int
	for i := range nodes {
		if target[i] >= 0 {
			work = append(work, i)
		}
	}
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		if target[i] < 0 || !bad(i) {
			continue
		}
		target[i] = -1
		for _, j := range append(append([]int(nil), nodes[i].in...), nodes[i].out...) {
			if target[j] >= 0 {
				work = append(work, j)
			}
		}
	}
	count := map[int]int{}
	for i := range nodes {
		if target[i] >= 0 {
			count[target[i]]++
		}
	}
	for i := range nodes {
		if x := target[i]; x >= 0 && count[x] >= 2 && target[x] < 0 {
			groupOf[i] = x
		}
	}
}

// findFolds finds the runs of plain replaces steps worth one box: bundles
// with at most one replaces in and out (edges point from the older bundle
// to the newer) and no skips either way, not heads, deprecated, skipped,
// missing, marked or grouped. A run holds together while the skipRanges
// covering each step are the same, or differ only by the newer step's own
// (a range on every release over all before it); runs of fewer than three
// are left alone. Runs are listed oldest first.
func findFolds(nodes []node, groupOf []int, sig func(int) uint64) [][]int {
	ok := make([]bool, len(nodes))
	older := func(i int) int { // the one bundle i replaces (not grouped), -1 for none, -2 for more or a skip
		j := -1
		for k, f := range nodes[i].in {
			if groupOf[f] >= 0 {
				continue
			}
			if j >= 0 || nodes[i].inKinds[k] != graph.EdgeReplaces {
				return -2
			}
			j = f
		}
		return j
	}
	for i := range nodes {
		nd := &nodes[i]
		if nd.head || nd.dep || nd.skipped || nd.miss || nd.mark != Unmarked || groupOf[i] >= 0 || !nd.hasVer {
			continue
		}
		if len(nd.out) > 1 || len(nd.out) == 1 && nd.outKinds[0] != graph.EdgeReplaces {
			continue
		}
		if older(i) == -2 {
			continue
		}
		ok[i] = true
	}
	// joined: newer j, replacing i, continues i's run.
	// A newer step with a skipRange of its own joins only a step that has
	// one too (or the oldest bundle, whose range covers nothing): a range
	// on every release folds, a range per minor keeps the minors apart.
	joined := func(i, j int) bool {
		if !ok[i] || !ok[j] || older(j) != i {
			return false
		}
		if nodes[j].rng != "" && nodes[i].rng == "" && older(i) >= 0 {
			return false
		}
		return sig(i) == sig(j) || sig(i) == sig(j)^mix(j)
	}
	var runs [][]int
	for i := range nodes {
		if !ok[i] {
			continue
		}
		if j := older(i); j >= 0 && joined(j, i) {
			continue // not the oldest of its run
		}
		run := []int{i}
		for cur := i; len(nodes[cur].out) == 1 && len(run) <= len(nodes); {
			next := nodes[cur].out[0]
			if !joined(cur, next) {
				break
			}
			run = append(run, next)
			cur = next
		}
		if len(run) >= 3 {
			runs = append(runs, run)
		}
	}
	return runs
}

// nameLines lists names a few to a line, at most maxNameLines lines.
func nameLines(names []string) []string {
	const width, maxNameLines = 60, 8
	var lines []string
	cur := ""
	for k, n := range names {
		n = printable.Name(n)
		if k < len(names)-1 {
			n += ","
		}
		if cur != "" && len([]rune(cur))+1+len([]rune(n)) > width {
			if len(lines) == maxNameLines-1 {
				return append(lines, fmt.Sprintf("… and %d more", len(names)-k))
			}
			lines = append(lines, cur)
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += n
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// mix hashes a node index (splitmix64), for sets kept as XORs.
func mix(i int) uint64 {
	z := uint64(i) + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// layer gives each box (but skip groups, which stand beside their entry)
// its longest-path distance to a sink over the links and the skipRanges:
// a range reaches its covered boxes through the segment tree's nodes, an
// edge from each to the range's box, so a range costs log n edges.
func (l *Layout) layer() {
	nb := len(l.Boxes)
	base := l.tree.base
	type arc struct{ to, w int }
	out := make([][]arc, nb+2*base)
	for _, k := range l.Links {
		if k.Kind == KindGroupLink {
			continue
		}
		out[k.From] = append(out[k.From], arc{k.To, 1})
	}
	if len(l.Spans) > 0 {
		for p, b := range l.boxAt {
			if b >= 0 && l.Boxes[b].Kind != KindGroup {
				out[b] = append(out[b], arc{nb + base + p, 0})
			}
		}
		for i := 2; i < 2*base; i++ {
			out[nb+i] = append(out[nb+i], arc{nb + i/2, 0})
		}
		for _, s := range l.Spans {
			for _, t := range s.nodes {
				out[nb+t] = append(out[nb+t], arc{s.To, 1})
			}
		}
	}
	const (
		unseen = iota
		open
		done
	)
	state := make([]int8, len(out))
	layer := make([]int, len(out))
	// Iterative depth-first search: chains of thousands of bundles.
	type frame struct{ v, k int }
	for s := range nb {
		if state[s] != unseen {
			continue
		}
		stack := []frame{{s, 0}}
		state[s] = open
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.k < len(out[top.v]) {
				a := out[top.v][top.k]
				top.k++
				if state[a.to] == unseen {
					state[a.to] = open
					stack = append(stack, frame{a.to, 0})
				}
				continue
			}
			v := top.v
			for _, a := range out[v] {
				if state[a.to] == done && layer[a.to]+a.w > layer[v] {
					layer[v] = layer[a.to] + a.w
				}
			}
			state[v] = done
			stack = stack[:len(stack)-1]
		}
	}
	l.Layers = 0
	for i := range l.Boxes {
		l.Boxes[i].Layer = layer[i]
	}
	for i := range l.Boxes {
		if x := l.Boxes[i].beside; x >= 0 {
			l.Boxes[i].Layer = l.Boxes[x].Layer
		}
		l.Layers = max(l.Layers, l.Boxes[i].Layer+1)
	}
}

// orderRows sorts the boxes of each layer: first as given (highest version
// first), then by the mean position of their replaces and skips
// neighbours, sweeping down then up a few times; a skip group then goes
// right of its entry.
func orderRows(boxes []Box, links []Link, nLayers int) [][]int {
	rows := make([][]int, nLayers)
	beside := map[int][]int{}
	for i, b := range boxes {
		if b.beside >= 0 {
			beside[b.beside] = append(beside[b.beside], i)
			continue
		}
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
		if k.Kind == KindGroupLink || boxes[a].Layer == boxes[b].Layer {
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
	if len(beside) > 0 {
		for li, r := range rows {
			var withGroups []int
			for _, v := range r {
				withGroups = append(withGroups, v)
				withGroups = append(withGroups, beside[v]...)
			}
			rows[li] = withGroups
		}
	}
	return rows
}

// MaxRowWidth is how wide a line of boxes grows before the rest of its
// layer wraps onto the next line: with the brackets left of it and the
// arcs right of it, a picture stays within 1,200 px.
const MaxRowWidth = 860.0

// place gives the boxes their coordinates: layers top down, a layer wider
// than MaxRowWidth wrapped onto several lines, each line centred on the
// widest; the skipRange brackets' lanes to the left, and room to the right
// for the arcs of edges that span several layers.
func (l *Layout) place(rows [][]int) {
	var lines [][]int
	width := func(r []int) float64 {
		w := 0.0
		for k, v := range r {
			if k > 0 {
				w += gapX
			}
			w += l.Boxes[v].W
		}
		return w
	}
	for i := range l.Boxes {
		l.Boxes[i].W, l.Boxes[i].H = boxSize(l.Boxes[i].Lines)
	}
	for _, r := range rows {
		start, w := 0, 0.0
		for k, v := range r {
			bw := l.Boxes[v].W
			if k > start && w+gapX+bw > MaxRowWidth {
				lines = append(lines, r[start:k])
				start, w = k, 0
			}
			if k > start {
				w += gapX
			}
			w += bw
		}
		lines = append(lines, r[start:])
	}
	maxRow := 0.0
	for _, r := range lines {
		maxRow = max(maxRow, width(r))
	}
	// Lanes first need the boxes' heights (y), not x: place y.
	y := margin
	for _, r := range lines {
		h := 0.0
		for _, v := range r {
			h = max(h, l.Boxes[v].H)
		}
		for _, v := range r {
			l.Boxes[v].Y = y + (h-l.Boxes[v].H)/2
		}
		if len(r) > 0 {
			y += h + gapY
		}
	}
	l.Height = y - gapY + margin
	if len(l.Boxes) == 0 {
		l.Height = 2 * margin
	}
	lanes := l.assignLanes()
	l.Left = margin + float64(lanes)*laneW
	if lanes > 0 {
		l.Left += laneW
	}
	right := 0.0
	for _, r := range lines {
		x := l.Left + (maxRow-width(r))/2
		for _, v := range r {
			l.Boxes[v].X = x
			x += l.Boxes[v].W + gapX
			right = max(right, x-gapX)
		}
	}
	bulge := 0.0
	for _, k := range l.Links {
		bulge = max(bulge, l.bulge(k))
	}
	l.Width = max(right+bulge+margin, l.Left+margin)
}

// assignLanes finds each skipRange bracket's extent (the centres of the
// highest and lowest box it covers, from the segment tree) and gives it the
// lowest lane no overlapping bracket holds; it returns the lane count.
func (l *Layout) assignLanes() int {
	if len(l.Spans) == 0 {
		return 0
	}
	base := l.tree.base
	inf := 1e18
	lo, hi := make([]float64, 2*base), make([]float64, 2*base)
	for i := range lo {
		lo[i], hi[i] = inf, -inf
	}
	for p, b := range l.boxAt {
		if b >= 0 {
			c := l.Boxes[b].Y + l.Boxes[b].H/2
			lo[base+p], hi[base+p] = c, c
		}
	}
	for i := base - 1; i >= 1; i-- {
		lo[i], hi[i] = min(lo[2*i], lo[2*i+1]), max(hi[2*i], hi[2*i+1])
	}
	for i := range l.Spans {
		s := &l.Spans[i]
		s.Top, s.Bottom = inf, -inf
		for _, t := range s.nodes {
			s.Top, s.Bottom = min(s.Top, lo[t]), max(s.Bottom, hi[t])
		}
		if s.Top > s.Bottom { // covers only boxes not drawn (cannot happen)
			t := l.Boxes[s.To]
			s.Top, s.Bottom = t.Y+t.H/2, t.Y+t.H/2
		}
	}
	type iv struct {
		lo, hi float64
		i      int
	}
	ivs := make([]iv, len(l.Spans))
	for i, s := range l.Spans {
		t := l.Boxes[s.To]
		ivs[i] = iv{min(s.Top, t.Y+t.H/2), max(s.Bottom, t.Y+t.H/2), i}
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
