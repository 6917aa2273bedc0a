package image

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/registrytest"
)

// copyFixture is a multi-platform image at a source registry with a
// cosign-style signature tag and an OCI referrer (subject) attached.
type copyFixture struct {
	src, dst *registrytest.Registry
	index    v1.ImageIndex
	digest   v1.Hash
	sigTag   string
	referrer v1.Hash
}

func newCopyFixture(t *testing.T) *copyFixture {
	t.Helper()
	f := &copyFixture{src: registrytest.Start(t), dst: registrytest.Start(t)}
	idx, err := random.Index(2048, 2, 3)
	require.NoError(t, err)
	f.index = idx
	f.digest, err = idx.Digest()
	require.NoError(t, err)
	ref, err := name.ParseReference(f.src.Ref("team/app:v1"), name.Insecure)
	require.NoError(t, err)
	require.NoError(t, remote.WriteIndex(ref, idx))

	sig, err := random.Image(300, 1)
	require.NoError(t, err)
	f.sigTag = "sha256-" + f.digest.Hex + ".sig"
	require.NoError(t, remote.Write(ref.Context().Tag(f.sigTag), sig))

	// An attestation attached by subject: the source registry has no
	// referrers API, so go-containerregistry keeps the sha256-HEX tag.
	att, err := random.Image(200, 1)
	require.NoError(t, err)
	rawIdx, err := idx.RawManifest()
	require.NoError(t, err)
	subj := v1.Descriptor{MediaType: types.OCIImageIndex, Digest: f.digest, Size: int64(len(rawIdx))}
	withSubject, ok := mutate.Subject(mutate.MediaType(att, types.OCIManifestSchema1), subj).(v1.Image)
	require.True(t, ok)
	f.referrer, err = withSubject.Digest()
	require.NoError(t, err)
	require.NoError(t, remote.Write(ref.Context().Digest(f.referrer.String()), withSubject))
	return f
}

func remoteDigest(t *testing.T, ref string) (v1.Hash, error) {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	require.NoError(t, err)
	d, err := remote.Head(r)
	if err != nil {
		return v1.Hash{}, err
	}
	return d.Digest, nil
}

// TestCopyWholeImageWithWhatIsAttached (issue 29): a manifest list is
// copied with every platform, by digest and under its tag, with its
// signature tag and its referrer; skopeo reads the copy; a second copy
// copies nothing.
func TestCopyWholeImageWithWhatIsAttached(t *testing.T) {
	t.Parallel()
	f := newCopyFixture(t)
	c := mustClient(t, Options{UseHTTP: true})
	cp := c.NewCopier()
	ctx := context.Background()
	var progressed atomic.Int64
	res, err := cp.Copy(ctx, mustRef(t, f.src.Ref("team/app:v1")), mustRef(t, f.dst.Ref("mirror/team/app")),
		CopyOptions{Tag: "v1", Referrers: true, Progress: func(n int64) { progressed.Add(n) }})
	require.NoError(t, err)
	require.NoError(t, cp.Close())
	assert.Equal(t, f.digest, res.Digest)
	assert.Equal(t, 1+3+1+2, res.ManifestsCopied, "the list, its 3 images, the signature, the referrers index and its referrer")
	assert.Equal(t, 3*3+2+2, res.BlobsCopied, "3 platforms x (config + 2 layers), then config and layer of each attached image")
	assert.Equal(t, res.Bytes, progressed.Load())
	assert.ElementsMatch(t, []string{f.sigTag, "sha256-" + f.digest.Hex}, res.Referrers)

	for _, tag := range []string{"v1", f.sigTag} {
		want, err := remoteDigest(t, f.src.Ref("team/app:"+tag))
		require.NoError(t, err)
		got, err := remoteDigest(t, f.dst.Ref("mirror/team/app:"+tag))
		require.NoError(t, err, tag)
		assert.Equal(t, want, got, tag)
	}
	im, err := f.index.IndexManifest()
	require.NoError(t, err)
	for _, m := range im.Manifests {
		_, err := remoteDigest(t, f.dst.Ref("mirror/team/app@"+m.Digest.String()))
		assert.NoError(t, err, "platform %v", m.Platform)
	}
	_, err = remoteDigest(t, f.dst.Ref("mirror/team/app@"+f.referrer.String()))
	assert.NoError(t, err, "the referrer arrived")
	dstRepo, err := name.NewRepository(f.dst.Ref("mirror/team/app"), name.Insecure)
	require.NoError(t, err)
	refs, err := remote.Referrers(dstRepo.Digest(f.digest.String()))
	require.NoError(t, err)
	rm, err := refs.IndexManifest()
	require.NoError(t, err)
	require.Len(t, rm.Manifests, 1)
	assert.Equal(t, f.referrer, rm.Manifests[0].Digest, "the copy's referrers list it")

	out := run(t, "skopeo", "inspect", "--raw", "--tls-verify=false", "docker://"+f.dst.Ref("mirror/team/app:v1"))
	assert.Contains(t, out, string(types.OCIImageIndex))
	assert.Equal(t, f.digest.String(), strings.TrimSpace(run(t, "skopeo", "manifest-digest", writeTemp(t, out))))

	again, err := c.NewCopier().Copy(ctx, mustRef(t, f.src.Ref("team/app:v1")), mustRef(t, f.dst.Ref("mirror/team/app")), CopyOptions{Tag: "v1", Referrers: true})
	require.NoError(t, err)
	assert.Zero(t, again.ManifestsCopied+again.BlobsCopied, "a second copy copies nothing: %+v", again)
}

