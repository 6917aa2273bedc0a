package image

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/opmkit/opm/internal/atomicfile"
)

// Write stores img at dst: a registry push, an OCI layout (oci:DIR[:TAG],
// created if missing, other images kept), an oci-archive or a docker-archive
// file (replaced atomically). Blobs the destination already has are not sent
// again: registries get a HEAD check, or a cross-repository mount for layers
// of images opened from the same registry; layouts skip existing blob files.
// It returns the manifest digest.
func (c *Client) Write(ctx context.Context, img v1.Image, dst Ref) (v1.Hash, error) {
	d, err := img.Digest()
	if err != nil {
		return v1.Hash{}, fmt.Errorf("write image %s: %w", dst, err)
	}
	switch dst.Transport {
	case TransportRegistry:
		err = c.push(ctx, img, dst)
	case TransportOCI:
		err = writeLayout(ctx, dst.Path, dst.Tag, img)
	case TransportOCIArchive:
		err = c.writeOCIArchive(ctx, dst, img)
	case TransportDockerArchive:
		err = writeDockerArchive(ctx, dst, img)
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

func (c *Client) push(ctx context.Context, img v1.Image, dst Ref) error {
	return c.pushWith(ctx, dst, func(ref name.Reference, opts []remote.Option) error { return remote.Write(ref, img, opts...) })
}

// pushWith runs write (remote.Write or remote.WriteIndex) against dst's
// registry with the client's transport and credentials.
func (c *Client) pushWith(ctx context.Context, dst Ref, write func(name.Reference, []remote.Option) error) error {
	ep, err := c.pushEndpoint(dst)
	if err != nil {
		return err
	}
	opts, cred, err := c.remoteOptions(ctx, ep)
	if err != nil {
		return err
	}
	if err := write(ep.ref, opts); err != nil {
		return registryError("push", ep, cred, err)
	}
	return nil
}

const refNameAnnotation = "org.opencontainers.image.ref.name"

// initLayout makes dir an OCI layout if it is not one yet.
func initLayout(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "blobs", "sha256"), 0o755); err != nil {
		return err
	}
	layoutFile := filepath.Join(dir, "oci-layout")
	if _, err := os.Stat(layoutFile); errors.Is(err, fs.ErrNotExist) {
		return atomicfile.WriteFile(layoutFile, []byte(`{"imageLayoutVersion":"1.0.0"}`))
	}
	return nil
}

// writeLayout adds img to the OCI layout at dir, replacing any image with the
// same tag. Blobs go through a temporary file renamed into place, so an
// interrupted write leaves no partial blob behind.
func writeLayout(ctx context.Context, dir, tag string, img v1.Image) error {
	if err := initLayout(dir); err != nil {
		return err
	}
	if err := writeImageBlobs(ctx, dir, img); err != nil {
		return err
	}
	rawManifest, err := img.RawManifest()
	if err != nil {
		return err
	}
	mt, err := img.MediaType()
	if err != nil {
		return err
	}
	desc := v1.Descriptor{MediaType: mt, Size: int64(len(rawManifest)), Digest: sha256Of(rawManifest)}
	if tag != "" {
		desc.Annotations = map[string]string{refNameAnnotation: tag}
	}
	return updateIndex(dir, desc)
}

func updateIndex(dir string, desc v1.Descriptor) error {
	path := filepath.Join(dir, "index.json")
	idx := v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex}
	if raw, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(raw, &idx); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tag := desc.Annotations[refNameAnnotation]
	idx.Manifests = slices.DeleteFunc(idx.Manifests, func(d v1.Descriptor) bool {
		if tag != "" {
			return d.Annotations[refNameAnnotation] == tag
		}
		return d.Digest == desc.Digest && d.Annotations[refNameAnnotation] == ""
	})
	idx.Manifests = append(idx.Manifests, desc)
	raw, err := json.Marshal(idx)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, raw)
}

func writeBlobBytes(ctx context.Context, dir string, b []byte) error {
	return writeBlob(ctx, dir, sha256Of(b), int64(len(b)), func() (io.ReadCloser, error) {
		return io.NopCloser(bytesReader(b)), nil
	})
}

func writeBlob(ctx context.Context, dir string, d v1.Hash, size int64, open func() (io.ReadCloser, error)) error {
	final := filepath.Join(dir, "blobs", d.Algorithm, d.Hex)
	if st, err := os.Stat(final); err == nil && st.Size() == size {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	rc, err := open()
	if err != nil {
		return err
	}
	defer rc.Close()
	tmp, err := os.CreateTemp(filepath.Dir(final), ".tmp-"+d.Hex[:12]+"-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	h := newSHA256()
	n, err := io.Copy(io.MultiWriter(tmp, h), ctxReader{ctx, rc})
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if got := hashOf(h); n != size || got != d {
		return fmt.Errorf("blob %s: wrote %d bytes with digest %s, want %d bytes", d, n, got, size)
	}
	return os.Rename(tmp.Name(), final)
}

// ctxReader stops a copy when ctx is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// writeOCIArchive writes a layout into a temporary directory beside the
// archive, tars it into a temporary file and renames that over FILE.
func (c *Client) writeOCIArchive(ctx context.Context, dst Ref, img v1.Image) error {
	dir, err := os.MkdirTemp(filepath.Dir(dst.Path), ".opm-oci-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := writeLayout(ctx, dir, dst.Tag, img); err != nil {
		return err
	}
	return atomicfile.Write(dst.Path, func(w io.Writer) error { return tarDir(ctx, w, dir) })
}

// tarDir writes the files under dir to w, sorted, with fixed metadata.
func tarDir(ctx context.Context, w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: filepath.ToSlash(rel), ModTime: Epoch, Mode: 0o644, Typeflag: tar.TypeReg, Size: info.Size()}
		if d.IsDir() {
			hdr.Name, hdr.Mode, hdr.Typeflag, hdr.Size = hdr.Name+"/", 0o755, tar.TypeDir, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// writeDockerArchive writes a `docker save` style archive (go-containerregistry's tarball).
func writeDockerArchive(ctx context.Context, dst Ref, img v1.Image) error {
	var ref name.Reference
	if dst.Name != "" {
		t, err := name.NewTag(dst.Name)
		if err != nil {
			return err
		}
		ref = t
	} else {
		// An untagged archive: a digest reference makes tarball write no RepoTags.
		d, err := img.Digest()
		if err != nil {
			return err
		}
		ref, err = name.NewDigest("untagged@" + d.String())
		if err != nil {
			return err
		}
	}
	return atomicfile.Write(dst.Path, func(w io.Writer) error {
		return tarball.Write(ref, img, ctxWriter{ctx, w})
	})
}

type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// UploadLayer sends one layer blob to dst's repository, without a
// manifest: a later Write of an image holding it then finds it there. A
// layer whose Digest fails until its bytes have been read is streamed as
// it is made (a chunked upload, committed under the digest known at the
// end), which is how a large layer's upload overlaps with building it.
func (c *Client) UploadLayer(ctx context.Context, dst Ref, l v1.Layer) error {
	if dst.Transport != TransportRegistry {
		return fmt.Errorf("upload layer to %s: not a registry", dst)
	}
	return c.pushWith(ctx, dst, func(ref name.Reference, opts []remote.Option) error {
		return remote.WriteLayer(ref.Context(), l, opts...)
	})
}
