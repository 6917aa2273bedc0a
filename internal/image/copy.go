package image

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/opmkit/opm/internal/atomicfile"
	"github.com/opmkit/opm/internal/image/layerfs"
)

// CopyOptions says what comes along with a copied image.
type CopyOptions struct {
	// Tag also tags the copy at a registry destination.
	Tag string
	// Annotations are added to the image's entry in a layout destination's
	// index.json.
	Annotations map[string]string
	// Referrers copies what is attached to the image at a registry source:
	// cosign's signatures, attestations and SBOMs (tags sha256-HEX.sig,
	// .att, .sbom), the OCI referrers tag (sha256-HEX) and what the
	// registry's referrers API lists.
	Referrers bool
	// Progress, when set, is told of every chunk of bytes read from the
	// source (from several goroutines when copies run concurrently).
	Progress func(n int64)
}

// CopyResult is what a copy did.
type CopyResult struct {
	Digest    v1.Hash
	MediaType types.MediaType
	// Copied and Present count manifests and blobs written and found
	// already at the destination.
	ManifestsCopied, ManifestsPresent int
	BlobsCopied, BlobsPresent         int
	// Bytes is what was read from the source.
	Bytes int64
	// Referrers are the attached artifacts copied: tags, or digests for
	// those only the referrers API lists.
	Referrers []string
	// Attached maps each of Referrers to the digest of its manifest.
	Attached map[string]string
}

func (res *CopyResult) attach(name string, d v1.Hash) {
	if res.Attached == nil {
		res.Attached = map[string]string{}
	}
	res.Attached[name] = d.String()
	res.Referrers = append(res.Referrers, name)
}

// Copier copies images whole (every platform of a manifest list, every
// layer, by digest) between registries and OCI layouts. Blobs and
// manifests already at the destination are not copied again, so a copy
// that was interrupted resumes where it stopped. Blobs stream through,
// their digests checked as they arrive; nothing is held in memory but
// manifests. One Copier may run copies concurrently.
type Copier struct {
	c       *Client
	mu      sync.Mutex
	layouts map[string]*layoutDest
	// pushers are the destination repositories written lately, at most
	// maxPushers of them, the least recently used dropped first: each
	// holds go-containerregistry's pusher and puller state (a few KB), so
	// keeping every one would grow a mirror's memory with its images.
	// Images of one repository are copied one after the other (plans are
	// sorted by name), so they still share one.
	pushers map[string]*list.Element // of *pusherEntry
	recent  list.List
	sources map[string]*layoutSource
	// homes remembers a repository of each destination registry that
	// holds a blob, so another repository there mounts it instead of
	// receiving it again (images of one vendor share base layers).
	homes blobHomes
	// referrersAPI holds, per source registry host, whether it serves
	// the referrers API: one that answered as registries without it do
	// (404, 400, 406) is not asked again for the rest of the run, which
	// would cost a request for every image and platform.
	referrersAPI sync.Map // registry host -> *apiProbe
}

// apiProbe is what a registry answered to the first referrers request:
// the copies that ask at the same time wait for it.
type apiProbe struct {
	mu           sync.Mutex
	known, serve bool
}

// NewCopier returns a Copier using c's registries configuration,
// credentials and signature policy (applied to every registry pull).
func (c *Client) NewCopier() *Copier {
	return &Copier{c: c, layouts: map[string]*layoutDest{}, pushers: map[string]*list.Element{}, sources: map[string]*layoutSource{}}
}

// Flush writes the index.json of every layout copied to so far.
func (cp *Copier) Flush() error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	var errs []error
	for _, l := range cp.layouts {
		errs = append(errs, l.flush())
	}
	return errors.Join(errs...)
}

// Close writes the index.json of every layout copied to and releases
// their locks.
func (cp *Copier) Close() error {
	err := cp.Flush()
	cp.mu.Lock()
	defer cp.mu.Unlock()
	for _, l := range cp.layouts {
		l.unlock()
	}
	return err
}

// OpenLayout opens (making it if need be) and locks the layout directory
// dir for copies into it, before any is made: a directory another run
// writes, or whose blobs or index.json is a symbolic link, is refused
// here, and partial blobs a killed run left are removed.
func (cp *Copier) OpenLayout(dir string) error {
	_, err := cp.dest(context.Background(), Ref{Transport: TransportOCI, Path: dir})
	return err
}