func writeTemp(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "manifest.json")
	require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	return p
}

// TestCopyThroughLayout (issue 29): registry -> OCI layout -> registry
// keeps the digest; skopeo reads the layout by the entry's name.
func TestCopyThroughLayout(t *testing.T) {
	t.Parallel()
	f := newCopyFixture(t)
	c := mustClient(t, Options{UseHTTP: true})
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "mirror")
	entry := "quay.io/team/app:v1"
	// What a killed copy leaves: partial blobs, old and fresh, all removed
	// (the directory's lock says no live copy writes them).
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "blobs", "sha256"), 0o755))
	stale, fresh := filepath.Join(dir, "blobs", "sha256", ".tmp-aaaa-1"), filepath.Join(dir, "blobs", "sha256", ".tmp-bbbb-2")
	require.NoError(t, os.WriteFile(stale, []byte("partial"), 0o644))
	require.NoError(t, os.WriteFile(fresh, []byte("partial"), 0o644))
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(stale, old, old))
	cp := c.NewCopier()
	res, err := cp.Copy(ctx, mustRef(t, f.src.Ref("team/app:v1")), Ref{Transport: TransportOCI, Path: dir, Tag: entry},
		CopyOptions{Referrers: true, Annotations: map[string]string{"example.role": "x"}})
	require.NoError(t, err)
	assert.NoFileExists(t, stale)
	assert.NoFileExists(t, fresh)
	// A second run cannot write the directory while the first holds it.
	other := c.NewCopier()
	assert.ErrorIs(t, other.OpenLayout(dir), ErrLayoutBusy)
	require.NoError(t, cp.Close())
	require.NoError(t, other.OpenLayout(dir), "free once the first is done")
	require.NoError(t, other.Close())
	assert.ElementsMatch(t, []string{f.sigTag, "sha256-" + f.digest.Hex}, res.Referrers)
	entries, err := LayoutEntries(dir)
	require.NoError(t, err)
	names := map[string]v1.Descriptor{}
	for _, e := range entries {
		names[e.Annotations[refNameAnnotation]] = e
	}
	require.Contains(t, names, entry)
	assert.Equal(t, f.digest, names[entry].Digest)
	assert.Equal(t, "x", names[entry].Annotations["example.role"])
	assert.Contains(t, names, "quay.io/team/app:"+f.sigTag, "the signature has an entry named after the image's")

	out := run(t, "skopeo", "inspect", "--raw", "oci:"+dir+":"+entry)
	assert.Contains(t, out, string(types.OCIImageIndex))

	cp2 := c.NewCopier()
	res, err = cp2.Copy(ctx, Ref{Transport: TransportOCI, Path: dir, Tag: entry}, mustRef(t, f.dst.Ref("far/team/app")), CopyOptions{Tag: "v1"})
	require.NoError(t, err)
	require.NoError(t, cp2.Close())
	assert.Equal(t, f.digest, res.Digest)
	got, err := remoteDigest(t, f.dst.Ref("far/team/app:v1"))
	require.NoError(t, err)
	assert.Equal(t, f.digest, got)
}

