package resolve

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/catalogtest"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
)

// hostileAllocated is what f allocates, in bytes.
func hostileAllocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// hostileV1Walk is upgrade-path --olmv1 over c, issue 40's n² channel of
// n bundles, as the command runs it: a path from the first bundle, or
// --from-range ">=0.0.0" (a step from every bundle). It returns the steps
// asked and the entries and bundles they read.
func hostileV1Walk(t *testing.T, c *fbc.Catalog, n int, fromRange bool) (steps int, visits int64) {
	t.Helper()
	p, err := graph.NewPackage(c, "h")
	require.NoError(t, err)
	s := newExtSteps(context.Background(), Catalog{Name: "h", Catalog: c}, "h", nil)
	q := graph.PathQuery{OLMv1: true, ResolveV1: func(b graph.Bundle, v string) (graph.V1Pick, error) {
		steps++
		return s.step(b, v)
	}}
	head := fmt.Sprintf("h.v%d.0.0", n)
	if fromRange {
		kept, err := p.KeepForRange(q, ">=0.0.0")
		require.NoError(t, err)
		// Every bundle but the head steps to the head at once: the head is
		// all to keep.
		require.Len(t, kept.Bundles, 1)
		assert.Equal(t, head, kept.Bundles[0].Name)
		assert.Len(t, kept.Bundles[0].For, n)
	} else {
		q.From = "h.v1.0.0"
		path, err := p.Path(q)
		require.NoError(t, err)
		// Every skipRange covers 1.0.0: operator-controller goes to the
		// highest at once.
		require.Len(t, path.Steps, 1)
		assert.Equal(t, head, path.Steps[0].To)
		assert.True(t, path.AtHead)
	}
	return steps, s.visits()
}

// TestHostileOLMv1Memory: upgrade-path --olmv1 (each step
// operator-controller's resolution) walks issue 40's n² channel of 2,000
// bundles allocating a bounded amount (1,000 bundles allocated 1.95 GB
// when each step tested every candidate against every entry), and 4× the
// bundles allocate about 4× as much, not 16×. Bounds are generous; the
// figures are in bench/README.md.
func TestHostileOLMv1Memory(t *testing.T) {
	for _, fromRange := range []bool{false, true} {
		name := map[bool]string{false: "path", true: "from-range"}[fromRange]
		var small uint64
		for _, n := range []int{500, 2000} {
			c := catalogtest.HostileCatalog(t, n, 0)
			got := hostileAllocated(func() { hostileV1Walk(t, c, n, fromRange) })
			t.Logf("%s over %d bundles: %.1f MB allocated", name, n, float64(got)/(1<<20))
			if n == 500 {
				small = got
				continue
			}
			if got > 64<<20 {
				t.Errorf("upgrade-path --olmv1 %s allocated %d MB over %d bundles; want under 64 MB", name, got>>20, n)
			}
			if got > 8*small {
				t.Errorf("upgrade-path --olmv1 %s allocated %.1f MB over %d bundles, %.1f× the %.1f MB over 500; want about 4× (linear), under 8×",
					name, float64(got)/(1<<20), n, float64(got)/float64(small), float64(small)/(1<<20))
			}
		}
	}
}

// TestOLMv1StepWork counts what the steps of upgrade-path --olmv1
// --from-range read (entries and bundles visited, deterministic, unlike
// time): on the n² channel the whole walk reads a few times the package,
// at 300 bundles as at 1,200, where testing every candidate against every
// entry read n² per step. A full resolution (alpha resolve --olmv1,
// every bundle a candidate) reads each entry and bundle a bounded number
// of times too.
func TestOLMv1StepWork(t *testing.T) {
	for _, n := range []int{300, 1200} {
		c := catalogtest.HostileCatalog(t, n, 0)
		steps, visits := hostileV1Walk(t, c, n, true)
		t.Logf("from-range over %d bundles: %d steps, %d visits (%.1f per bundle)", n, steps, visits, float64(visits)/float64(n))
		assert.GreaterOrEqual(t, steps, n, "a step from every bundle")
		assert.LessOrEqual(t, visits, int64(8*n), "the whole --from-range walk over %d bundles should read each entry and bundle a few times, not per step", n)

		pv := newExtPackageView(Catalog{Name: "h", Catalog: c}, "h")
		ans, err := resolveExtension(context.Background(), []Catalog{{Name: "h", Catalog: c}},
			ClusterExtension{PackageName: "h", Installed: &InstalledBundle{Name: "h.v1.0.0", Version: "1.0.0"}},
			extOptions{views: []*extPackageView{pv}})
		require.NoError(t, err)
		require.NotNil(t, ans.Bundle)
		assert.Equal(t, fmt.Sprintf("h.v%d.0.0", n), *ans.Bundle)
		assert.Len(t, ans.PassedOver, n-1)
		got := pv.idx.visits.Load()
		t.Logf("one full resolution over %d bundles: %d visits", n, got)
		assert.LessOrEqual(t, got, int64(4*n), "a resolution over %d bundles should read each entry and bundle a bounded number of times", n)
	}
}