// Copy copies src to dst. src is a registry reference or an oci: layout
// entry; dst is a registry repository (its tag or digest, if any, is
// ignored: see CopyOptions.Tag) or an oci: layout whose entry is named
// dst's Tag.
func (cp *Copier) Copy(ctx context.Context, src, dst Ref, o CopyOptions) (CopyResult, error) {
	var res CopyResult
	s, raw, mt, err := cp.openSource(ctx, src)
	if err != nil {
		return res, err
	}
	defer func() { _ = s.close() }()
	d, err := cp.dest(ctx, dst)
	if err != nil {
		return res, err
	}
	run := &copyRun{cp: cp, src: s, dst: d, o: o, res: &res, maxBlob: cp.c.opts.MaxLayerSize}
	desc := v1.Descriptor{MediaType: sniffManifestType(raw, mt), Digest: sha256Of(raw), Size: int64(len(raw))}
	res.Digest, res.MediaType = desc.Digest, desc.MediaType
	if err := run.manifest(ctx, desc, raw, 0); err != nil {
		return res, err
	}
	if err := d.tag(ctx, desc, raw, o.Tag, dst.Tag, o.Annotations); err != nil {
		return res, err
	}
	// An image found whole at the destination was just checked by its
	// digest (hasManifest); one written is read back.
	if res.ManifestsCopied > 0 || res.ManifestsPresent == 0 {
		if err := d.verify(ctx, desc); err != nil {
			return res, err
		}
	}
	if o.Referrers {
		if rs, ok := s.(*registrySource); ok {
			if err := run.referrers(ctx, rs, desc, raw, dst.Tag); err != nil {
				return res, fmt.Errorf("copy what is attached to %s: %w", src, err)
			}
		}
	}
	return res, nil
}

func (cp *Copier) openSource(ctx context.Context, r Ref) (source, []byte, string, error) {
	if r.Transport != TransportOCI {
		return cp.c.openSource(ctx, r)
	}
	cp.mu.Lock()
	ls := cp.sources[r.Path]
	if ls == nil {
		ls = &layoutSource{dir: r.Path}
		cp.sources[r.Path] = ls
	}
	cp.mu.Unlock()
	return ls.open(r.Tag)
}

func (cp *Copier) dest(ctx context.Context, r Ref) (destination, error) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	switch r.Transport {
	case TransportOCI:
		if l := cp.layouts[r.Path]; l != nil {
			return l, nil
		}
		l, err := openLayoutDest(r.Path)
		if err != nil {
			return nil, err
		}
		cp.layouts[r.Path] = l
		return l, nil
	case TransportRegistry:
		repo := r.named.Name()
		if e := cp.pushers[repo]; e != nil {
			cp.recent.MoveToFront(e)
			return e.Value.(*pusherEntry).d, nil
		}
		d, err := cp.c.registryDest(ctx, r)
		if err != nil {
			return nil, err
		}
		d.homes = &cp.homes
		cp.pushers[repo] = cp.recent.PushFront(&pusherEntry{repo: repo, d: d})
		if cp.recent.Len() > maxPushers {
			old := cp.recent.Back()
			cp.recent.Remove(old)
			delete(cp.pushers, old.Value.(*pusherEntry).repo)
		}
		return d, nil
	}
	return nil, fmt.Errorf("%s: opm copies to a registry or an oci: layout, not to a %s destination", r, r.Transport)
}

const maxPushers = 64

type pusherEntry struct {
	repo string
	d    *registryDest
}

// copyRun is one Copy's walk over manifests and blobs.
type copyRun struct {
	cp  *Copier
	src source
	dst destination
	o   CopyOptions
	mu  sync.Mutex // guards res while an image's blobs are copied at once
	res *CopyResult
	// maxBlob is the largest blob copied (--max-layer-size).
	maxBlob int64
}

// manifest copies what desc (whose bytes are raw, when already read)
// refers to, then the manifest itself: a destination holding a manifest
// holds everything under it, which is what makes a rerun resume.
func (r *copyRun) manifest(ctx context.Context, desc v1.Descriptor, raw []byte, depth int) error {
	if depth > 3 {
		return errors.New("manifest lists nested too deeply")
	}
	if ok, err := r.dst.hasManifest(ctx, desc); err != nil {
		return err
	} else if ok {
		r.res.ManifestsPresent++
		return nil
	}
	if raw == nil {
		var mt string
		var err error
		raw, mt, err = r.src.manifest(ctx, desc.Digest.String())
		if err != nil {
			return err
		}
		if got := sha256Of(raw); got != desc.Digest {
			return fmt.Errorf("manifest %s arrived with digest %s", desc.Digest, got)
		}
		if desc.MediaType == "" {
			desc.MediaType = sniffManifestType(raw, mt)
		}
	}
	if len(raw) > maxManifestSize {
		return fmt.Errorf("manifest %s is %d bytes, over the %d byte limit", desc.Digest, len(raw), maxManifestSize)
	}
	r.progress(int64(len(raw)))
	switch mt := sniffManifestType(raw, string(desc.MediaType)); {
	case mt.IsIndex():
		idx, err := v1.ParseIndexManifest(bytes.NewReader(raw))
		if err != nil {
			return fmt.Errorf("parse manifest list %s: %w", desc.Digest, err)
		}
		for _, child := range idx.Manifests {
			if !child.MediaType.IsIndex() && !child.MediaType.IsImage() && !isArtifactManifest(child.MediaType) {
				return fmt.Errorf("manifest list %s: entry %s has media type %q, not a manifest", desc.Digest, child.Digest, child.MediaType)
			}
			if err := r.manifest(ctx, child, nil, depth+1); err != nil {
				return err
			}
		}
	case mt.IsImage() || isArtifactManifest(mt):
		m, err := v1.ParseManifest(bytes.NewReader(raw))
		if err != nil {
			return fmt.Errorf("parse manifest %s: %w", desc.Digest, err)
		}
		if err := r.blobs(ctx, append([]v1.Descriptor{m.Config}, m.Layers...)); err != nil {
			return err
		}
	case mt.IsSchema1():
		return fmt.Errorf("manifest %s is docker schema 1, which opm does not copy; re-push the image with a current tool", desc.Digest)
	default:
		return fmt.Errorf("manifest %s has media type %q, not an image or a manifest list", desc.Digest, mt)
	}
	r.res.ManifestsCopied++
	return r.dst.putManifest(ctx, desc, raw)
}

