package image

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The operations below act on a registry written to (a mirror's
// destination): its transport is the Dest side's, and registries.conf
// mirrors are not followed, as for pushes.

// ErrDeleteUnsupported is a registry that does not let manifests be
// deleted: 405 Method Not Allowed, or the UNSUPPORTED error code
// (docker-registry without storage.delete.enabled).
var ErrDeleteUnsupported = errors.New("the registry does not allow deleting manifests")

// ErrCatalogUnsupported is a registry that does not list its
// repositories (/v2/_catalog answered 401, 403, 404 or 405).
var ErrCatalogUnsupported = errors.New("the registry does not list its repositories")

// registryOps returns a puller and pusher for the repository or registry
// of ref (a registry reference), with the endpoint for errors.
func (c *Client) registryOps(ctx context.Context, ref string) (*remote.Puller, *remote.Pusher, endpoint, Credentials, error) {
	r, err := ParseReference(ref)
	if err != nil {
		return nil, nil, endpoint{}, Credentials{}, err
	}
	if r.Transport != TransportRegistry {
		return nil, nil, endpoint{}, Credentials{}, fmt.Errorf("%s is not in a registry", ref)
	}
	ep, err := c.pushEndpoint(r)
	if err != nil {
		return nil, nil, endpoint{}, Credentials{}, err
	}
	opts, cred, err := c.remoteOptions(ctx, ep)
	if err != nil {
		return nil, nil, endpoint{}, Credentials{}, err
	}
	puller, err := remote.NewPuller(opts...)
	if err != nil {
		return nil, nil, endpoint{}, Credentials{}, err
	}
	pusher, err := remote.NewPusher(opts...)
	if err != nil {
		return nil, nil, endpoint{}, Credentials{}, err
	}
	return puller, pusher, ep, cred, nil
}

// Repositories lists the repositories of the registry host[:port]
// (/v2/_catalog, page by page). A registry that does not offer the list
// answers with an error wrapping ErrCatalogUnsupported.
func (c *Client) Repositories(ctx context.Context, registry string) ([]string, error) {
	puller, _, ep, cred, err := c.registryOps(ctx, registry+"/x")
	if err != nil {
		return nil, err
	}
	repos, err := puller.Catalog(ctx, ep.ref.Context().Registry)
	if err != nil {
		var te *transport.Error
		if errors.As(err, &te) {
			switch te.StatusCode {
			case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed:
				return nil, fmt.Errorf("list the repositories of %s: %w (%d)", registry, ErrCatalogUnsupported, te.StatusCode)
			}
		}
		return nil, registryError("list the repositories of", ep, cred, err)
	}
	return repos, nil
}

// Tags lists the tags of the repository repo (host/path), page by page,
// as bounded as the tag lists a copy reads. A repository the registry
// does not know has no tags.
func (c *Client) Tags(ctx context.Context, repo string) ([]string, error) {
	puller, _, ep, cred, err := c.registryOps(ctx, repo)
	if err != nil {
		return nil, err
	}
	tags, err := listTags(ctx, puller, ep.ref.Context(), func(string) bool { return true })
	if err != nil {
		if isNotFound(err) {
			return nil, nil
		}
		return nil, registryError("list the tags of", ep, cred, err)
	}
	return tags, nil
}

// Manifest reads the manifest ref (repo:tag or repo@digest) names: its
// bytes, media type and digest. A manifest the registry does not hold is
// an error wrapping ErrNotFound.
func (c *Client) Manifest(ctx context.Context, ref string) (raw []byte, mediaType string, digest string, err error) {
	puller, _, ep, cred, err := c.registryOps(ctx, ref)
	if err != nil {
		return nil, "", "", err
	}
	d, err := puller.Get(ctx, ep.ref)
	if err != nil {
		return nil, "", "", registryError("read manifest", ep, cred, err)
	}
	return d.Manifest, string(d.MediaType), d.Digest.String(), nil
}

// ManifestDigest asks the registry which manifest ref names (HEAD), and
// its media type.
func (c *Client) ManifestDigest(ctx context.Context, ref string) (digest, mediaType string, err error) {
	puller, _, ep, cred, err := c.registryOps(ctx, ref)
	if err != nil {
		return "", "", err
	}
	d, err := puller.Head(ctx, ep.ref)
	if err != nil {
		return "", "", registryError("check manifest", ep, cred, err)
	}
	return d.Digest.String(), string(d.MediaType), nil
}

// DeleteManifest deletes the manifest repo@digest from its repository
// (and with it every tag naming it there). A registry that refuses
// deletion answers with an error wrapping ErrDeleteUnsupported; one that
// no longer holds the manifest with one wrapping ErrNotFound.
func (c *Client) DeleteManifest(ctx context.Context, ref string) error {
	_, pusher, ep, cred, err := c.registryOps(ctx, ref)
	if err != nil {
		return err
	}
	if _, ok := ep.ref.(name.Digest); !ok {
		return fmt.Errorf("delete %s: name the manifest by digest", ref)
	}
	err = pusher.Delete(ctx, ep.ref)
	if err == nil {
		return nil
	}
	var te *transport.Error
	if errors.As(err, &te) {
		unsupported := te.StatusCode == http.StatusMethodNotAllowed
		for _, d := range te.Errors {
			if d.Code == transport.UnsupportedErrorCode {
				unsupported = true
			}
		}
		if unsupported {
			return fmt.Errorf("delete %s: registry %s answered %d: %w", ref, ep.host(), te.StatusCode, ErrDeleteUnsupported)
		}
	}
	return registryError("delete", ep, cred, err)
}

// PushArtifact writes an artifact to ref (repo:tag): its blobs (the
// config and layers its manifest names), then the manifest raw of media
// type mediaType, tagged. It returns the manifest's digest.
func (c *Client) PushArtifact(ctx context.Context, ref string, raw []byte, mediaType string, blobs ...Blob) (string, error) {
	_, pusher, ep, cred, err := c.registryOps(ctx, ref)
	if err != nil {
		return "", err
	}
	repo := ep.ref.Context()
	for _, b := range blobs {
		if err := pusher.Upload(ctx, repo, uploadBlob{b}); err != nil {
			return "", registryError("push blob to", ep, cred, err)
		}
	}
	if err := pusher.Put(ctx, ep.ref, rawManifest{raw: raw, mt: types.MediaType(mediaType)}); err != nil {
		return "", registryError("push manifest to", ep, cred, err)
	}
	return sha256Of(raw).String(), nil
}

// Blob is a blob PushArtifact uploads: its digest and size, known
// beforehand, and its bytes, read from Open (called again for a retry), so
// that a large blob made on the fly need not be held in memory.
type Blob struct {
	Digest v1.Hash
	Size   int64
	Open   func() (io.ReadCloser, error)
}

// BytesBlob is b as a Blob.
func BytesBlob(b []byte) Blob {
	return Blob{Digest: sha256Of(b), Size: int64(len(b)), Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}}
}

