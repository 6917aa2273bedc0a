package resolve

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/catalogtest"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
)

func extPathCatalog(t *testing.T, blobs string) (*fbc.Catalog, *graph.Package) {
	t.Helper()
	c := &fbc.Catalog{}
	require.NoError(t, c.LoadFile("c.json", []byte(blobs)))
	p, err := graph.NewPackage(c, "x")
	require.NoError(t, err)
	return c, p
}

func extPathBundle(name, version string) string {
	return `{"schema":"olm.bundle","name":"` + name + `","package":"x","properties":[{"type":"olm.package","value":{"packageName":"x","version":"` + version + `"}}]}` + "\n"
}

func extPathSteps(path *graph.Path) []string {
	out := []string{}
	for _, st := range path.Steps {
		out = append(out, st.To+" "+st.Edge)
	}
	return out
}

// TestExtensionSteps walks OLM v1 paths with ExtensionSteps: releases in
// build metadata rank (1.0.0+10 above 1.0.0+2), a skipped bundle is
// installed when it ranks first, and a version no bundle has leaves by a
// skipRange only (an entry that replaces nothing does not count).
func TestExtensionSteps(t *testing.T) {
	ctx := context.Background()
	c, p := extPathCatalog(t, `{"schema":"olm.package","name":"x","defaultChannel":"s"}
{"schema":"olm.channel","package":"x","name":"s","entries":[{"name":"x.v0"},{"name":"x.r2","replaces":"x.v0"},{"name":"x.r10","skips":["x.v0"]},{"name":"x.plain","skipRange":"<1.0.0"},{"name":"x.v2","replaces":"x.r10","skips":["x.r2"]},{"name":"x.top"}]}
`+extPathBundle("x.top", "5.0.0")+extPathBundle("x.v0", "0.9.0")+extPathBundle("x.r2", "1.0.0+2")+extPathBundle("x.r10", "1.0.0+10")+extPathBundle("x.plain", "1.0.0")+extPathBundle("x.v2", "2.0.0"))
	steps := ExtensionSteps(ctx, Catalog{Name: "c", Catalog: c}, "x", nil)
	path, err := p.Path(graph.PathQuery{From: "x.v0", OLMv1: true, ResolveV1: steps})
	require.NoError(t, err)
	assert.Equal(t, []string{"x.r10 skips", "x.v2 replaces"}, extPathSteps(path))
	assert.True(t, path.AtHead)
	assert.Empty(t, path.Error)

	// 0.5.0 is no bundle's: x.plain's skipRange covers it; x.top (and
	// x.v0), whose entry replaces nothing, is no successor.
	path, err = p.Path(graph.PathQuery{From: "0.5.0", OLMv1: true, ResolveV1: steps})
	require.NoError(t, err)
	assert.Equal(t, []string{"x.plain skipRange"}, extPathSteps(path))
	assert.Equal(t, []string{"s"}, path.HeadOf, "x.plain, which nothing replaces, is a head too")

	// Each step is ResolveExtension's answer with the previous installed.
	for _, st := range []struct{ from, version, want string }{{"x.v0", "0.9.0", "x.r10"}, {"x.r10", "1.0.0+10", "x.v2"}} {
		ans, err := ResolveExtension(ctx, []Catalog{{Name: "c", Catalog: c}}, ClusterExtension{PackageName: "x", Installed: &InstalledBundle{Name: st.from, Version: st.version}})
		require.NoError(t, err)
		require.NotNil(t, ans.Bundle)
		assert.Equal(t, st.want, *ans.Bundle)
	}
}

// BenchmarkHostileOLMv1FromRange: upgrade-path --olmv1 --from-range
// ">=0.0.0" over issue 40's n² channel (entry i has skipRange "<i.0.0"):
// a step per bundle, each operator-controller's resolution over the
// package prepared once for the walk (figures in bench/README.md).
func BenchmarkHostileOLMv1FromRange(b *testing.B) {
	for _, n := range []int{250, 500, 1000, 5000} {
		c := catalogtest.HostileCatalog(b, n, 0)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := graph.NewPackage(c, "h")
				if err != nil {
					b.Fatal(err)
				}
				steps := ExtensionSteps(context.Background(), Catalog{Name: "h", Catalog: c}, "h", nil)
				if _, err := p.KeepForRange(graph.PathQuery{OLMv1: true, ResolveV1: steps}, ">=0.0.0"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