// isArtifactManifest: OCI artifacts (signatures, SBOMs) use the image
// manifest with a config or artifactType of their own, and some tools
// still write the short-lived artifact manifest type.
func isArtifactManifest(mt types.MediaType) bool {
	return mt == "application/vnd.oci.artifact.manifest.v1+json"
}

// blobJobs is how many blobs of one image are copied at once: a large
// image is not one stream at a time, and a few streams keep memory small.
const blobJobs = 3

// blobs copies an image's config and layers, blobJobs at a time; the
// first failure stops the others.
func (r *copyRun) blobs(ctx context.Context, descs []v1.Descriptor) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, blobJobs)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for _, d := range descs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := r.blob(ctx, d); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

func (r *copyRun) count(f func(*CopyResult)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(r.res)
}

func (r *copyRun) blob(ctx context.Context, desc v1.Descriptor) error {
	if desc.Digest.Algorithm != "sha256" {
		return fmt.Errorf("blob %s: opm copies sha256 blobs only", desc.Digest)
	}
	if !desc.MediaType.IsDistributable() {
		return nil // foreign layers are fetched from their URLs, never mirrored
	}
	// Before anything is fetched or written: a registry declaring a 1 TiB
	// layer would otherwise stream it into the destination.
	if limit := r.maxBlob; desc.Size < 0 || desc.Size > limit {
		return fmt.Errorf("blob %s: its manifest declares %s, over the %s limit (--%s)", desc.Digest, layerfs.HumanSize(desc.Size), layerfs.HumanSize(limit), FlagMaxLayerSize)
	}
	if ok, err := r.dst.hasBlob(ctx, desc); err != nil {
		return err
	} else if ok {
		r.count(func(res *CopyResult) { res.BlobsPresent++ })
		return nil
	}
	open := func() (io.ReadCloser, error) {
		rc, err := r.src.blob(ctx, desc)
		if err != nil {
			return nil, err
		}
		rc = progressReader{rc, r.progress}
		return &verifyingReader{rc: rc, cr: &layerfs.CountingReader{R: rc, H: newSHA256(), Limit: desc.Size}, want: desc}, nil
	}
	copied, err := r.dst.putBlob(ctx, desc, open)
	if err != nil {
		return fmt.Errorf("copy blob %s: %w", desc.Digest, err)
	}
	r.count(func(res *CopyResult) {
		if copied {
			res.BlobsCopied++
		} else {
			res.BlobsPresent++
		}
	})
	return nil
}

func (r *copyRun) progress(n int64) {
	r.count(func(res *CopyResult) { res.Bytes += n })
	if r.o.Progress != nil {
		r.o.Progress(n)
	}
}

