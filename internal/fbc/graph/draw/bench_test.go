package draw

import (
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
// layout and the SVG page of 2,000 bundles, from the Document the graph
// package gives (today a skipRange edge per covered bundle, which Lay reads
// only for the range).
func BenchmarkLayHostile2000(b *testing.B) {
	ch := Channel{Doc: hostile(b, 2000)}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Lay(ch)
	}
}

func BenchmarkSVGHostile2000(b *testing.B) {
	doc := &graph.Document{Packages: []graph.DocPackage{{Name: "h", DefaultChannel: "stable", Channels: []graph.DocChannel{hostile(b, 2000)}}}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := WriteSVG(io.Discard, doc); err != nil {
			b.Fatal(err)
		}
	}
}
