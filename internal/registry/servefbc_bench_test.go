package registry

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbccache"
	"github.com/opmkit/opm/internal/registry/api"
)

// BenchmarkServeFBCMethods compares answers through `opm serve` with answers
// through `opm registry serve` over the same content: the benchmark
// database (BenchmarkMethods'), served as it is, and rendered to a
// file-based catalog directory then prepared as `opm serve DIR` prepares it
// (fbccache.Prepare, no cache). Each method runs against both servers one
// after the other, so that both see the same load: BenchmarkServeFBCMethods/
// <Method>/{registry-serve,opm-serve} report p50-ms and p99-ms (one call at a
// time), and .../parallel-{registry-serve,opm-serve} calls/s with 20 calls in
// flight.
func BenchmarkServeFBCMethods(b *testing.B) {
	ctx := context.Background()
	path := benchDB(b)
	keys := loadBenchKeys(b, path)
	dir := filepath.Join(b.TempDir(), "catalog")
	c, _, err := fbc.RenderIndexFile(ctx, path, fbc.RenderOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if err := fbc.WriteDir(dir, c, fbc.WriteDirOptions{}); err != nil {
		b.Fatal(err)
	}
	res, cleanup, err := fbccache.Prepare(ctx, dir, fbccache.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cleanup)
	_ = os.RemoveAll(dir)
	servers := []struct {
		name string
		m    []benchMethod
	}{
		{"registry-serve", benchMethods(keys, api.NewRegistryClient(startServer(b, Options{DB: path}).conn))},
		{"opm-serve", benchMethods(keys, api.NewRegistryClient(startServer(b, Options{DB: res.Database, Catalog: true}).conn))},
	}
	for i := range servers[0].m {
		b.Run(servers[0].m[i].name, func(b *testing.B) {
			for _, s := range servers {
				b.Run(s.name, func(b *testing.B) { runMethod(b, s.m[i]) })
			}
			if servers[0].m[i].name == "ListBundles" || servers[0].m[i].name == "ListPackages" {
				return // whole-catalog streams: one at a time is the figure
			}
			for _, s := range servers {
				b.Run("parallel-"+s.name, func(b *testing.B) { runMethodParallel(b, s.m[i]) })
			}
		})
	}
}
