package image

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/opmkit/opm/internal/atomicfile"
)

// ImageSet is an opened image reference with every image it holds: one image
// for a plain manifest, or each platform image of a manifest list / OCI
// index. Manifests and configs are read; layers are fetched only on demand.
type ImageSet struct {
	Ref Ref
	// List is the manifest list / OCI index, nil for a single image.
	List *v1.IndexManifest
	// ListMediaType and ListDigest describe List.
	ListMediaType types.MediaType
	ListDigest    v1.Hash
	// Images are the platform images in the list's order (one for a single image).
	Images []*Image
	// Descriptors are the list entries of Images (their platform and annotations).
	Descriptors []v1.Descriptor
	// Skipped are list entries that are not platform images: attestations,
	// signatures, nested lists. They refer to the old images and are dropped
	// when the set is rewritten.
	Skipped []v1.Descriptor

	src source
}

// Close releases the source.
func (s *ImageSet) Close() error {
	if s == nil || s.src == nil {
		return nil
	}
	err := s.src.close()
	s.src = nil
	return err
}

// Platform returns the platform of image i as written in the list, else from
// its config.
func (s *ImageSet) Platform(i int) Platform {
	if p := s.Descriptors[i].Platform; p != nil && p.OS != "" {
		return Platform{OS: p.OS, Architecture: p.Architecture, Variant: p.Variant}
	}
	cf := s.Images[i].Config
	return Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant}
}

// Preferred is the index of the image matching the client's platform (the
// --platform flag), or 0 when none does.
func (s *ImageSet) Preferred() int {
	for i := range s.Images {
		p := s.Platform(i)
		if p.OS == s.Images[i].c.platform.OS && p.Architecture == s.Images[i].c.platform.Architecture {
			return i
		}
	}
	return 0
}

// sharedSource lets the images of a set use the set's source without closing it.
type sharedSource struct{ source }

func (sharedSource) close() error { return nil }

// OpenAll opens ref and, when it is a manifest list or OCI index, every
// platform image it lists, instead of picking one as Open does.
func (c *Client) OpenAll(ctx context.Context, ref Ref) (*ImageSet, error) {
	set, err := c.openAll(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("open image %s: %w", ref, err)
	}
	return set, nil
}

func (c *Client) openAll(ctx context.Context, ref Ref) (*ImageSet, error) {
	src, raw, mt, err := c.openSource(ctx, ref)
	if err != nil {
		return nil, err
	}
	set := &ImageSet{Ref: ref, src: src}
	if err := set.load(ctx, c, raw, mt); err != nil {
		_ = src.close()
		return nil, err
	}
	return set, nil
}

func (s *ImageSet) load(ctx context.Context, c *Client, raw []byte, mt string) error {
	if len(raw) > maxManifestSize {
		return fmt.Errorf("manifest is %d bytes, over the %d byte limit", len(raw), maxManifestSize)
	}
	mediaType := sniffManifestType(raw, mt)
	if mediaType != types.OCIImageIndex && mediaType != types.DockerManifestList {
		im := &Image{Ref: s.Ref, c: c, src: sharedSource{s.src}}
		if err := im.load(ctx, raw, mt); err != nil {
			return err
		}
		s.Images = []*Image{im}
		s.Descriptors = []v1.Descriptor{{MediaType: im.MediaType, Size: int64(len(im.RawManifest)), Digest: im.Digest}}
		return nil
	}
	idx, err := v1.ParseIndexManifest(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("parse %s: %w", mediaType, err)
	}
	s.List, s.ListMediaType, s.ListDigest = idx, mediaType, sha256Of(raw)
	for _, d := range idx.Manifests {
		if !isPlatformImage(d) {
			s.Skipped = append(s.Skipped, d)
			continue
		}
		childRaw, childMT, err := s.src.manifest(ctx, d.Digest.String())
		if err != nil {
			return err
		}
		if got := sha256Of(childRaw); got != d.Digest {
			return fmt.Errorf("manifest %s has digest %s", d.Digest, got)
		}
		listDigest := s.ListDigest
		im := &Image{Ref: s.Ref, c: c, src: sharedSource{s.src}, IndexDigest: &listDigest}
		if childMT == "" {
			childMT = string(d.MediaType)
		}
		if err := im.load(ctx, childRaw, childMT); err != nil {
			return fmt.Errorf("image %s of the list: %w", d.Digest, err)
		}
		s.Images = append(s.Images, im)
		s.Descriptors = append(s.Descriptors, d)
	}
	if len(s.Images) == 0 {
		return errors.New("the manifest list holds no platform image")
	}
	return nil
}

// isPlatformImage tells image manifests from attestations (Docker buildx
// marks them with unknown/unknown and a reference-type annotation) and nested lists.
func isPlatformImage(d v1.Descriptor) bool {
	switch d.MediaType {
	case types.OCIManifestSchema1, types.DockerManifestSchema2:
	default:
		return false
	}
	if _, ok := d.Annotations["vnd.docker.reference.type"]; ok {
		return false
	}
	return d.Platform == nil || d.Platform.OS != "unknown"
}

// ListEntry is one image of a list to write, with the descriptor fields to keep.
type ListEntry struct {
	Image       v1.Image
	Platform    *v1.Platform
	Annotations map[string]string
}