// TestCopyResumes (issue 29): a copy cancelled midway leaves what it
// finished at the destination, and the next copy sends only the rest.
func TestCopyResumes(t *testing.T) {
	t.Parallel()
	f := newCopyFixture(t)
	c := mustClient(t, Options{UseHTTP: true})
	ctx, cancel := context.WithCancel(context.Background())
	// The destination through a proxy that cancels the copy once three
	// blobs are committed there (an upload's closing PUT answered).
	target, err := url.Parse(f.dst.URL())
	require.NoError(t, err)
	next := httputil.NewSingleHostReverseProxy(target)
	var committed atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r)
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/blobs/uploads/") && committed.Add(1) == 3 {
			cancel()
		}
	}))
	t.Cleanup(proxy.Close)
	dst := strings.TrimPrefix(proxy.URL, "http://") + "/m/app"
	_, err = c.NewCopier().Copy(ctx, mustRef(t, f.src.Ref("team/app:v1")), mustRef(t, dst), CopyOptions{})
	require.Error(t, err, "cancelled midway")
	_, err = remoteDigest(t, f.dst.Ref("m/app@"+f.digest.String()))
	require.Error(t, err, "the list is not there before everything under it is")

	res, err := c.NewCopier().Copy(context.Background(), mustRef(t, f.src.Ref("team/app:v1")), mustRef(t, f.dst.Ref("m/app")), CopyOptions{})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, res.BlobsPresent, 3, "what arrived before is not sent again: %+v", res)
	assert.Equal(t, 9, res.BlobsPresent+res.BlobsCopied)
	got, err := remoteDigest(t, f.dst.Ref("m/app@"+f.digest.String()))
	require.NoError(t, err)
	assert.Equal(t, f.digest, got)
}

// TestCopyRefusesChangedBytes (issue 29): a blob whose bytes differ from
// its digest stops the copy; the destination gets no manifest.
func TestCopyRefusesChangedBytes(t *testing.T) {
	t.Parallel()
	f := newCopyFixture(t)
	c := mustClient(t, Options{UseHTTP: true})
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "mirror")
	cp := c.NewCopier()
	_, err := cp.Copy(ctx, mustRef(t, f.src.Ref("team/app:v1")), Ref{Transport: TransportOCI, Path: dir, Tag: "app:v1"}, CopyOptions{})
	require.NoError(t, err)
	require.NoError(t, cp.Close())

	img, err := f.index.Image(mustChild(t, f.index))
	require.NoError(t, err)
	layers, err := img.Layers()
	require.NoError(t, err)
	ld, err := layers[0].Digest()
	require.NoError(t, err)
	p := filepath.Join(dir, "blobs", "sha256", ld.Hex)
	raw, err := os.ReadFile(p)
	require.NoError(t, err)
	raw[len(raw)/2] ^= 0xff
	require.NoError(t, os.WriteFile(p, raw, 0o644))

	_, err = c.NewCopier().Copy(ctx, Ref{Transport: TransportOCI, Path: dir, Tag: "app:v1"}, mustRef(t, f.dst.Ref("bad/app")), CopyOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), ld.String())
	_, err = remoteDigest(t, f.dst.Ref("bad/app@"+f.digest.String()))
	assert.Error(t, err, "no manifest over a wrong blob")

	_, err = c.NewCopier().Copy(ctx, Ref{Transport: TransportOCI, Path: dir, Tag: "nope"}, mustRef(t, f.dst.Ref("bad/app")), CopyOptions{})
	assert.True(t, errors.Is(err, ErrNotFound), "%v", err)
}

func mustChild(t *testing.T, idx v1.ImageIndex) v1.Hash {
	t.Helper()
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	return im.Manifests[0].Digest
}

// TestCopyMountsWithinDestination: a blob one copy put in a repository of
// the destination is mounted into another, not sent again.
func TestCopyMountsWithinDestination(t *testing.T) {
	t.Parallel()
	f := newCopyFixture(t)
	c := mustClient(t, Options{UseHTTP: true})
	cp := c.NewCopier()
	ctx := context.Background()
	first, err := cp.Copy(ctx, mustRef(t, f.src.Ref("team/app:v1")), mustRef(t, f.dst.Ref("one/app")), CopyOptions{})
	require.NoError(t, err)
	assert.Equal(t, 9, first.BlobsCopied)
	second, err := cp.Copy(ctx, mustRef(t, f.src.Ref("team/app:v1")), mustRef(t, f.dst.Ref("two/app")), CopyOptions{Tag: "v1"})
	require.NoError(t, err)
	assert.Zero(t, second.BlobsCopied, "mounted from one/app: %+v", second)
	assert.Equal(t, 9, second.BlobsPresent)
	got, err := remoteDigest(t, f.dst.Ref("two/app:v1"))
	require.NoError(t, err)
	assert.Equal(t, f.digest, got)
	out := run(t, "skopeo", "copy", "--all", "--src-tls-verify=false", "docker://"+f.dst.Ref("two/app:v1"), "oci:"+filepath.Join(t.TempDir(), "check")+":v1")
	assert.NotEmpty(t, out, "skopeo reads every blob of the mounted copy")
}
