package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	dockerarchive "github.com/containers/image/v5/docker/archive"
	"github.com/containers/image/v5/docker/reference"
	ociarchive "github.com/containers/image/v5/oci/archive"
	ocilayout "github.com/containers/image/v5/oci/layout"
	"github.com/containers/image/v5/pkg/blobinfocache/none"
	"github.com/containers/image/v5/types"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/opencontainers/go-digest"
)

// source is where an opened image's bytes come from: a registry (through
// go-containerregistry) or a local transport (through containers/image).
type source interface {
	// manifest returns the manifest or index with the given digest ("" for the
	// one the reference names) and its media type ("" if the transport does not say).
	manifest(ctx context.Context, dgst string) ([]byte, string, error)
	// blob streams a blob; the caller verifies digest and size.
	blob(ctx context.Context, desc v1.Descriptor) (io.ReadCloser, error)
	// repository names the registry repository for cross-repository mounts (nil if local).
	repository() name.Reference
	close() error
}

type registrySource struct {
	c      *Client
	ep     endpoint
	cred   Credentials
	puller *remote.Puller
	opts   []remote.Option
}

func (c *Client) openRegistry(ctx context.Context, r Ref) (source, []byte, string, error) {
	eps, err := c.pullEndpoints(r)
	if err != nil {
		return nil, nil, "", err
	}
	var errs []error
	for _, ep := range eps {
		opts, cred, err := c.remoteOptions(ctx, ep)
		if err != nil {
			return nil, nil, "", err
		}
		// Without go-containerregistry's fallback from the referrers API
		// to the sha256-HEX tag: the copy of what is attached lists the
		// repository's tags, that one included, and the fallback would
		// cost a request for every image and platform of a registry
		// without the API.
		p, err := remote.NewPuller(append(opts, remote.WithReferrersTagFallback(false))...)
		if err != nil {
			return nil, nil, "", err
		}
		s := &registrySource{c: c, ep: ep, cred: cred, puller: p, opts: opts}
		m, mt, err := s.manifest(ctx, "")
		if err == nil {
			if err := c.verifySignature(ctx, r, m); err != nil {
				return nil, nil, "", err
			}
			return s, m, mt, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, nil, "", errors.Join(errs...)
}

func (s *registrySource) manifest(ctx context.Context, dgst string) ([]byte, string, error) {
	ref := s.ep.ref
	if dgst != "" {
		ref = ref.Context().Digest(dgst)
	}
	delay := s.c.opts.RetryDelay
	for retries := s.c.opts.retries(); ; retries-- {
		d, err := s.puller.Get(ctx, ref)
		if err == nil {
			return d.Manifest, string(d.MediaType), nil
		}
		// A body that stalled, crawled or broke off is asked for again,
		// as a blob's download resumes; go-containerregistry retries
		// only what fails before the body.
		if retries <= 0 || !bodyBroke(err) || ctx.Err() != nil {
			return nil, "", registryError("read manifest of", endpoint{ref: ref, insecure: s.ep.insecure}, s.cred, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
		delay *= 2
	}
}

// bodyBroke is true for a response body that stalled, came too slowly or
// ended early.
func bodyBroke(err error) bool {
	var (
		st *errStalled
		sl *errTooSlow
	)
	return errors.As(err, &st) || errors.As(err, &sl) || errors.Is(err, io.ErrUnexpectedEOF)
}

func (s *registrySource) blob(ctx context.Context, desc v1.Descriptor) (io.ReadCloser, error) {
	open := func() (io.ReadCloser, error) { return s.openBlob(ctx, desc) }
	rc, err := open()
	if err != nil {
		return nil, err
	}
	return &resumingBody{ctx: ctx, open: open, rc: rc, retries: s.c.opts.retries(), delay: s.c.opts.RetryDelay}, nil
}

func (s *registrySource) openBlob(ctx context.Context, desc v1.Descriptor) (io.ReadCloser, error) {
	ref := s.ep.ref.Context().Digest(desc.Digest.String())
	l, err := s.puller.Layer(ctx, ref)
	if err != nil {
		return nil, registryError(opFetchBlob, endpoint{ref: ref}, s.cred, err)
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, registryError(opFetchBlob, endpoint{ref: ref}, s.cred, err)
	}
	return rc, nil
}

func (s *registrySource) repository() name.Reference { return s.ep.ref }
func (s *registrySource) close() error               { return nil }

// localSource reads oci:, oci-archive: and docker-archive: through containers/image.
type localSource struct {
	src types.ImageSource
}

func (c *Client) openLocal(ctx context.Context, r Ref) (source, []byte, string, error) {
	var (
		ref types.ImageReference
		err error
	)
	switch r.Transport {
	case TransportOCI:
		ref, err = ocilayout.NewReference(r.Path, r.Tag)
	case TransportOCIArchive:
		ref, err = ociarchive.NewReference(r.Path, r.Tag)
	case TransportDockerArchive:
		var named reference.NamedTagged
		if r.Name != "" {
			n, perr := reference.ParseNormalizedNamed(r.Name)
			if perr != nil {
				return nil, nil, "", perr
			}
			named, _ = n.(reference.NamedTagged)
		}
		ref, err = dockerarchive.NewReference(r.Path, named)
	case TransportContainersStorage:
		return nil, nil, "", ErrContainersStorage
	default:
		return nil, nil, "", fmt.Errorf("unsupported transport %q", r.Transport)
	}
	if err != nil {
		return nil, nil, "", err
	}
	src, err := ref.NewImageSource(ctx, c.sys)
	if err != nil {
		return nil, nil, "", localError(err)
	}
	s := &localSource{src: src}
	m, mt, err := s.manifest(ctx, "")
	if err != nil {
		_ = src.Close()
		return nil, nil, "", err
	}
	return s, m, mt, nil
}

// localError shortens containers/image's errors for the usual mistakes.
func localError(err error) error {
	msg := err.Error()
	if strings.Contains(msg, "no such file or directory") {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return err
}

func (s *localSource) manifest(ctx context.Context, dgst string) ([]byte, string, error) {
	var d *digest.Digest
	if dgst != "" {
		dd := digest.Digest(dgst)
		d = &dd
	}
	m, mt, err := s.src.GetManifest(ctx, d)
	if err != nil {
		return nil, "", fmt.Errorf("read manifest: %w", err)
	}
	return m, mt, nil
}

func (s *localSource) blob(ctx context.Context, desc v1.Descriptor) (io.ReadCloser, error) {
	rc, _, err := s.src.GetBlob(ctx, types.BlobInfo{Digest: digest.Digest(desc.Digest.String()), Size: desc.Size}, none.NoCache)
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", desc.Digest, err)
	}
	return rc, nil
}

func (s *localSource) repository() name.Reference { return nil }
func (s *localSource) close() error               { return s.src.Close() }