// NewList builds a manifest list (mediaType types.DockerManifestList) or OCI
// index (types.OCIImageIndex) over images; annotations are the list's own.
func NewList(mediaType types.MediaType, annotations map[string]string, entries ...ListEntry) (v1.ImageIndex, error) {
	idx := &v1.IndexManifest{SchemaVersion: 2, MediaType: mediaType, Manifests: []v1.Descriptor{}, Annotations: annotations}
	images := map[v1.Hash]v1.Image{}
	for _, e := range entries {
		d, err := partial.Descriptor(e.Image)
		if err != nil {
			return nil, err
		}
		d.Platform, d.Annotations = e.Platform, e.Annotations
		idx.Manifests = append(idx.Manifests, *d)
		images[d.Digest] = e.Image
	}
	raw, err := json.Marshal(idx)
	if err != nil {
		return nil, err
	}
	return &staticIndex{raw: raw, manifest: idx, images: images}, nil
}

// staticIndex is a v1.ImageIndex with fixed bytes over in-memory images.
type staticIndex struct {
	raw      []byte
	manifest *v1.IndexManifest
	images   map[v1.Hash]v1.Image
}

var _ v1.ImageIndex = (*staticIndex)(nil)

func (x *staticIndex) MediaType() (types.MediaType, error) { return x.manifest.MediaType, nil }
func (x *staticIndex) Digest() (v1.Hash, error)            { return sha256Of(x.raw), nil }
func (x *staticIndex) Size() (int64, error)                { return int64(len(x.raw)), nil }
func (x *staticIndex) IndexManifest() (*v1.IndexManifest, error) {
	return x.manifest.DeepCopy(), nil
}
func (x *staticIndex) RawManifest() ([]byte, error) { return x.raw, nil }
func (x *staticIndex) Image(h v1.Hash) (v1.Image, error) {
	if im, ok := x.images[h]; ok {
		return im, nil
	}
	return nil, fmt.Errorf("no image %s in the list", h)
}
func (x *staticIndex) ImageIndex(h v1.Hash) (v1.ImageIndex, error) {
	return nil, fmt.Errorf("no nested list %s in the list", h)
}

// WriteList stores a manifest list / OCI index and its images at dst: a
// registry push (blobs the registry has are skipped or mounted, as in
// Write), an OCI layout or an oci-archive. A docker-archive cannot hold a
// list. It returns the list's digest.
func (c *Client) WriteList(ctx context.Context, idx v1.ImageIndex, dst Ref) (v1.Hash, error) {
	d, err := idx.Digest()
	if err != nil {
		return v1.Hash{}, fmt.Errorf("write image %s: %w", dst, err)
	}
	switch dst.Transport {
	case TransportRegistry:
		err = c.pushList(ctx, idx, dst)
	case TransportOCI:
		err = writeLayoutList(ctx, dst.Path, dst.Tag, idx)
	case TransportOCIArchive:
		err = c.writeOCIArchiveList(ctx, dst, idx)
	case TransportDockerArchive:
		err = fmt.Errorf("a docker-archive holds no multi-platform image; write to oci-archive: or oci:, or choose one platform with --%s", FlagPlatform)
	case TransportContainersStorage:
		err = ErrContainersStorage
	default:
		err = fmt.Errorf("unsupported transport %q", dst.Transport)
	}
	if err != nil {
		return v1.Hash{}, fmt.Errorf("write image %s: %w", dst, err)
	}
	return d, nil
}

func (c *Client) pushList(ctx context.Context, idx v1.ImageIndex, dst Ref) error {
	return c.pushWith(ctx, dst, func(ref name.Reference, opts []remote.Option) error { return remote.WriteIndex(ref, idx, opts...) })
}

// writeLayoutList writes every image's blobs, the list blob, and one
// index.json entry for the list (tagged when tag is set).
func writeLayoutList(ctx context.Context, dir, tag string, idx v1.ImageIndex) error {
	if err := initLayout(dir); err != nil {
		return err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, d := range im.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			return err
		}
		if err := writeImageBlobs(ctx, dir, img); err != nil {
			return err
		}
	}
	raw, err := idx.RawManifest()
	if err != nil {
		return err
	}
	if err := writeBlobBytes(ctx, dir, raw); err != nil {
		return err
	}
	desc := v1.Descriptor{MediaType: im.MediaType, Size: int64(len(raw)), Digest: sha256Of(raw)}
	if tag != "" {
		desc.Annotations = map[string]string{refNameAnnotation: tag}
	}
	return updateIndex(dir, desc)
}

// writeImageBlobs writes an image's layers, config and manifest as blobs.
func writeImageBlobs(ctx context.Context, dir string, img v1.Image) error {
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return err
		}
		size, err := l.Size()
		if err != nil {
			return err
		}
		if err := writeBlob(ctx, dir, d, size, l.Compressed); err != nil {
			return fmt.Errorf("layer %s: %w", d, err)
		}
	}
	rawCfg, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	rawManifest, err := img.RawManifest()
	if err != nil {
		return err
	}
	for _, blob := range [][]byte{rawCfg, rawManifest} {
		if err := writeBlobBytes(ctx, dir, blob); err != nil {
			return err
		}
	}
	return nil
}

func (c *Client) writeOCIArchiveList(ctx context.Context, dst Ref, idx v1.ImageIndex) error {
	dir, err := os.MkdirTemp(filepath.Dir(dst.Path), ".opm-oci-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := writeLayoutList(ctx, dir, dst.Tag, idx); err != nil {
		return err
	}
	return atomicfile.Write(dst.Path, func(w io.Writer) error { return tarDir(ctx, w, dir) })
}