// referrers copies the artifacts attached to desc at the source: tags of
// the cosign and referrers-fallback schemes for the image and each of its
// platforms, and what the registry's referrers API lists.
func (r *copyRun) referrers(ctx context.Context, s *registrySource, desc v1.Descriptor, raw []byte, layoutName string) error {
	repo := s.ep.ref.Context()
	digests := []v1.Hash{desc.Digest}
	if desc.MediaType.IsIndex() {
		if idx, err := v1.ParseIndexManifest(bytes.NewReader(raw)); err == nil {
			for _, m := range idx.Manifests {
				digests = append(digests, m.Digest)
			}
		}
	}
	// Only the tags naming one of digests are kept: a repository of
	// millions of tags costs its listing, not its memory.
	prefixes := map[string]bool{}
	for _, d := range digests {
		prefixes[d.Algorithm+"-"+d.Hex] = true
	}
	tags, err := listTags(ctx, s.puller, repo, func(t string) bool {
		if i := strings.IndexByte(t, '.'); i >= 0 {
			t = t[:i]
		}
		return prefixes[t]
	})
	if isNotFound(err) {
		// A repository holding only untagged manifests is unknown to
		// distribution's tag listing.
		tags, err = nil, nil
	}
	if err != nil {
		return registryError("list tags of", endpoint{ref: s.ep.ref}, s.cred, err)
	}
	seen := map[v1.Hash]bool{}
	for _, d := range digests {
		prefix := d.Algorithm + "-" + d.Hex
		for _, t := range tags {
			rest, ok := strings.CutPrefix(t, prefix)
			if !ok || rest != "" && !attachedTag.MatchString(rest) {
				continue
			}
			got, err := s.puller.Get(ctx, repo.Tag(t))
			if err != nil {
				return registryError("read manifest of", endpoint{ref: repo.Tag(t)}, s.cred, err)
			}
			ad := v1.Descriptor{MediaType: got.MediaType, Digest: sha256Of(got.Manifest), Size: int64(len(got.Manifest))}
			if err := r.manifest(ctx, ad, got.Manifest, 0); err != nil {
				return fmt.Errorf("tag %s: %w", t, err)
			}
			if err := r.dst.tag(ctx, ad, got.Manifest, t, layoutTagName(layoutName, t), nil); err != nil {
				return err
			}
			seen[ad.Digest] = true
			if ad.MediaType.IsIndex() { // the referrers tag: what it lists came with it
				if im, err := v1.ParseIndexManifest(bytes.NewReader(got.Manifest)); err == nil {
					for _, m := range im.Manifests {
						seen[m.Digest] = true
					}
				}
			}
			r.res.attach(t, ad.Digest)
		}
		idx, err := r.cp.referrersOf(ctx, s, repo.Digest(d.String()))
		if err != nil || idx == nil {
			continue // a registry without the API, or nothing attached
		}
		im, err := idx.IndexManifest()
		if err != nil {
			continue
		}
		for _, m := range im.Manifests {
			if seen[m.Digest] {
				continue
			}
			seen[m.Digest] = true
			if err := r.manifest(ctx, m, nil, 0); err != nil {
				return fmt.Errorf("referrer %s: %w", m.Digest, err)
			}
			if err := r.dst.tag(ctx, m, nil, "", layoutDigestName(layoutName, m.Digest), nil); err != nil {
				return err
			}
			r.res.attach(m.Digest.String(), m.Digest)
		}
	}
	sort.Strings(r.res.Referrers)
	return nil
}

// referrersOf asks the referrers API of s's registry what is attached to
// d; nil, nil when the registry does not serve the API (asked once a run).
// The source's puller has no fallback to the sha256-HEX tag: the copy
// lists the repository's tags, that one included.
func (cp *Copier) referrersOf(ctx context.Context, s *registrySource, d name.Digest) (v1.ImageIndex, error) {
	v, _ := cp.referrersAPI.LoadOrStore(d.RegistryStr(), &apiProbe{})
	p := v.(*apiProbe)
	p.mu.Lock()
	if p.known {
		p.mu.Unlock()
		if !p.serve {
			return nil, nil
		}
	} else {
		defer p.mu.Unlock() // the others wait for the first answer
	}
	idx, err := remote.Referrers(d, append(s.opts, remote.WithContext(ctx), remote.Reuse(s.puller))...)
	switch {
	case err == nil:
		p.known, p.serve = true, true
	case strings.Contains(err.Error(), "does not support the Referrers API"):
		// go-containerregistry's word for a 404, 400 or 406 (or a 200
		// that is not an index) from the API's endpoint.
		p.known = true
		return nil, nil
	}
	return idx, err
}

// attachedTag is what follows sha256-HEX in the tags of cosign's scheme.
var attachedTag = regexp.MustCompile(`^\.(sig|att|sbom)$`)

// layoutTagName names an attached tag's entry in a layout after the
// image's own entry: REPO@sha256:X or REPO:TAG becomes REPO:T.
func layoutTagName(name, tag string) string {
	if name == "" {
		return ""
	}
	return layoutRepo(name) + ":" + tag
}

func layoutDigestName(name string, d v1.Hash) string {
	if name == "" {
		return ""
	}
	return layoutRepo(name) + "@" + d.String()
}

func layoutRepo(name string) string {
	if i := strings.Index(name, "@"); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name = name[:i]
	}
	return name
}

// progressReader tells of every chunk it passes.
type progressReader struct {
	io.ReadCloser
	progress func(int64)
}

func (p progressReader) Read(b []byte) (int, error) {
	n, err := p.ReadCloser.Read(b)
	if n > 0 {
		p.progress(int64(n))
	}
	return n, err
}

