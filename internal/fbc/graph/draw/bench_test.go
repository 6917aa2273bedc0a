package draw

import (
	"fmt"
	"io"
	"testing"

	"github.com/opmkit/opm/internal/fbc/graph"
)

// The layout and the SVG of one channel of 300 and 1,000 bundles (see
// synthetic: replaces chain, skips, z-stream branches, skipRanges).
func BenchmarkLay300(b *testing.B)  { benchLay(b, 300) }
func BenchmarkLay1000(b *testing.B) { benchLay(b, 1000) }

func BenchmarkSVG300(b *testing.B)  { benchSVG(b, 300) }
func BenchmarkSVG1000(b *testing.B) { benchSVG(b, 1000) }

func benchLay(b *testing.B, n int) {
	ch := Channel{Doc: synthetic(n)}
	b.ReportAllocs()
	for b.Loop() {
		Lay(ch)
	}
}

func benchSVG(b *testing.B, n int) {
	doc := &graph.Document{Packages: []graph.DocPackage{{Name: "big", DefaultChannel: "stable", Channels: []graph.DocChannel{synthetic(n)}}}}
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteSVG(io.Discard, doc); err != nil {
			b.Fatal(err)
		}
	}
}

// Issue 40's channel (entry i replaces i-1, skipRange "<i.0.0"): the
// layout and the SVG page of 2,000 bundles, from a Document with a
// skipRange edge per covered bundle (graph.NewDocChannel; Lay reads them
// only for the range) and, *Compact*, from one holding each skipRange once
// in Ranges (graph.NewDocChannelRanges, what the commands draw from).
func BenchmarkLayHostile2000(b *testing.B) {
	ch := Channel{Doc: hostile(b, 2000)}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Lay(ch)
	}
}

func BenchmarkSVGHostile2000(b *testing.B) { benchSVGHostile(b, hostile(b, 2000)) }

func BenchmarkLayHostileCompact2000(b *testing.B) {
	ch := Channel{Doc: compactOf(hostile(b, 2000))}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Lay(ch)
	}
}

func BenchmarkSVGHostileCompact2000(b *testing.B) { benchSVGHostile(b, compactOf(hostile(b, 2000))) }

func benchSVGHostile(b *testing.B, dc graph.DocChannel) {
	doc := &graph.Document{Packages: []graph.DocPackage{{Name: "h", DefaultChannel: "stable", Channels: []graph.DocChannel{dc}}}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := WriteSVG(io.Discard, doc); err != nil {
			b.Fatal(err)
		}
	}
}

// compactOf is dc without its skipRange edges, as
// graph.NewDocChannelRanges gives it.
func compactOf(dc graph.DocChannel) graph.DocChannel {
	var edges []graph.DocEdge
	for _, e := range dc.Edges {
		if e.Kind != graph.EdgeSkipRange {
			edges = append(edges, e)
		}
	}
	dc.Edges = edges
	return dc
}

// The layout of the hostile channel given one skipRange edge per range, at
// 500 to 8,000 bundles: time and memory grow as n log n.
func BenchmarkLayHostileRanges500(b *testing.B)  { benchHostileRanges(b, 500) }
func BenchmarkLayHostileRanges2000(b *testing.B) { benchHostileRanges(b, 2000) }
func BenchmarkLayHostileRanges8000(b *testing.B) { benchHostileRanges(b, 8000) }

func benchHostileRanges(b *testing.B, n int) {
	ch := Channel{Doc: hostileRanges(n)}
	b.ReportAllocs()
	for b.Loop() {
		Lay(ch)
	}
}

// hostileRanges is hostile(n) built directly with one skipRange edge per
// range (graph.NewDocChannel would list n²/2 edges).
func hostileRanges(n int) graph.DocChannel {
	dc := graph.DocChannel{Name: "stable", Heads: []string{fmt.Sprintf("h.v%d.0.0", n-1)}}
	for i := n - 1; i >= 0; i-- {
		name := fmt.Sprintf("h.v%d.0.0", i)
		dc.Bundles = append(dc.Bundles, graph.DocBundle{Name: name, Version: fmt.Sprintf("%d.0.0", i)})
		if i > 0 {
			dc.Edges = append(dc.Edges, graph.DocEdge{From: fmt.Sprintf("h.v%d.0.0", i-1), To: name, Kind: graph.EdgeReplaces},
				graph.DocEdge{To: name, Kind: graph.EdgeSkipRange, SkipRange: fmt.Sprintf("<%d.0.0", i)})
		}
	}
	return dc
}
