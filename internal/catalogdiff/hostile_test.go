package catalogdiff

import (
	"runtime"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/catalogtest"
	"github.com/opmkit/opm/internal/fbc"
)

// TestHostileDiffMemory: diffing the n² channel of 2,000 bundles against
// itself one release shorter, and with a release from the middle dropped,
// allocates a bounded amount (comparing expanded edges took 1.87 GB) and
// reports each edge that changed.
func TestHostileDiffMemory(t *testing.T) {
	newC := catalogtest.HostileCatalog(t, 2000, 0)
	for _, tc := range []struct {
		old            *fbc.Catalog
		added, removed int
		why            string
	}{
		{catalogtest.HostileCatalog(t, 1999, 0), 2000, 0, "a release added: its replaces and a skipRange edge from each of the 1,999 before it"},
		{catalogtest.HostileCatalog(t, 2000, 1000), 2000, 0, "a release restored in the middle: a skipRange edge to each of the 1,000 above it, from each of the 999 below it, and its replaces"},
	} {
		var res *Result
		var err error
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		res, err = Diff(tc.old, newC, Options{})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		got := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %.1f MB allocated", tc.why, float64(got)/(1<<20))
		if got > 64<<20 {
			t.Errorf("%s: diff allocated %d MB; want under 64 MB", tc.why, got>>20)
		}
		if res.Summary.EdgesAdded != tc.added || res.Summary.EdgesRemoved != tc.removed {
			t.Errorf("%s: %d edges added, %d lost; want %d and %d", tc.why, res.Summary.EdgesAdded, res.Summary.EdgesRemoved, tc.added, tc.removed)
		}
	}
}

// TestHostileDiffHTMLMemory: opm diff -o html of the n² channel of 2,000
// bundles against itself one release shorter (two pictures of 2,000
// skipRanges) allocates a bounded amount: drawn from a document with an
// edge per covered bundle it allocated 1.36 GB (2 million edges a
// picture); from each skipRange once, 48 MB (78 MB with --expand).
func TestHostileDiffHTMLMemory(t *testing.T) {
	oldC, newC := catalogtest.HostileCatalog(t, 1999, 0), catalogtest.HostileCatalog(t, 2000, 0)
	for _, expand := range []bool{false, true} {
		var page strings.Builder
		got := allocated(func() {
			o, n := NewCatalog(), NewCatalog()
			if err := o.Add(oldC); err != nil {
				t.Fatal(err)
			}
			if err := n.Add(newC); err != nil {
				t.Fatal(err)
			}
			if err := WriteHTMLWith(&page, Compare(o, n, Options{}), o, n, HTMLOptions{Expand: expand}); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("expand %v: %.1f MB allocated, page %d KB", expand, float64(got)/(1<<20), page.Len()>>10)
		if got > 200<<20 {
			t.Errorf("expand %v: diff -o html allocated %d MB; want under 200 MB", expand, got>>20)
		}
		if n := strings.Count(page.String(), "<figure"); n != 2 {
			t.Errorf("expand %v: %d pictures; want before and after", expand, n)
		}
	}
}

// allocated is what f allocates, in bytes.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