// destination is where a Copier writes.
type destination interface {
	hasManifest(ctx context.Context, desc v1.Descriptor) (bool, error)
	putManifest(ctx context.Context, desc v1.Descriptor, raw []byte) error
	hasBlob(ctx context.Context, desc v1.Descriptor) (bool, error)
	// putBlob writes the blob unless it is there; false when it was.
	putBlob(ctx context.Context, desc v1.Descriptor, open func() (io.ReadCloser, error)) (bool, error)
	// tag names a copied manifest: a registry tag, or a layout entry.
	tag(ctx context.Context, desc v1.Descriptor, raw []byte, tag, layoutName string, annotations map[string]string) error
	// verify checks the destination serves desc by its digest.
	verify(ctx context.Context, desc v1.Descriptor) error
}

// registryDest is one repository of a registry.
type registryDest struct {
	ep     endpoint
	cred   Credentials
	pusher *remote.Pusher
	puller *remote.Puller
	repo   name.Repository
	homes  *blobHomes
	// upload, when set, uploads blobs in one PUT (uploadBlob).
	upload  http.RoundTripper
	retries int
	delay   time.Duration
}

func (c *Client) registryDest(ctx context.Context, r Ref) (*registryDest, error) {
	ep, err := c.pushEndpoint(r)
	if err != nil {
		return nil, err
	}
	opts, cred, err := c.remoteOptions(ctx, ep)
	if err != nil {
		return nil, err
	}
	pusher, err := remote.NewPusher(opts...)
	if err != nil {
		return nil, err
	}
	puller, err := remote.NewPuller(opts...)
	if err != nil {
		return nil, err
	}
	return &registryDest{ep: ep, cred: cred, pusher: pusher, puller: puller, repo: ep.ref.Context(),
		upload: c.uploadTransport(ep, cred), retries: c.opts.retries(), delay: c.opts.RetryDelay}, nil
}

func (d *registryDest) err(op string, ref name.Reference, err error) error {
	return registryError(op, endpoint{ref: ref, insecure: d.ep.insecure}, d.cred, err)
}

func (d *registryDest) hasManifest(ctx context.Context, desc v1.Descriptor) (bool, error) {
	ref := d.repo.Digest(desc.Digest.String())
	got, err := d.puller.Head(ctx, ref)
	if err == nil {
		if got.Digest != desc.Digest {
			return false, fmt.Errorf("%s: the registry serves digest %s", ref, got.Digest)
		}
		return true, nil
	}
	if isNotFound(err) {
		return false, nil
	}
	return false, d.err("check manifest at", ref, err)
}

func (d *registryDest) putManifest(ctx context.Context, desc v1.Descriptor, raw []byte) error {
	ref := d.repo.Digest(desc.Digest.String())
	if err := d.pusher.Put(ctx, ref, rawManifest{raw: raw, mt: desc.MediaType}); err != nil {
		return d.err("push manifest to", ref, err)
	}
	return nil
}

func (d *registryDest) hasBlob(context.Context, v1.Descriptor) (bool, error) {
	return false, nil // Upload asks the registry first
}

func (d *registryDest) putBlob(ctx context.Context, desc v1.Descriptor, open func() (io.ReadCloser, error)) (bool, error) {
	l := &streamLayer{desc: desc, open: open}
	var up v1.Layer = l
	key, keyed := homeKeyOf(d.repo.Registry, desc.Digest)
	keyed = keyed && d.homes != nil
	var from *name.Repository
	if keyed {
		if h, ok := d.homes.load(key); ok && h.Name() != d.repo.Name() {
			from = &h
			up = &remote.MountableLayer{Layer: l, Reference: h.Digest(desc.Digest.String())}
		}
	}
	var err error
	if d.upload != nil {
		err = d.uploadBlob(ctx, l, from)
	} else {
		err = d.pusher.Upload(ctx, d.repo, up)
	}
	if err != nil {
		return false, d.err("push blob to", d.repo.Digest(desc.Digest.String()), err)
	}
	if keyed {
		d.homes.store(key, d.repo)
	}
	return l.opened, nil
}