// uploadBlob is a Blob as the layer go-containerregistry uploads.
type uploadBlob struct{ Blob }

func (b uploadBlob) Digest() (v1.Hash, error)             { return b.Blob.Digest, nil }
func (b uploadBlob) DiffID() (v1.Hash, error)             { return b.Blob.Digest, nil }
func (b uploadBlob) Size() (int64, error)                 { return b.Blob.Size, nil }
func (b uploadBlob) MediaType() (types.MediaType, error)  { return types.OCILayer, nil }
func (b uploadBlob) Compressed() (io.ReadCloser, error)   { return b.Open() }
func (b uploadBlob) Uncompressed() (io.ReadCloser, error) { return b.Open() }

// Blob reads the blob ref (repo@digest) whole, checked against its
// digest; one larger than limit bytes is refused.
func (c *Client) Blob(ctx context.Context, ref string, limit int64) ([]byte, error) {
	puller, _, ep, cred, err := c.registryOps(ctx, ref)
	if err != nil {
		return nil, err
	}
	d, ok := ep.ref.(name.Digest)
	if !ok {
		return nil, fmt.Errorf("read blob %s: name it by digest", ref)
	}
	l, err := puller.Layer(ctx, d)
	if err != nil {
		return nil, registryError(opFetchBlob, ep, cred, err)
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, registryError(opFetchBlob, ep, cred, err)
	}
	defer func() { _ = rc.Close() }()
	raw, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, registryError(opFetchBlob, ep, cred, err)
	}
	if int64(len(raw)) > limit {
		return nil, fmt.Errorf("read blob %s: larger than %d bytes", ref, limit)
	}
	if got := sha256Of(raw).String(); got != d.DigestStr() {
		return nil, fmt.Errorf("read blob %s: its bytes have digest %s", ref, got)
	}
	return raw, nil
}
