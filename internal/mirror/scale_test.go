package mirror

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/registrytest"
)

// scaleCatalog is a catalog naming n images (rounded up to bundles of
// five): each bundle's image and four related images, by digest, in
// repositories of their own, ten bundles a package.
func scaleCatalog(n int) *fbc.Catalog {
	c := &fbc.Catalog{}
	for b := range (n + 4) / 5 {
		pkg := fmt.Sprintf("p%03d", b/10)
		ref := func(k int) string {
			return fmt.Sprintf("quay.io/vendor/%s/img-%05d@sha256:%064x", pkg, b*5+k, b*5+k)
		}
		bd := fbc.Bundle{Schema: "olm.bundle", Name: fmt.Sprintf("%s.v1.%d.0", pkg, b%10), Package: pkg, Image: ref(0)}
		for k := 1; k < 5; k++ {
			bd.RelatedImages = append(bd.RelatedImages, fbc.RelatedImage{Name: fmt.Sprintf("op-%d", k), Image: ref(k)})
		}
		c.Bundles = append(c.Bundles, bd)
	}
	return c
}

// plan is the planning of a mirror before anything is copied: the
// catalog's images listed, the items made, the targets checked.
func plan(c *fbc.Catalog) ([]Item, error) {
	items := Plan("quay.io/vendor/catalog:v1", catalogimages.List(c, ""))
	return items, checkCollisions(items, Options{To: "mirror.example:5000/olm", MaxNestedPaths: 2})
}

