// Command mirrorimages pushes a synthetic operator catalog and the images
// it names to a plain-HTTP registry, for bench/mirror.sh:
//
//	go run ./bench/mirrorimages -registry 127.0.0.1:5000 >images.tsv
//
// Four packages of three bundle versions each. Every bundle has its own
// bundle image (small, single platform) and names four operand images in
// relatedImages: three of its own and one its package's versions share, so
// the catalog names 12 bundle images and 40 operand images, 52 in all.
// Operands are a mix: 16 manifest lists (eight of two platforms, eight of
// three; half OCI, half Docker media types), 16 single images of a 3-10 MB
// base layer and a few small layers, and 8 that also carry one 20-50 MB
// layer. Layer contents are pseudo-random (incompressible) and shared by no
// two images, so no registry or client can skip a blob by mounting it from
// another repository. The same -seed pushes the same digests.
//
// It prints one line per image, tab-separated: role (catalog or image), the
// reference by digest, and the bytes a copy moves (manifests, configs and
// layers, each once). The catalog (a file-based catalog under /configs,
// labelled as such) comes first; its tag is REGISTRY/bench/catalog:1.
//
// With -images N it pushes instead a catalog of N small images (scale.go),
// for bench/mirror-scale.sh; with -check it checks a mirror (check.go).
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	kb = 1 << 10
	mb = 1 << 20
)

var platforms = []string{"amd64", "arm64", "ppc64le"}

type gen struct {
	ctx   context.Context
	reg   string
	rnd   *rand.ChaCha8
	scale float64
	n     int // layers made so far, to make each unique
}

func main() {
	reg := flag.String("registry", "", "HOST:PORT of a plain-HTTP registry to push to")
	seed := flag.Uint64("seed", 1, "seed of the layer contents and sizes")
	scale := flag.Float64("scale", 1, "multiply every layer size by this (0.1 for a quick run)")
	images := flag.Int("images", 0, "push instead a catalog naming this many small images (see scale.go)")
	jobs := flag.Int("jobs", 8, "images pushed (or checked) at once with -images (or -check)")
	target := flag.String("check", "", "check instead that the images listed on stdin (as this command prints them) are at this REGISTRY/PREFIX by digest")
	last := flag.Bool("last", false, "with -check: at PREFIX/<last component of the source path> (skopeo sync's layout)")
	flag.Parse()
	if *target != "" {
		n, err := check(context.Background(), os.Stdin, *target, *last, *jobs)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mirrorimages:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "mirrorimages: %d images at %s\n", n, *target)
		return
	}
	if *reg == "" {
		fmt.Fprintln(os.Stderr, "mirrorimages: give -registry HOST:PORT")
		os.Exit(2)
	}
	var s [32]byte
	for i := range 8 {
		s[i] = byte(*seed >> (8 * i))
	}
	g := &gen{ctx: context.Background(), reg: *reg, rnd: rand.NewChaCha8(s), scale: *scale}
	run := g.run
	if *images > 0 {
		run = func() error { return g.runScale(*images, *jobs) }
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mirrorimages:", err)
		os.Exit(1)
	}
}

type pushed struct {
	ref   string
	bytes int64
}

type bundle struct {
	pkg, version, image string
	related             []string
}

func (g *gen) run() error {
	var out []pushed
	var bundles []bundle
	operand := 0
	for p, pkg := range []string{"alpha", "bravo", "charlie", "delta"} {
		shared, err := g.operand(operand, pkg)
		if err != nil {
			return err
		}
		operand++
		out = append(out, shared)
		for v := range 3 {
			b := bundle{pkg: "bench-" + pkg, version: fmt.Sprintf("1.%d.0", v)}
			for range 3 {
				o, err := g.operand(operand, pkg)
				if err != nil {
					return err
				}
				operand++
				out = append(out, o)
				b.related = append(b.related, o.ref)
			}
			b.related = append(b.related, shared.ref)
			bi, err := g.bundleImage(fmt.Sprintf("bench/%s-bundle", pkg), p*3+v)
			if err != nil {
				return err
			}
			out = append(out, bi)
			b.image = bi.ref
			bundles = append(bundles, b)
		}
	}
	return g.finish(bundles, out)
}

