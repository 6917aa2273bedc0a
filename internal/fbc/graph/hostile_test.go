package graph

import (
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/opmkit/opm/internal/catalogtest"
	"github.com/opmkit/opm/internal/fbc"
)

// allocated is what f allocates, in bytes.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// hostileOps are the graph's uses of a channel's edges, each as a caller
// runs it.
func hostileOps(tb testing.TB, c *fbc.Catalog) map[string]func() {
	fail := func(err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	return map[string]func(){
		"mermaid": func() {
			_, err := WriteMermaid(io.Discard, c, MermaidOptions{V0Semantics: true})
			fail(err)
		},
		"dot": func() {
			doc, _, err := NewDocument(c, GraphOptions{CompactRanges: true})
			fail(err)
			fail(WriteDot(io.Discard, doc))
		},
		"path": func() {
			p, err := NewPackage(c, "h")
			fail(err)
			_, err = p.Path(PathQuery{From: "h.v1.0.0", To: "h.v2.0.0"})
			fail(err)
		},
		"from-range": func() {
			p, err := NewPackage(c, "h")
			fail(err)
			_, err = p.KeepForRange(PathQuery{}, ">=0.0.0")
			fail(err)
		},
		"reachable": func() {
			versions, err := Versions(c)
			fail(err)
			if r := Reachable(&c.Channels[0], "h.v"+fmt.Sprint(len(c.Bundles))+".0.0", versions); len(r) != len(c.Bundles) {
				tb.Fatalf("%d bundles reach the head, want all %d", len(r), len(c.Bundles))
			}
		},
	}
}

// TestHostileChannelMemory: issue 40's n² channel of 2,000 bundles is
// drawn, walked and searched allocating a bounded amount (an edge per
// covered bundle allocated 1 GB for the mermaid alone); the bound is
// generous, the figures are in bench/README.md.
func TestHostileChannelMemory(t *testing.T) {
	c := catalogtest.HostileCatalog(t, 2000, 0)
	for name, op := range hostileOps(t, c) {
		got := allocated(op)
		t.Logf("%s: %.1f MB allocated", name, float64(got)/(1<<20))
		if got > 64<<20 {
			t.Errorf("%s allocated %d MB over 2,000 bundles; want under 64 MB", name, got>>20)
		}
	}
}

// BenchmarkHostileChannel: each use of the n² channel from 500 to 8,000
// bundles (bench/README.md quotes the figures).
func BenchmarkHostileChannel(b *testing.B) {
	for _, n := range []int{500, 1000, 2000, 4000, 8000} {
		c := catalogtest.HostileCatalog(b, n, 0)
		for name, op := range hostileOps(b, c) {
			b.Run(fmt.Sprintf("%s/%d", name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					op()
				}
			})
		}
	}
}