// BenchmarkPlan: the planning of a catalog of 200 and of 2,000 images;
// ns/image stays about the same (go test -bench Plan ./internal/mirror/).
func BenchmarkPlan(b *testing.B) {
	for _, n := range []int{200, 2000} {
		c := scaleCatalog(n)
		b.Run(fmt.Sprintf("images=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				items, err := plan(c)
				if err != nil || len(items) != n+1 {
					b.Fatalf("%d items, %v", len(items), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/image")
		})
	}
}

// TestPlanScales: planning lists every image once, whatever the size.
func TestPlanScales(t *testing.T) {
	t.Parallel()
	for _, n := range []int{200, 2000} {
		items, err := plan(scaleCatalog(n))
		require.NoError(t, err)
		require.Len(t, items, n+1)
		seen := map[string]bool{}
		for _, it := range items[1:] {
			assert.False(t, seen[it.Source], it.Source)
			seen[it.Source] = true
			assert.Len(t, it.Uses, 1, it.Source)
		}
	}
}

// TestMirrorRequestsGrowLinearly: the requests a mirror makes grow with the
// images, by the same number for each (counted by the client, so the same
// every run): a first run into an empty registry, and a second that finds
// every image there, where each image costs a few requests, none of them
// a read of the source's blobs.
func TestMirrorRequestsGrowLinearly(t *testing.T) {
	t.Parallel()
	src, dst := registrytest.Start(t), registrytest.Start(t)
	ctx := context.Background()
	// Images alike in shape (one layer, single platform), each in a
	// repository of its own.
	var all []Item
	for i := range 12 {
		img, err := random.Image(512, 1)
		require.NoError(t, err)
		ref, err := name.ParseReference(src.Ref(fmt.Sprintf("team/img-%02d:v1", i)), name.Insecure)
		require.NoError(t, err)
		require.NoError(t, remote.Write(ref, img))
		d, err := img.Digest()
		require.NoError(t, err)
		all = append(all, Item{Source: ref.Context().String() + "@" + d.String(), Role: RoleImage})
	}
	type counts struct{ first, again, againGet int64 }
	run := func(to string, items []Item) counts {
		var c counts
		for i, n := range []*int64{&c.first, &c.again} {
			tr := &image.Traffic{}
			cl, err := image.NewClient(image.Options{UseHTTP: true, Traffic: tr})
			require.NoError(t, err)
			// One image at a time: images copied at once may both shake
			// hands with a registry before either has seen its answer.
			rep, err := Run(ctx, cl, items, Options{To: to, Concurrency: 1, Signatures: true})
			require.NoError(t, err)
			require.Equal(t, 0, rep.Failed, "%+v", rep.Images)
			for _, r := range rep.Images {
				assert.Equal(t, i == 0, r.Copied, r.Source)
			}
			*n = tr.Count("")
			if i == 1 {
				c.againGet = tr.Count("GET")
			}
		}
		return c
	}
	// Sizes 4, 8 and 12 into separate prefixes: the second four images
	// cost what the first four did past the run's fixed cost, and so do
	// the third.
	var got []counts
	for k, n := range []int{4, 8, 12} {
		got = append(got, run(dst.Addr+fmt.Sprintf("/size%d", k), all[:n]))
	}
	t.Logf("requests (first run, run again) for 4, 8, 12 images: %+v", got)
	for _, f := range []func(c counts) int64{
		func(c counts) int64 { return c.first },
		func(c counts) int64 { return c.again },
	} {
		d1, d2 := f(got[1])-f(got[0]), f(got[2])-f(got[1])
		assert.Equal(t, d1, d2, "requests for 4 more images, from 4 to 8 and from 8 to 12")
		assert.Positive(t, d1)
	}
	// Run again, an image present costs few requests.
	per := float64(got[2].again-got[1].again) / 4
	assert.LessOrEqual(t, per, 8.0, "requests for each image already at the destination")
	assert.Less(t, got[2].again, got[2].first, "a run that finds every image copies nothing")
	assert.True(t, strings.HasPrefix(all[0].Source, src.Addr))
}

// TestMirrorHeapPerImage: what a run keeps while it goes (the Copier's
// caches, the client's, the report) grows by a few KB an image at most:
// the heap live once every image is copied, measured for two numbers of
// images in the same test, the difference divided by the images between.
// Not parallel: the heap is the process's.
func TestMirrorHeapPerImage(t *testing.T) {
	src, dst := registrytest.Start(t), registrytest.Start(t)
	ctx := context.Background()
	// Images alike in shape: a base layer shared by all, one of their
	// own, each in a repository of its own (as a catalog's are).
	base, err := random.Layer(2048, types.DockerLayer)
	require.NoError(t, err)
	const small, large = 80, 200
	var all []Item
	for i := range large {
		own, err := random.Layer(256, types.DockerLayer)
		require.NoError(t, err)
		img, err := mutate.AppendLayers(empty.Image, base, own)
		require.NoError(t, err)
		ref, err := name.ParseReference(src.Ref(fmt.Sprintf("vendor/p%02d/img-%03d:v1", i/10, i)), name.Insecure)
		require.NoError(t, err)
		require.NoError(t, remote.Write(ref, img))
		d, err := img.Digest()
		require.NoError(t, err)
		all = append(all, Item{Source: ref.Context().String() + "@" + d.String(), Role: RoleImage,
			Uses: []catalogimages.Use{{Package: fmt.Sprintf("p%02d", i/10), Bundle: fmt.Sprintf("p%02d.v1.%d.0", i/10, i%10), As: "related", Name: "operand"}}})
	}
	t.Cleanup(func() { copiesDone = nil })
	// One client for every run, as one run of opm has: a client per run
	// would leave the connections of the runs before open (idle, until
	// they time out) and count them against the larger run.
	cl, err := image.NewClient(image.Options{UseHTTP: true})
	require.NoError(t, err)
	live := func(n int) int64 {
		var heap uint64
		copiesDone = func() {
			// Twice: the first GC moves sync.Pool contents to their
			// victim caches, the second frees them.
			runtime.GC()
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			heap = ms.HeapAlloc
		}
		// One image at a time: fewer connections open, whose buffers
		// would blur the figure.
		rep, err := Run(ctx, cl, all[:n], Options{To: dst.Addr + fmt.Sprintf("/n%d", n), Concurrency: 1})
		require.NoError(t, err)
		require.Equal(t, 0, rep.Failed, "%+v", rep.Images)
		require.Len(t, rep.Images, n)
		return int64(heap)
	}
	live(5) // warm up: the packages' own state, the connections
	h1, h2 := live(small), live(large)
	per := float64(h2-h1) / (large - small)
	t.Logf("heap live once copied: %d images %d KB, %d images %d KB: %.0f bytes an image", small, h1>>10, large, h2>>10, per)
	// 0.6-0.7 KB measured: the report and the plan of each image (1.4 KB
	// before, when the client kept the credentials of every repository
	// and the blob homes held 4,096 blobs a generation, each with its
	// whole reference).
	assert.Less(t, per, 1024.0, "heap kept for each image mirrored")
}