// operand pushes operand image i of package pkg: a manifest list for 16 of
// the 40, a single image with a large layer for 8, a plain one otherwise.
func (g *gen) operand(i int, pkg string) (pushed, error) {
	repo := fmt.Sprintf("bench/%s-operand-%02d", pkg, i)
	oci := i%2 == 0
	switch i % 5 {
	case 1, 3: // 16 of 40, eight of two platforms and eight of three
		nplat := 2 + i/5%2
		var adds []mutate.IndexAddendum
		for _, arch := range platforms[:nplat] {
			img, err := g.image(oci, arch, g.size(2*mb, 6*mb), 2+g.rnd.Uint64()%3, 0)
			if err != nil {
				return pushed{}, err
			}
			adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
		}
		idx := mutate.AppendManifests(empty.Index, adds...)
		if !oci {
			idx = mutate.IndexMediaType(idx, types.DockerManifestList)
		}
		idx, err := withoutArtifactType(idx)
		if err != nil {
			return pushed{}, err
		}
		return g.pushIndex(repo, idx)
	case 0: // 8 of 40
		img, err := g.image(oci, "amd64", g.size(3*mb, 10*mb), 2+g.rnd.Uint64()%4, g.size(20*mb, 50*mb))
		if err != nil {
			return pushed{}, err
		}
		return g.pushImage(repo, img)
	default:
		img, err := g.image(oci, "amd64", g.size(3*mb, 10*mb), 2+g.rnd.Uint64()%5, 0)
		if err != nil {
			return pushed{}, err
		}
		return g.pushImage(repo, img)
	}
}

// plainIndex is an index whose entries carry no artifactType, as the
// lists of image builders do: go-containerregistry sets it on every entry,
// and skopeo 1.9 drops it when it copies a list, which changes the digest.
type plainIndex struct {
	base v1.ImageIndex
	raw  []byte
	m    *v1.IndexManifest
}

