package image

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Limits on the small JSON documents of an image.
const (
	maxManifestSize = 4 << 20
	maxConfigSize   = 16 << 20
)

// Image is an opened image: manifest and config are read, layers are fetched
// only on demand (OpenLayer, FS, ReadFile, V1Image).
type Image struct {
	Ref Ref
	// Digest is the digest of the image manifest (not of an index it was picked from).
	Digest v1.Hash
	// IndexDigest is the digest of the manifest list / OCI index the image was picked from, if any.
	IndexDigest *v1.Hash
	// MediaType of the manifest.
	MediaType   types.MediaType
	RawManifest []byte
	Manifest    *v1.Manifest
	RawConfig   []byte
	Config      *v1.ConfigFile

	c   *Client
	src source
}

// Open reads the manifest and config of ref. A manifest list or OCI index
// resolves to the image for the client's platform. Close the image when done.
func (c *Client) Open(ctx context.Context, ref Ref) (*Image, error) {
	im, err := c.open(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("open image %s: %w", ref, err)
	}
	return im, nil
}

// OpenString parses s and opens it.
func (c *Client) OpenString(ctx context.Context, s string) (*Image, error) {
	ref, err := ParseReference(s)
	if err != nil {
		return nil, err
	}
	return c.Open(ctx, ref)
}

// openSource opens ref's transport and reads its top-level manifest.
func (c *Client) openSource(ctx context.Context, ref Ref) (src source, raw []byte, mediaType string, err error) {
	if ref.Transport == TransportRegistry {
		return c.openRegistry(ctx, ref)
	}
	return c.openLocal(ctx, ref)
}

func (c *Client) open(ctx context.Context, ref Ref) (*Image, error) {
	src, raw, mt, err := c.openSource(ctx, ref)
	if err != nil {
		return nil, err
	}
	im := &Image{Ref: ref, c: c, src: src}
	if err := im.load(ctx, raw, mt); err != nil {
		_ = src.close()
		return nil, err
	}
	return im, nil
}

func (im *Image) load(ctx context.Context, raw []byte, mt string) error {
	for depth := 0; ; depth++ {
		if len(raw) > maxManifestSize {
			return fmt.Errorf("manifest is %d bytes, over the %d byte limit", len(raw), maxManifestSize)
		}
		mediaType := sniffManifestType(raw, mt)
		switch mediaType {
		case types.OCIImageIndex, types.DockerManifestList:
			if depth > 2 {
				return errors.New("manifest lists nested too deeply")
			}
			d := sha256Of(raw)
			if im.IndexDigest == nil {
				im.IndexDigest = &d
			}
			idx, err := v1.ParseIndexManifest(bytes.NewReader(raw))
			if err != nil {
				return fmt.Errorf("parse %s: %w", mediaType, err)
			}
			child, err := pickPlatform(idx, im.c.platform)
			if err != nil {
				return err
			}
			raw, mt, err = im.src.manifest(ctx, child.Digest.String())
			if err != nil {
				return err
			}
			if got := sha256Of(raw); got != child.Digest {
				return fmt.Errorf("manifest %s has digest %s", child.Digest, got)
			}
			continue
		case types.OCIManifestSchema1, types.DockerManifestSchema2:
		case types.DockerManifestSchema1, types.DockerManifestSchema1Signed:
			return errors.New("docker schema 1 manifests are not supported; re-push the image with a current tool")
		default:
			return fmt.Errorf("wrong media type: manifest is %q, not an image manifest", mediaType)
		}
		m, err := v1.ParseManifest(bytes.NewReader(raw))
		if err != nil {
			return fmt.Errorf("parse manifest: %w", err)
		}
		im.MediaType, im.RawManifest, im.Manifest = mediaType, raw, m
		im.Digest = sha256Of(raw)
		return im.loadConfig(ctx)
	}
}

