package image

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/opmkit/opm/internal/registrytest"
)

// benchBundle is the real etcd 0.9.4 bundle from the shared corpus when it is
// there, else the small test bundle.
func benchBundle() fs.FS {
	dir := filepath.Join("..", "..", "..", "shared", "corpus", "real", "etcd", "0.9.4")
	if _, err := os.Stat(filepath.Join(dir, "manifests")); err == nil {
		return os.DirFS(dir)
	}
	return testBundle()
}

// BenchmarkBuildPushBundle builds one bundle image and pushes it to Debian's
// docker-registry on loopback. Every iteration pushes to a new tag; the
// blobs exist after the first, as for a rebuilt, unchanged bundle.
func BenchmarkBuildPushBundle(b *testing.B) {
	r := registrytest.Start(b)
	c := mustClient(b, Options{UseHTTP: true})
	bundle := benchBundle()
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		img, err := BuildBundleImage(bundle, testLabels())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Write(ctx, img, mustRef(b, r.Ref(fmt.Sprintf("bench/etcd:%d", i)))); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildPushBundleFresh pushes to a new repository each time, so the
// blobs are uploaded (distribution links blobs per repository).
func BenchmarkBuildPushBundleFresh(b *testing.B) {
	r := registrytest.Start(b)
	c := mustClient(b, Options{UseHTTP: true})
	bundle := benchBundle()
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		img, err := BuildBundleImage(bundle, testLabels())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Write(ctx, img, mustRef(b, r.Ref(fmt.Sprintf("fresh%d/etcd:1", i)))); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPullFS opens a pushed bundle image and flattens its filesystem.
func BenchmarkPullFS(b *testing.B) {
	r := registrytest.Start(b)
	c := mustClient(b, Options{UseHTTP: true})
	ctx := context.Background()
	img, err := BuildBundleImage(benchBundle(), testLabels())
	if err != nil {
		b.Fatal(err)
	}
	ref := mustRef(b, r.Ref("pull/etcd:1"))
	if _, err := c.Write(ctx, img, ref); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		im, err := c.Open(ctx, ref)
		if err != nil {
			b.Fatal(err)
		}
		f, err := im.FS(ctx)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
		im.Close()
	}
}