// uploadBlob writes l to a registry that asks no bearer token in at most
// three requests: a HEAD (none when from, another repository of the
// registry, holds the blob: the mount says whether it is there), the POST
// starting the upload (or mounting the blob from from), and one PUT of the
// whole blob. go-containerregistry's upload sends it in a PATCH and
// commits it with a PUT; one request fewer a blob is a sixth of the
// requests of a mirror of many small images. A failure that a retry can
// fix starts the upload again, the blob read again from the source.
func (d *registryDest) uploadBlob(ctx context.Context, l *streamLayer, from *name.Repository) error {
	client := &http.Client{Transport: d.upload, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	base := url.URL{Scheme: d.repo.Scheme(), Host: d.repo.RegistryStr()}
	dgst := l.desc.Digest.String()
	// do sends a request; one with a body is read from open, which a
	// wait for a registry's 429 or 503 (rateLimitWait) opens again.
	do := func(method string, u url.URL, open func() (io.ReadCloser, error), size int64, codes ...int) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
		if err != nil {
			return nil, err
		}
		if open != nil {
			if req.Body, err = open(); err != nil {
				return nil, err
			}
			req.GetBody = open
			req.ContentLength = size
			req.Header.Set("Content-Type", "application/octet-stream")
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		if err := transport.CheckError(resp, codes...); err != nil {
			_ = resp.Body.Close()
			return nil, err
		}
		return resp, nil
	}
	once := func() error {
		if from == nil {
			u := base
			u.Path = "/v2/" + d.repo.RepositoryStr() + "/blobs/" + dgst
			resp, err := do(http.MethodHead, u, nil, 0, http.StatusOK, http.StatusNotFound)
			if err != nil {
				return err
			}
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		u := base
		u.Path = "/v2/" + d.repo.RepositoryStr() + "/blobs/uploads/"
		if from != nil {
			u.RawQuery = url.Values{"mount": {dgst}, "from": {from.RepositoryStr()}}.Encode()
		}
		resp, err := do(http.MethodPost, u, nil, 0, http.StatusCreated, http.StatusAccepted)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusCreated {
			return nil // mounted
		}
		loc, err := resp.Location()
		if err != nil {
			return fmt.Errorf("start of an upload: %w", err)
		}
		q := loc.Query()
		q.Set("digest", dgst)
		loc.RawQuery = q.Encode()
		resp, err = do(http.MethodPut, *loc, l.Compressed, l.desc.Size, http.StatusCreated)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		return nil
	}
	delay := d.delay
	for left := d.retries; ; left-- {
		err := once()
		if err == nil || left <= 0 || !retryable(err) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay *= 2
	}
}

func (d *registryDest) tag(ctx context.Context, desc v1.Descriptor, raw []byte, tag, _ string, _ map[string]string) error {
	if tag == "" {
		return nil
	}
	if raw == nil {
		got, err := d.puller.Get(ctx, d.repo.Digest(desc.Digest.String()))
		if err != nil {
			return d.err("read manifest of", d.repo.Digest(desc.Digest.String()), err)
		}
		raw = got.Manifest
	}
	ref := d.repo.Tag(tag)
	if err := d.pusher.Put(ctx, ref, rawManifest{raw: raw, mt: desc.MediaType}); err != nil {
		return d.err("tag", ref, err)
	}
	return nil
}

func (d *registryDest) verify(ctx context.Context, desc v1.Descriptor) error {
	ref := d.repo.Digest(desc.Digest.String())
	got, err := d.puller.Head(ctx, ref)
	if err != nil {
		return d.err("check manifest at", ref, err)
	}
	if got.Digest != desc.Digest {
		return fmt.Errorf("%s: the registry serves digest %s", ref, got.Digest)
	}
	return nil
}

// rawManifest pushes manifest bytes as they are.
type rawManifest struct {
	raw []byte
	mt  types.MediaType
}

func (m rawManifest) RawManifest() ([]byte, error)        { return m.raw, nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return m.mt, nil }

// streamLayer is a blob that go-containerregistry uploads from the
// source's stream; opened records whether it had to.
type streamLayer struct {
	desc   v1.Descriptor
	open   func() (io.ReadCloser, error)
	opened bool
}

func (l *streamLayer) Digest() (v1.Hash, error)            { return l.desc.Digest, nil }
func (l *streamLayer) DiffID() (v1.Hash, error)            { return l.desc.Digest, nil }
func (l *streamLayer) Size() (int64, error)                { return l.desc.Size, nil }
func (l *streamLayer) MediaType() (types.MediaType, error) { return l.desc.MediaType, nil }
func (l *streamLayer) Uncompressed() (io.ReadCloser, error) {
	return nil, errors.New("a copied blob is never decompressed")
}
func (l *streamLayer) Compressed() (io.ReadCloser, error) {
	l.opened = true
	return l.open()
}

// layoutDest is an OCI layout directory, locked while a Copier writes
// it. Blobs and manifests are files renamed into place once complete;
// index.json is kept in memory and written by flush (a rerun that finds a
// manifest adds its entry again).
type layoutDest struct {
	dir     string
	lock    *os.File
	mu      sync.Mutex
	entries []v1.Descriptor
	dirty   bool
}

func openLayoutDest(dir string) (*layoutDest, error) {
	// Checked before initLayout, whose MkdirAll would follow a link.
	if err := CheckLayoutDir(dir); err != nil {
		return nil, fmt.Errorf("layout %s: %w", dir, err)
	}
	if err := initLayout(dir); err != nil {
		return nil, fmt.Errorf("layout %s: %w", dir, err)
	}
	lock, err := lockLayout(dir)
	if err != nil {
		return nil, err
	}
	l := &layoutDest{dir: dir, lock: lock}
	if err := CheckLayoutDir(dir); err != nil {
		l.unlock()
		return nil, fmt.Errorf("layout %s: %w", dir, err)
	}
	removeTemps(filepath.Join(dir, "blobs", "sha256"))
	raw, err := ReadRegular(filepath.Join(dir, "index.json"), maxIndexSize)
	if err == nil {
		var idx v1.IndexManifest
		if err := json.Unmarshal(raw, &idx); err != nil {
			l.unlock()
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "index.json"), err)
		}
		l.entries = idx.Manifests
	} else if !errors.Is(err, fs.ErrNotExist) {
		l.unlock()
		return nil, err
	}
	return l, nil
}