func (im *Image) loadConfig(ctx context.Context) error {
	cd := im.Manifest.Config
	switch cd.MediaType {
	case types.OCIConfigJSON, types.DockerConfigJSON, "":
	default:
		return fmt.Errorf("wrong media type: config is %q, not an image config (is this an OCI artifact?)", cd.MediaType)
	}
	if cd.Size > maxConfigSize {
		return fmt.Errorf("config %s is %d bytes, over the %d byte limit", cd.Digest, cd.Size, maxConfigSize)
	}
	rc, err := im.src.blob(ctx, cd)
	if err != nil {
		return fmt.Errorf("fetch config: %w", err)
	}
	defer rc.Close()
	raw, err := io.ReadAll(io.LimitReader(rc, maxConfigSize+1))
	if err != nil {
		return fmt.Errorf("fetch config %s: %w", cd.Digest, err)
	}
	if got := sha256Of(raw); got != cd.Digest {
		return fmt.Errorf("config blob has digest %s, manifest says %s", got, cd.Digest)
	}
	cfg, err := v1.ParseConfigFile(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("parse config %s: %w", cd.Digest, err)
	}
	if n := len(cfg.RootFS.DiffIDs); n != 0 && n != len(im.Manifest.Layers) {
		return fmt.Errorf("config lists %d layers (diff_ids), manifest %d", n, len(im.Manifest.Layers))
	}
	for _, l := range im.Manifest.Layers {
		if !isLayerMediaType(l.MediaType) {
			return fmt.Errorf("wrong media type: layer %s is %q, not a filesystem layer", l.Digest, l.MediaType)
		}
	}
	im.RawConfig, im.Config = raw, cfg
	return nil
}

func isLayerMediaType(mt types.MediaType) bool {
	switch mt {
	case types.OCILayer, types.OCILayerZStd, types.OCIUncompressedLayer,
		types.OCIRestrictedLayer, types.OCIUncompressedRestrictedLayer,
		types.DockerLayer, types.DockerForeignLayer, types.DockerUncompressedLayer,
		"application/vnd.oci.image.layer.nondistributable.v1.tar+zstd":
		return true
	}
	return false
}

// sniffManifestType trusts the transport's media type, else the document's own field.
func sniffManifestType(raw []byte, mt string) types.MediaType {
	if mt != "" && mt != "text/plain" && mt != "application/json" {
		return types.MediaType(mt)
	}
	var probe struct {
		MediaType string            `json:"mediaType"`
		Manifests []json.RawMessage `json:"manifests"`
		Config    json.RawMessage   `json:"config"`
	}
	if json.Unmarshal(raw, &probe) != nil {
		return types.MediaType(mt)
	}
	switch {
	case probe.MediaType != "":
		return types.MediaType(probe.MediaType)
	case probe.Manifests != nil:
		return types.OCIImageIndex
	case probe.Config != nil:
		return types.OCIManifestSchema1
	}
	return types.MediaType(mt)
}

func pickPlatform(idx *v1.IndexManifest, want Platform) (v1.Descriptor, error) {
	var seen []string
	var fallback *v1.Descriptor
	for i, d := range idx.Manifests {
		p := d.Platform
		if p == nil {
			continue
		}
		seen = append(seen, Platform{OS: p.OS, Architecture: p.Architecture, Variant: p.Variant}.String())
		if p.OS != want.OS || p.Architecture != want.Architecture {
			continue
		}
		if p.Variant == want.Variant {
			return d, nil
		}
		if want.Variant == "" && fallback == nil {
			fallback = &idx.Manifests[i]
		}
	}
	if fallback != nil {
		return *fallback, nil
	}
	if len(seen) == 0 && len(idx.Manifests) == 1 {
		return idx.Manifests[0], nil // a one-image index without platforms
	}
	return v1.Descriptor{}, fmt.Errorf("no image for platform %s in the manifest list (has: %s); choose one with --%s",
		want, listSome(seen, 10), FlagPlatform)
}

// listSome joins the first n items and says how many more there are: a
// hostile list of thousands must not make a message of thousands.
func listSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

// Labels returns the image config's labels (never nil).
func (im *Image) Labels() map[string]string {
	out := map[string]string{}
	if im.Config != nil {
		for k, v := range im.Config.Config.Labels {
			out[k] = v
		}
	}
	return out
}

// Layers returns the layer descriptors, bottom first.
func (im *Image) Layers() []v1.Descriptor { return im.Manifest.Layers }

// Close releases the source (for oci-archive, the unpacked temporary directory).
func (im *Image) Close() error {
	if im == nil || im.src == nil {
		return nil
	}
	err := im.src.close()
	im.src = nil
	return err
}

// OpenFS opens ref and flattens its layers: the filesystem and the config
// labels. The filesystem does not depend on the image staying open; close it
// when done.
func (c *Client) OpenFS(ctx context.Context, ref Ref) (*FS, map[string]string, error) {
	im, err := c.Open(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = im.Close() }()
	f, err := im.FS(ctx)
	if err != nil {
		return nil, nil, err
	}
	return f, im.Labels(), nil
}
