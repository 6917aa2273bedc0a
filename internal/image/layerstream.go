package image

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/klauspost/compress/zstd"
)

// LayerReader streams one layer's uncompressed tar. Read it, then call Verify
// to check digest, size and diff_id (Verify drains what is left), then Close.
type LayerReader struct {
	desc       v1.Descriptor
	wantDiffID v1.Hash
	max        int64

	raw      io.ReadCloser
	comp     *countingReader // compressed bytes, hashed
	decomp   io.Reader
	closer   func()
	n        int64 // uncompressed bytes read
	diffHash hash.Hash
	err      error
}

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// OpenLayer fetches layer i (0 is the bottom) and returns its uncompressed tar
// stream. The compression is detected from the content, because docker-archive
// layers are often plain tar under a gzip media type.
func (im *Image) OpenLayer(ctx context.Context, i int) (*LayerReader, error) {
	if i < 0 || i >= len(im.Manifest.Layers) {
		return nil, fmt.Errorf("layer index %d out of range (image has %d layers)", i, len(im.Manifest.Layers))
	}
	desc := im.Manifest.Layers[i]
	var diffID v1.Hash
	if i < len(im.Config.RootFS.DiffIDs) {
		diffID = im.Config.RootFS.DiffIDs[i]
	}
	max := im.c.opts.MaxLayerSize
	if desc.Size > max {
		return nil, layerErr(desc.Digest.String(), "", "compressed size %s is over the %s limit (--%s)", humanSize(desc.Size), humanSize(max), FlagMaxLayerSize)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	rc, err := im.src.blob(ctx, desc)
	if err != nil {
		return nil, fmt.Errorf("layer %s: %w", desc.Digest, err)
	}
	return newLayerReader(rc, desc, diffID, max)
}

func newLayerReader(rc io.ReadCloser, desc v1.Descriptor, diffID v1.Hash, max int64) (*LayerReader, error) {
	lr := &LayerReader{desc: desc, wantDiffID: diffID, max: max, raw: rc, diffHash: sha256.New()}
	lr.comp = &countingReader{r: rc, h: sha256.New(), limit: desc.Size}
	br := bufio.NewReaderSize(lr.comp, 64<<10)
	head, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(head, gzipMagic):
		zr, err := gzip.NewReader(br)
		if err != nil {
			rc.Close()
			return nil, layerErr(desc.Digest.String(), "", "bad gzip stream: %v", err)
		}
		lr.decomp, lr.closer = zr, func() { zr.Close() }
	case bytes.HasPrefix(head, zstdMagic):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(64<<20))
		if err != nil {
			rc.Close()
			return nil, layerErr(desc.Digest.String(), "", "bad zstd stream: %v", err)
		}
		lr.decomp, lr.closer = zr, zr.Close
	default:
		lr.decomp = br
	}
	return lr, nil
}

// Digest is the layer's (compressed) digest.
func (lr *LayerReader) Digest() v1.Hash { return lr.desc.Digest }

func (lr *LayerReader) Read(p []byte) (int, error) {
	if lr.err != nil {
		return 0, lr.err
	}
	n, err := lr.decomp.Read(p)
	lr.n += int64(n)
	lr.diffHash.Write(p[:n])
	if lr.n > lr.max {
		lr.err = layerErr(lr.desc.Digest.String(), "", "uncompressed size is over the %s limit (--%s)", humanSize(lr.max), FlagMaxLayerSize)
		return n, lr.err
	}
	if err != nil && err != io.EOF {
		var le *LayerError
		if errors.As(err, &le) {
			lr.err = err
		} else {
			lr.err = fmt.Errorf("layer %s: %w", lr.desc.Digest, err)
		}
		return n, lr.err
	}
	return n, err
}

// Verify reads what is left and checks the compressed digest and size and,
// when the config lists it, the uncompressed diff_id.
func (lr *LayerReader) Verify() error {
	if _, err := io.Copy(io.Discard, lr); err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, lr.comp); err != nil {
		var le *LayerError
		if errors.As(err, &le) {
			return err
		}
		return fmt.Errorf("layer %s: %w", lr.desc.Digest, err)
	}
	d := lr.desc.Digest.String()
	if lr.comp.n != lr.desc.Size {
		return layerErr(d, "", "blob is %d bytes, the manifest says %d", lr.comp.n, lr.desc.Size)
	}
	if got := hashOf(lr.comp.h); got != lr.desc.Digest {
		return layerErr(d, "", "blob has digest %s", got)
	}
	if lr.wantDiffID.Hex != "" {
		if got := hashOf(lr.diffHash); got != lr.wantDiffID {
			return layerErr(d, "", "uncompressed digest %s does not match the config's diff_id %s", got, lr.wantDiffID)
		}
	}
	return nil
}

// Close releases the stream.
func (lr *LayerReader) Close() error {
	if lr.closer != nil {
		lr.closer()
		lr.closer = nil
	}
	return lr.raw.Close()
}

func hashOf(h hash.Hash) v1.Hash {
	return v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", h.Sum(nil))}
}

// countingReader hashes and counts, and refuses to read past limit (the
// descriptor's size) so a lying registry cannot stream forever.
type countingReader struct {
	r     io.Reader
	h     hash.Hash
	n     int64
	limit int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.n > c.limit {
		return 0, fmt.Errorf("blob is larger than the %d bytes the manifest says", c.limit)
	}
	if rem := c.limit + 1 - c.n; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.h.Write(p[:n])
	if c.n > c.limit {
		return n, fmt.Errorf("blob is larger than the %d bytes the manifest says", c.limit)
	}
	return n, err
}

func newSHA256() hash.Hash { return sha256.New() }