func withoutArtifactType(idx v1.ImageIndex) (v1.ImageIndex, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	m = m.DeepCopy()
	for i := range m.Manifests {
		m.Manifests[i].ArtifactType = ""
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return &plainIndex{base: idx, raw: raw, m: m}, nil
}

func (p *plainIndex) RawManifest() ([]byte, error)                { return p.raw, nil }
func (p *plainIndex) IndexManifest() (*v1.IndexManifest, error)   { return p.m, nil }
func (p *plainIndex) Size() (int64, error)                        { return int64(len(p.raw)), nil }
func (p *plainIndex) MediaType() (types.MediaType, error)         { return p.base.MediaType() }
func (p *plainIndex) Image(h v1.Hash) (v1.Image, error)           { return p.base.Image(h) }
func (p *plainIndex) ImageIndex(h v1.Hash) (v1.ImageIndex, error) { return p.base.ImageIndex(h) }
func (p *plainIndex) Digest() (v1.Hash, error) {
	h, _, err := v1.SHA256(bytes.NewReader(p.raw))
	return h, err
}

// bundleImage pushes a bundle image: two small layers, as manifests/ and
// metadata/ are.
func (g *gen) bundleImage(repo string, i int) (pushed, error) {
	img, err := g.image(i%2 == 0, "amd64", 0, 2, 0)
	if err != nil {
		return pushed{}, err
	}
	return g.pushImage(repo, img)
}

func (g *gen) size(lo, hi int64) int64 {
	return int64(float64(lo+int64(g.rnd.Uint64()%uint64(hi-lo))) * g.scale)
}

// image builds a single-platform image: a base layer of base bytes (none
// when 0), small layers of 1-500 KB, and one large layer when large > 0.
func (g *gen) image(oci bool, arch string, base int64, small uint64, large int64) (v1.Image, error) {
	var sizes []int64
	if base > 0 {
		sizes = append(sizes, base)
	}
	for range small {
		sizes = append(sizes, g.size(1*kb, 500*kb))
	}
	if large > 0 {
		sizes = append(sizes, large)
	}
	mt := types.DockerLayer
	if oci {
		mt = types.OCILayer
	}
	var layers []v1.Layer
	for _, n := range sizes {
		l, err := g.layer(n, mt)
		if err != nil {
			return nil, err
		}
		layers = append(layers, l)
	}
	return assemble(oci, arch, layers, g.n, func(cfg *v1.ConfigFile) {
		cfg.Created = v1.Time{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	})
}

// assemble is an image of layers for linux/arch, Docker or OCI, labelled
// with its layer count and first layer number so that images differ.
func assemble(oci bool, arch string, layers []v1.Layer, first int, edit func(*v1.ConfigFile)) (v1.Image, error) {
	img := empty.Image
	if oci {
		img = mutate.MediaType(mutate.ConfigMediaType(img, types.OCIConfigJSON), types.OCIManifestSchema1)
	}
	img, err := mutate.AppendLayers(img, layers...)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", arch
	if edit != nil {
		edit(cfg)
	}
	cfg.Config.Labels = map[string]string{"bench.layers": fmt.Sprint(len(layers)), "bench.first": fmt.Sprint(first)}
	return mutate.ConfigFile(img, cfg)
}

// layer is a gzipped tar of one file of n pseudo-random bytes.
func (g *gen) layer(n int64, mt types.MediaType) (v1.Layer, error) {
	g.n++
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	hdr := &tar.Header{Name: fmt.Sprintf("data/blob-%06d", g.n), Mode: 0o644, Size: n, ModTime: time.Unix(0, 0)}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := io.CopyN(tw, g.rnd, n); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	gz := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(gz)), nil }, tarball.WithMediaType(mt))
}

func (g *gen) pushImage(repo string, img v1.Image) (pushed, error) {
	tag, err := name.NewTag(g.reg+"/"+repo+":bench", name.Insecure)
	if err != nil {
		return pushed{}, err
	}
	if err := remote.Write(tag, img, remote.WithContext(g.ctx)); err != nil {
		return pushed{}, fmt.Errorf("push %s: %w", tag, err)
	}
	d, err := img.Digest()
	if err != nil {
		return pushed{}, err
	}
	n, err := imageBytes(img)
	return pushed{ref: g.reg + "/" + repo + "@" + d.String(), bytes: n}, err
}

func (g *gen) pushIndex(repo string, idx v1.ImageIndex) (pushed, error) {
	tag, err := name.NewTag(g.reg+"/"+repo+":bench", name.Insecure)
	if err != nil {
		return pushed{}, err
	}
	if err := remote.WriteIndex(tag, idx, remote.WithContext(g.ctx)); err != nil {
		return pushed{}, fmt.Errorf("push %s: %w", tag, err)
	}
	d, err := idx.Digest()
	if err != nil {
		return pushed{}, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return pushed{}, err
	}
	raw, err := idx.RawManifest()
	if err != nil {
		return pushed{}, err
	}
	total := int64(len(raw))
	for _, desc := range m.Manifests {
		img, err := idx.Image(desc.Digest)
		if err != nil {
			return pushed{}, err
		}
		n, err := imageBytes(img)
		if err != nil {
			return pushed{}, err
		}
		total += n
	}
	return pushed{ref: g.reg + "/" + repo + "@" + d.String(), bytes: total}, nil
}

// imageBytes is the manifest, config and layers of img.
func imageBytes(img v1.Image) (int64, error) {
	raw, err := img.RawManifest()
	if err != nil {
		return 0, err
	}
	m, err := img.Manifest()
	if err != nil {
		return 0, err
	}
	n := int64(len(raw)) + m.Config.Size
	for _, l := range m.Layers {
		n += l.Size
	}
	return n, nil
}

