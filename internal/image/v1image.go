package image

import (
	"bytes"
	"context"
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/opmkit/opm/internal/image/layerfs"
)

// staticImage is a v1.Image with fixed manifest and config bytes. Its Layers
// are returned as given, so go-containerregistry still sees remote layers as
// mountable.
type staticImage struct {
	rawManifest []byte
	manifest    *v1.Manifest
	rawConfig   []byte
	config      *v1.ConfigFile
	layers      []v1.Layer
}

var _ v1.Image = (*staticImage)(nil)

func (i *staticImage) Layers() ([]v1.Layer, error) { return i.layers, nil }

// MediaType is the manifest's, or for a manifest that omits it (OCI allows
// that) the type its config implies.
func (i *staticImage) MediaType() (types.MediaType, error) {
	if i.manifest.MediaType != "" {
		return i.manifest.MediaType, nil
	}
	return manifestTypeFor(i.manifest.Config.MediaType), nil
}
func (i *staticImage) Size() (int64, error)                { return int64(len(i.rawManifest)), nil }
func (i *staticImage) ConfigName() (v1.Hash, error)        { return i.manifest.Config.Digest, nil }
func (i *staticImage) ConfigFile() (*v1.ConfigFile, error) { return i.config.DeepCopy(), nil }
func (i *staticImage) RawConfigFile() ([]byte, error)      { return i.rawConfig, nil }
func (i *staticImage) Digest() (v1.Hash, error)            { return sha256Of(i.rawManifest), nil }
func (i *staticImage) Manifest() (*v1.Manifest, error)     { return i.manifest.DeepCopy(), nil }
func (i *staticImage) RawManifest() ([]byte, error)        { return i.rawManifest, nil }

func (i *staticImage) LayerByDigest(h v1.Hash) (v1.Layer, error) {
	for j, d := range i.manifest.Layers {
		if d.Digest == h {
			return i.layers[j], nil
		}
	}
	if h == i.manifest.Config.Digest {
		return &memLayer{compressed: i.rawConfig, uncompressed: i.rawConfig, digest: h, diffID: h, mediaType: i.manifest.Config.MediaType}, nil
	}
	return nil, fmt.Errorf("no layer %s in image", h)
}

func (i *staticImage) LayerByDiffID(h v1.Hash) (v1.Layer, error) {
	for j, d := range i.config.RootFS.DiffIDs {
		if d == h {
			return i.layers[j], nil
		}
	}
	return nil, fmt.Errorf("no layer with diff_id %s in image", h)
}

// V1Image returns the opened image as a go-containerregistry image whose
// layers are fetched only if read. Layers of registry images are mountable:
// writing to another repository of the same registry mounts them instead of
// moving their bytes. ctx bounds the lazy fetches; the image must stay open
// while they may happen.
func (im *Image) V1Image(ctx context.Context) v1.Image {
	layers := make([]v1.Layer, len(im.Manifest.Layers))
	for i, d := range im.Manifest.Layers {
		var diffID v1.Hash
		if i < len(im.Config.RootFS.DiffIDs) {
			diffID = im.Config.RootFS.DiffIDs[i]
		}
		var l v1.Layer = &lazyLayer{ctx: ctx, im: im, index: i, desc: d, diffID: diffID}
		if repo := im.src.repository(); repo != nil {
			l = &remote.MountableLayer{Layer: l, Reference: repo}
		}
		layers[i] = l
	}
	return &staticImage{rawManifest: im.RawManifest, manifest: im.Manifest, rawConfig: im.RawConfig, config: im.Config, layers: layers}
}

// lazyLayer fetches its blob from the image's source on first read.
type lazyLayer struct {
	ctx    context.Context
	im     *Image
	index  int
	desc   v1.Descriptor
	diffID v1.Hash
}

func (l *lazyLayer) Digest() (v1.Hash, error)            { return l.desc.Digest, nil }
func (l *lazyLayer) Size() (int64, error)                { return l.desc.Size, nil }
func (l *lazyLayer) MediaType() (types.MediaType, error) { return l.desc.MediaType, nil }

func (l *lazyLayer) DiffID() (v1.Hash, error) {
	if l.diffID.Hex == "" {
		return v1.Hash{}, fmt.Errorf("layer %s: config lists no diff_id", l.desc.Digest)
	}
	return l.diffID, nil
}

func (l *lazyLayer) Compressed() (io.ReadCloser, error) {
	if l.im.src == nil {
		return nil, fmt.Errorf("layer %s: image %s is closed", l.desc.Digest, l.im.Ref)
	}
	// The layer may be an index image's database kept under a new top
	// layer, hence the larger of the two limits.
	o := l.im.c.opts
	if limit := max(o.MaxLayerSize, o.MaxDatabaseSize); l.desc.Size < 0 || l.desc.Size > limit {
		return nil, layerfs.Errorf(l.desc.Digest.String(), "", "compressed size %s is over the %s limit (--%s, --%s)", layerfs.HumanSize(l.desc.Size), layerfs.HumanSize(limit), FlagMaxLayerSize, FlagMaxDBSize)
	}
	rc, err := l.im.src.blob(l.ctx, l.desc)
	if err != nil {
		return nil, err
	}
	// Verify what we pass on: a destination must never get a wrong blob.
	return &verifyingReader{rc: rc, cr: &layerfs.CountingReader{R: rc, H: newSHA256(), Limit: l.desc.Size}, want: l.desc}, nil
}

func (l *lazyLayer) Uncompressed() (io.ReadCloser, error) {
	lr, err := l.im.OpenLayer(l.ctx, l.index)
	if err != nil {
		return nil, err
	}
	return &uncompressedReader{lr}, nil
}

type uncompressedReader struct{ lr *LayerReader }

func (u *uncompressedReader) Read(p []byte) (int, error) {
	n, err := u.lr.Read(p)
	if err == io.EOF {
		if verr := u.lr.Verify(); verr != nil {
			return n, verr
		}
	}
	return n, err
}
func (u *uncompressedReader) Close() error { return u.lr.Close() }

type verifyingReader struct {
	rc   io.ReadCloser
	cr   *layerfs.CountingReader
	want v1.Descriptor
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	n, err := v.cr.Read(p)
	if err == io.EOF {
		if v.cr.N != v.want.Size {
			return n, fmt.Errorf("blob %s is %d bytes, want %d", v.want.Digest, v.cr.N, v.want.Size)
		}
		if got := hashOf(v.cr.H); got != v.want.Digest {
			return n, fmt.Errorf("blob %s has digest %s", v.want.Digest, got)
		}
	}
	return n, err
}
func (v *verifyingReader) Close() error { return v.rc.Close() }

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
