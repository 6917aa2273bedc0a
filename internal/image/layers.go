package image

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"io/fs"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/opmkit/opm/internal/image/layerfs"
)

// The flattened filesystem and layer refusals live in layerfs (kept small so
// fuzzing it is fast); these names make them part of this package's API.
type (
	// FS is an image's flattened filesystem; see layerfs.FS.
	FS = layerfs.FS
	// LayerError names the layer and entry a refusal is about.
	LayerError = layerfs.LayerError
	// LayerReader streams one layer's uncompressed tar; call Verify after reading.
	LayerReader = layerfs.Reader
)

// ErrUnsafeLayer is wrapped by every refusal of a layer's content.
var ErrUnsafeLayer = layerfs.ErrUnsafeLayer

// ExtractTo writes fsys under dir through os.Root; see layerfs.ExtractTo.
func ExtractTo(ctx context.Context, fsys fs.FS, dir string) error {
	return layerfs.ExtractTo(ctx, fsys, dir)
}

// NewFS returns an empty filesystem with opts' limits.
func NewFS(opts Options) *FS { return layerfs.New(opts.limits()) }

func (o Options) limits() layerfs.Limits {
	return layerfs.Limits{MaxEntry: o.MaxLayerSize, MaxTotal: o.MaxImageSize, SpillFile: o.SpillFileSize, SpillTotal: o.SpillTotalSize, TempDir: o.TempDir}
}

// OpenLayer fetches layer i (0 is the bottom) and returns its uncompressed
// tar stream, capped at --max-layer-size.
func (im *Image) OpenLayer(ctx context.Context, i int) (*LayerReader, error) {
	return im.openLayer(ctx, i, im.c.opts.MaxLayerSize, FlagMaxLayerSize, layerfs.ReaderOptions{})
}

// OpenDatabaseLayer is OpenLayer for the layer holding an index image's
// database, capped at --max-database-size instead.
func (im *Image) OpenDatabaseLayer(ctx context.Context, i int) (*LayerReader, error) {
	return im.OpenDatabaseLayerWith(ctx, i, layerfs.ReaderOptions{})
}

// OpenDatabaseLayerWith is OpenDatabaseLayer with reader options (gzip
// members, a copy of the compressed bytes).
func (im *Image) OpenDatabaseLayerWith(ctx context.Context, i int, opts layerfs.ReaderOptions) (*LayerReader, error) {
	lr, err := im.openLayer(ctx, i, im.c.opts.MaxDatabaseSize, FlagMaxDBSize, opts)
	if err != nil {
		return nil, err
	}
	// A database layer is large (tens of MB compressed, hundreds not):
	// download and decompress it beside the caller's hashing and writing.
	lr.ReadAhead()
	return lr, nil
}

func (im *Image) openLayer(ctx context.Context, i int, max int64, flag string, opts layerfs.ReaderOptions) (*LayerReader, error) {
	if i < 0 || i >= len(im.Manifest.Layers) {
		return nil, fmt.Errorf("layer index %d out of range (image has %d layers)", i, len(im.Manifest.Layers))
	}
	desc := im.Manifest.Layers[i]
	want := layerfs.Expect{Digest: desc.Digest.String(), Size: desc.Size}
	if i < len(im.Config.RootFS.DiffIDs) {
		want.DiffID = im.Config.RootFS.DiffIDs[i].String()
	}
	if desc.Size > max {
		return nil, layerfs.Errorf(want.Digest, "", "compressed size %s is over the %s limit (--%s)", layerfs.HumanSize(desc.Size), layerfs.HumanSize(max), flag)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rc, err := im.src.blob(ctx, desc)
	if err != nil {
		return nil, fmt.Errorf("layer %s: %w", desc.Digest, err)
	}
	opts.Hint = "--" + flag
	return layerfs.NewReaderWith(rc, want, max, opts)
}

// FS flattens all layers of the image, bottom first, into a filesystem.
// Hostile content is refused with a *LayerError naming the layer and entry.
// Close the result when done.
func (im *Image) FS(ctx context.Context) (*FS, error) { return im.fs(ctx, im.c.opts) }

func (im *Image) fs(ctx context.Context, opts Options) (*FS, error) {
	f := NewFS(opts)
	for i := range im.Manifest.Layers {
		if err := im.applyLayer(ctx, f, i, opts.MaxLayerSize); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("read filesystem of %s: %w", im.Ref, err)
		}
	}
	return f, nil
}

func (im *Image) applyLayer(ctx context.Context, f *FS, i int, max int64) error {
	lr, err := im.openLayer(ctx, i, max, FlagMaxLayerSize, layerfs.ReaderOptions{})
	if err != nil {
		return err
	}
	defer func() { _ = lr.Close() }()
	if err := f.ApplyLayer(ctx, lr, lr.Digest()); err != nil {
		return err
	}
	return lr.Verify()
}

func newSHA256() hash.Hash { return sha256.New() }

func hashOf(h hash.Hash) v1.Hash {
	return v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", h.Sum(nil))}
}

func sha256Of(b []byte) v1.Hash {
	h, _, _ := v1.SHA256(bytes.NewReader(b))
	return h
}
