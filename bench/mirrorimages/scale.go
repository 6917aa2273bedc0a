package main

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The -images N set, for bench/mirror-scale.sh: a catalog naming N small
// images, as a release catalog names thousands. Bundles of five images
// each (the bundle image and four operands), ten bundles a package. Every
// operand image starts with one of eight base layers of 64-192 KB, shared
// by all the images of its "vendor" (package number mod 8) across
// repositories, then has two or three layers of its own of 1-16 KB; every
// third operand is a manifest list of two platforms (half OCI, half Docker
// media types). So a copy moves few bytes and many requests, and a tool
// that mounts shared blobs across repositories (or skips those already
// there) saves uploads. Repository names end in a component no other
// repository has, so tools that keep only the last one (skopeo sync) do
// not merge them.

const scaleBases = 8

type scaleGen struct {
	*gen
	mu sync.Mutex // guards rnd and n: images are pushed concurrently
	// bases are the shared base layers' gzipped bytes, each pushed with
	// the media type of the image it is in (one blob, one digest).
	bases [][]byte
}

func (sg *scaleGen) base(i int, oci bool) (v1.Layer, error) {
	raw := sg.bases[i%len(sg.bases)]
	mt := types.DockerLayer
	if oci {
		mt = types.OCILayer
	}
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }, tarball.WithMediaType(mt))
}

// runScale pushes the catalog of n images (rounded up to whole bundles).
func (g *gen) runScale(n, jobs int) error {
	sg := &scaleGen{gen: g}
	for range scaleBases {
		l, err := g.layer(g.size(64*kb, 192*kb), types.DockerLayer)
		if err != nil {
			return err
		}
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		raw, err := io.ReadAll(rc)
		if err != nil {
			return err
		}
		sg.bases = append(sg.bases, raw)
	}
	nb := (n + 4) / 5
	type job struct {
		b, k int // bundle, image of it (0: the bundle image)
	}
	bundles := make([]bundle, nb)
	results := make([][5]pushed, nb)
	errs := make(chan error, jobs)
	work := make(chan job)
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				p, err := sg.push(j.b, j.k)
				if err != nil {
					select {
					case errs <- err:
					default:
					}
					continue
				}
				results[j.b][j.k] = p
			}
		}()
	}
	for b := range nb {
		for k := range 5 {
			work <- job{b, k}
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	var out []pushed
	for b := range nb {
		pkg := fmt.Sprintf("scale-p%03d", b/10)
		bundles[b] = bundle{pkg: pkg, version: fmt.Sprintf("1.%d.0", b%10), image: results[b][0].ref}
		for k := range 5 {
			out = append(out, results[b][k])
			if k > 0 {
				bundles[b].related = append(bundles[b].related, results[b][k].ref)
			}
		}
	}
	return g.finish(bundles, out)
}

// push pushes image k of bundle b: the bundle image for k 0, else an
// operand.
func (sg *scaleGen) push(b, k int) (pushed, error) {
	pkg := b / 10
	if k == 0 {
		img, err := sg.image(b%2 == 0, "amd64", nil, 2)
		if err != nil {
			return pushed{}, err
		}
		return sg.pushImage(fmt.Sprintf("scale/p%03d/bundle-%05d", pkg, b), img)
	}
	i := b*4 + k - 1
	repo := fmt.Sprintf("scale/p%03d/op-%05d", pkg, i)
	oci := i%2 == 0
	base, err := sg.base(pkg, oci)
	if err != nil {
		return pushed{}, err
	}
	if i%3 != 0 {
		img, err := sg.image(oci, "amd64", base, 2+i%2)
		if err != nil {
			return pushed{}, err
		}
		return sg.pushImage(repo, img)
	}
	var adds []mutate.IndexAddendum
	for _, arch := range platforms[:2] {
		img, err := sg.image(oci, arch, base, 2)
		if err != nil {
			return pushed{}, err
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	idx := mutate.AppendManifests(empty.Index, adds...)
	if !oci {
		idx = mutate.IndexMediaType(idx, types.DockerManifestList)
	}
	if idx, err = withoutArtifactType(idx); err != nil {
		return pushed{}, err
	}
	return sg.pushIndex(repo, idx)
}

// image is base (when not nil) and small layers of 1-16 KB of its own.
func (sg *scaleGen) image(oci bool, arch string, base v1.Layer, small int) (v1.Image, error) {
	mt := types.DockerLayer
	if oci {
		mt = types.OCILayer
	}
	var layers []v1.Layer
	if base != nil {
		layers = append(layers, base)
	}
	sg.mu.Lock()
	for range small {
		l, err := sg.layer(sg.size(1*kb, 16*kb), mt)
		if err != nil {
			sg.mu.Unlock()
			return nil, err
		}
		layers = append(layers, l)
	}
	first := sg.n
	sg.mu.Unlock()
	return assemble(oci, arch, layers, first, nil)
}