func (l *layoutDest) unlock() {
	if l.lock != nil {
		_ = l.lock.Close()
		l.lock = nil
	}
}

func (l *layoutDest) blobPath(d v1.Hash) string {
	return filepath.Join(l.dir, "blobs", d.Algorithm, d.Hex)
}

func (l *layoutDest) hasManifest(ctx context.Context, desc v1.Descriptor) (bool, error) {
	return l.hasBlob(ctx, desc)
}

func (l *layoutDest) putManifest(ctx context.Context, desc v1.Descriptor, raw []byte) error {
	return writeBlobBytes(ctx, l.dir, raw)
}

func (l *layoutDest) hasBlob(_ context.Context, desc v1.Descriptor) (bool, error) {
	p := l.blobPath(desc.Digest)
	st, err := os.Lstat(p)
	if err == nil {
		if !st.Mode().IsRegular() {
			return false, notRegular(p, st.Mode())
		}
		return st.Size() == desc.Size, nil
	}
	if os.IsNotExist(err) {
		return false, nil
	}
	return false, err
}

func (l *layoutDest) putBlob(ctx context.Context, desc v1.Descriptor, open func() (io.ReadCloser, error)) (bool, error) {
	return true, writeBlob(ctx, l.dir, desc.Digest, desc.Size, open)
}

func (l *layoutDest) tag(_ context.Context, desc v1.Descriptor, _ []byte, _, layoutName string, annotations map[string]string) error {
	if layoutName == "" {
		return nil
	}
	e := v1.Descriptor{MediaType: desc.MediaType, Digest: desc.Digest, Size: desc.Size,
		Annotations: map[string]string{refNameAnnotation: layoutName}}
	for k, v := range annotations {
		e.Annotations[k] = v
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, old := range l.entries {
		if old.Annotations[refNameAnnotation] == layoutName {
			l.entries[i] = e
			l.dirty = true
			return nil
		}
	}
	l.entries = append(l.entries, e)
	l.dirty = true
	return nil
}

func (l *layoutDest) verify(_ context.Context, desc v1.Descriptor) error {
	raw, err := ReadRegular(l.blobPath(desc.Digest), maxManifestSize)
	if err != nil {
		return err
	}
	if got := sha256Of(raw); got != desc.Digest {
		return fmt.Errorf("layout %s holds %s with digest %s", l.dir, desc.Digest, got)
	}
	return nil
}

func (l *layoutDest) flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.dirty {
		return nil
	}
	// Sorted by name: the same images give the same index.json whatever
	// order concurrent copies finished in.
	sort.SliceStable(l.entries, func(i, j int) bool {
		return l.entries[i].Annotations[refNameAnnotation] < l.entries[j].Annotations[refNameAnnotation]
	})
	idx := v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: l.entries}
	raw, err := json.Marshal(idx)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(l.dir, "index.json"), raw); err != nil {
		return err
	}
	l.dirty = false
	return nil
}

// layoutSource reads an OCI layout by digest, its index.json read once.
type layoutSource struct {
	dir  string
	once sync.Once
	idx  v1.IndexManifest
	err  error
}

// LayoutEntries lists the entries of the OCI layout at dir (refused when
// its index.json, blobs or blobs/sha256 is a link or not a plain file or
// directory).
func LayoutEntries(dir string) ([]v1.Descriptor, error) {
	if err := CheckLayoutDir(dir); err != nil {
		return nil, err
	}
	raw, err := ReadRegular(filepath.Join(dir, "index.json"), maxIndexSize)
	if err != nil {
		return nil, fmt.Errorf("layout %s: %w", dir, err)
	}
	var idx v1.IndexManifest
	if err := json.Unmarshal(raw, &idx); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "index.json"), err)
	}
	return idx.Manifests, nil
}

func (s *layoutSource) open(entry string) (source, []byte, string, error) {
	s.once.Do(func() {
		var m []v1.Descriptor
		m, s.err = LayoutEntries(s.dir)
		s.idx.Manifests = m
	})
	if s.err != nil {
		return nil, nil, "", s.err
	}
	for _, e := range s.idx.Manifests {
		if e.Annotations[refNameAnnotation] != entry && (entry != "" || len(s.idx.Manifests) != 1) {
			continue
		}
		raw, _, err := s.manifest(context.Background(), e.Digest.String())
		if err != nil {
			return nil, nil, "", err
		}
		if got := sha256Of(raw); got != e.Digest {
			return nil, nil, "", fmt.Errorf("layout %s: %s has digest %s", s.dir, e.Digest, got)
		}
		return s, raw, string(e.MediaType), nil
	}
	return nil, nil, "", fmt.Errorf("layout %s has no image named %q: %w", s.dir, entry, ErrNotFound)
}