// finish pushes the catalog of bundles and prints it, then the images
// out, one line each: what the bench scripts read.
func (g *gen) finish(bundles []bundle, out []pushed) error {
	cat, err := g.catalog(bundles)
	if err != nil {
		return err
	}
	fmt.Printf("catalog\t%s\t%d\n", cat.ref, cat.bytes)
	for _, o := range out {
		fmt.Printf("image\t%s\t%d\n", o.ref, o.bytes)
	}
	return nil
}

// catalog pushes REGISTRY/bench/catalog:1: one layer holding the
// file-based catalog of bundles as /configs/<package>/catalog.json.
func (g *gen) catalog(bundles []bundle) (pushed, error) {
	files := map[string]*bytes.Buffer{}
	var order []string
	for _, b := range bundles {
		buf, ok := files[b.pkg]
		if !ok {
			buf = &bytes.Buffer{}
			files[b.pkg] = buf
			order = append(order, b.pkg)
			var entries []map[string]string
			prev := ""
			for _, o := range bundles {
				if o.pkg != b.pkg {
					continue
				}
				e := map[string]string{"name": o.pkg + ".v" + o.version}
				if prev != "" {
					e["replaces"] = prev
				}
				prev = e["name"]
				entries = append(entries, e)
			}
			enc(buf, map[string]any{"schema": "olm.package", "name": b.pkg, "defaultChannel": "stable"})
			enc(buf, map[string]any{"schema": "olm.channel", "name": "stable", "package": b.pkg, "entries": entries})
		}
		related := []map[string]string{{"name": "", "image": b.image}}
		for i, r := range b.related {
			related = append(related, map[string]string{"name": fmt.Sprintf("operand-%d", i), "image": r})
		}
		enc(buf, map[string]any{
			"schema": "olm.bundle", "name": b.pkg + ".v" + b.version, "package": b.pkg, "image": b.image,
			"properties": []any{
				map[string]any{"type": "olm.package", "value": map[string]string{"packageName": b.pkg, "version": b.version}},
			},
			"relatedImages": related,
		})
	}
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	epoch := time.Unix(0, 0)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "configs/", Mode: 0o755, ModTime: epoch}); err != nil {
		return pushed{}, err
	}
	for _, pkg := range order {
		data := files[pkg].Bytes()
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "configs/" + pkg + "/", Mode: 0o755, ModTime: epoch}); err != nil {
			return pushed{}, err
		}
		if err := tw.WriteHeader(&tar.Header{Name: "configs/" + pkg + "/catalog.json", Mode: 0o644, Size: int64(len(data)), ModTime: epoch}); err != nil {
			return pushed{}, err
		}
		if _, err := tw.Write(data); err != nil {
			return pushed{}, err
		}
	}
	if err := tw.Close(); err != nil {
		return pushed{}, err
	}
	tarBytes := tb.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(tarBytes)), nil })
	if err != nil {
		return pushed{}, err
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		return pushed{}, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return pushed{}, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "amd64"
	cfg.Config.Labels = map[string]string{"operators.operatorframework.io.index.configs.v1": "/configs"}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return pushed{}, err
	}
	p, err := g.pushImage("bench/catalog", img)
	if err != nil {
		return pushed{}, err
	}
	tag, err := name.NewTag(g.reg+"/bench/catalog:1", name.Insecure)
	if err != nil {
		return pushed{}, err
	}
	if err := remote.Write(tag, img, remote.WithContext(g.ctx)); err != nil {
		return pushed{}, fmt.Errorf("push %s: %w", tag, err)
	}
	return p, nil
}

func enc(w io.Writer, v any) {
	raw, _ := json.Marshal(v)
	_, _ = w.Write(append(raw, '\n'))
}