func (s *layoutSource) manifest(_ context.Context, dgst string) ([]byte, string, error) {
	h, err := v1.NewHash(dgst)
	if err != nil {
		return nil, "", err
	}
	f, err := OpenRegular(filepath.Join(s.dir, "blobs", h.Algorithm, h.Hex))
	if err != nil {
		return nil, "", fmt.Errorf("layout %s: manifest %s: %w", s.dir, dgst, err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxManifestSize+1))
	return raw, "", err
}

func (s *layoutSource) blob(_ context.Context, desc v1.Descriptor) (io.ReadCloser, error) {
	f, err := OpenRegular(filepath.Join(s.dir, "blobs", desc.Digest.Algorithm, desc.Digest.Hex))
	if err != nil {
		return nil, fmt.Errorf("layout %s: blob %s: %w", s.dir, desc.Digest, err)
	}
	return f, nil
}

func (s *layoutSource) repository() name.Reference { return nil }
func (s *layoutSource) close() error               { return nil }

// isNotFound is a registry's 404 (for a HEAD, which has no error body).
func isNotFound(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) && te.StatusCode == http.StatusNotFound
}

// blobHomes maps a blob of a destination registry to a repository there
// that holds it, for the blobs written lately: per registry, two
// generations of at most maxHomes blobs each, the older dropped when the
// newer is full, a blob found in the older moved to the newer. A blob
// forgotten costs an upload where a mount would have done, nothing else;
// a run's memory then stays the same however many images it copies (each
// adds a config and a layer or two), while base layers shared by many
// repositories stay known.
type blobHomes struct {
	mu sync.Mutex
	// regs has one entry per destination registry of a run (one, usually).
	regs map[name.Registry]*homeGens
}

// homeGens are one registry's blobs: the sha256 digest's bytes to the
// repository path (without the registry), 48 bytes of map slot a blob.
type homeGens struct {
	cur, old map[[sha256.Size]byte]string
	// last is the path stored last, a copy shared by the entries of
	// its blobs: an entry keeps neither a name.Repository nor the whole
	// reference string it was parsed from.
	last string
}

// homeKey is a blob of a registry: the registry's name and the sha256
// digest as bytes.
type homeKey struct {
	reg  name.Registry
	hash [sha256.Size]byte
}

// maxHomes bounds a generation: 896 blobs, some 200 images of a catalog,
// 1,792 remembered at most, 0.09 MB (TestBlobHomesHeap; 2.1 MB with 4,096
// a generation and an entry twice the size). 896 is 7/8 of 1,024, the
// most a Go map of 1,024 slots holds before it doubles (1,024 a
// generation held 0.25 MB). On the bench's 1,000 images 22 of 1,046
// mounts became uploads: 0.2% more requests at the target
// (bench/README.md).
const maxHomes = 896

func homeKeyOf(reg name.Registry, d v1.Hash) (homeKey, bool) {
	k := homeKey{reg: reg}
	if d.Algorithm != "sha256" || hex.DecodedLen(len(d.Hex)) != sha256.Size {
		return k, false
	}
	if _, err := hex.Decode(k.hash[:], []byte(d.Hex)); err != nil {
		return k, false
	}
	return k, true
}

func (h *blobHomes) load(k homeKey) (name.Repository, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	g := h.regs[k.reg]
	if g == nil {
		return name.Repository{}, false
	}
	p, ok := g.cur[k.hash]
	if !ok {
		if p, ok = g.old[k.hash]; ok {
			g.put(k.hash, p)
		}
	}
	if !ok {
		return name.Repository{}, false
	}
	return k.reg.Repo(p), true
}

// store keeps the first repository known to hold the blob.
func (h *blobHomes) store(k homeKey, r name.Repository) {
	h.mu.Lock()
	defer h.mu.Unlock()
	g := h.regs[k.reg]
	if g == nil {
		if h.regs == nil {
			h.regs = map[name.Registry]*homeGens{}
		}
		g = &homeGens{}
		h.regs[k.reg] = g
	}
	if _, ok := g.cur[k.hash]; ok {
		return
	}
	if p, ok := g.old[k.hash]; ok {
		g.put(k.hash, p)
		return
	}
	p := r.RepositoryStr()
	if p != g.last {
		g.last = strings.Clone(p)
	}
	g.put(k.hash, g.last)
}

func (g *homeGens) put(hash [sha256.Size]byte, p string) {
	if g.cur == nil || len(g.cur) >= maxHomes {
		g.old, g.cur = g.cur, make(map[[sha256.Size]byte]string, min(maxHomes, 64))
	}
	g.cur[hash] = p
}
