package index_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/indeximage"
	"github.com/opmkit/opm/internal/registrytest"

	"github.com/opmkit/opm/internal/shareddata"
)

// These tests run opm index add|rm|export|inspect on index images in Debian's
// docker-registry (CNCF distribution), through a reverse proxy that counts
// the bytes the registry served and received.

// corpusDir is absolute, so that tests may change directory.
var corpusDir = shareddata.Path("corpus", "real")

// needCorpus skips when the shared corpus is absent (fails under CI=true).
func needCorpus(t testing.TB) {
	t.Helper()
	shareddata.Require(t, "corpus", "real")
}

// exchange is one request the proxy passed on.
type exchange struct {
	Method, Path string
	Status       int
	In, Out      int64 // request body bytes received by the registry, response body bytes served
}

// countingProxy sits in front of the registry.
type countingProxy struct {
	next http.Handler
	mu   sync.Mutex
	log  []exchange
	// fail, when set, answers a request with 500 instead of passing it on.
	fail func(r *http.Request) bool
}

type countingWriter struct {
	http.ResponseWriter
	n      int64
	status int
}

func (w *countingWriter) WriteHeader(code int) { w.status = code; w.ResponseWriter.WriteHeader(code) }

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.n += int64(n)
	return n, err
}

type countingBody struct {
	io.ReadCloser
	n int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

func (p *countingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	fail := p.fail
	p.mu.Unlock()
	if fail != nil && fail(r) {
		http.Error(w, "injected failure", http.StatusInternalServerError)
		p.record(exchange{Method: r.Method, Path: r.URL.Path, Status: 500})
		return
	}
	body := &countingBody{ReadCloser: r.Body}
	if r.Body != nil {
		r.Body = body
	}
	cw := &countingWriter{ResponseWriter: w, status: 200}
	p.next.ServeHTTP(cw, r)
	p.record(exchange{Method: r.Method, Path: r.URL.Path, Status: cw.status, In: body.n, Out: cw.n})
}

func (p *countingProxy) record(e exchange) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.log = append(p.log, e)
}

// take returns and clears the log.
func (p *countingProxy) take() []exchange {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.log
	p.log = nil
	return l
}

func (p *countingProxy) setFail(f func(r *http.Request) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fail = f
}

// traffic sums the bytes of blob downloads and of uploads (blobs and manifests).
type traffic struct {
	BlobsServed    int64
	BlobsGot       []string // digests of blobs downloaded
	Received       int64    // request bodies: blob uploads and manifests
	ManifestPushes int
}

func summarize(log []exchange) traffic {
	var t traffic
	for _, e := range log {
		switch {
		case e.Method == http.MethodGet && strings.Contains(e.Path, "/blobs/sha256:"):
			t.BlobsServed += e.Out
			t.BlobsGot = append(t.BlobsGot, e.Path[strings.LastIndex(e.Path, "/")+1:])
		case e.Method == http.MethodPut && strings.Contains(e.Path, "/manifests/"):
			t.ManifestPushes++
			t.Received += e.In
		default:
			t.Received += e.In
		}
	}
	return t
}

type testRegistry struct {
	*registrytest.Registry
	Addr  string // the proxy's host:port
	proxy *countingProxy
}

func startRegistry(t *testing.T) *testRegistry {
	t.Helper()
	r := registrytest.Start(t)
	target, err := url.Parse(r.URL())
	require.NoError(t, err)
	p := &countingProxy{next: httputil.NewSingleHostReverseProxy(target)}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return &testRegistry{Registry: r, Addr: strings.TrimPrefix(srv.URL, "http://"), proxy: p}
}

func (r *testRegistry) ref(s string) string { return r.Addr + "/" + s }

func (r *testRegistry) hasTag(t *testing.T, repo, tag string) bool {
	t.Helper()
	req, _ := http.NewRequest(http.MethodHead, r.URL()+"/v2/"+repo+"/manifests/"+tag, nil)
	req.Header.Set("Accept", "application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json, application/vnd.docker.distribution.manifest.list.v2+json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func testClient(t testing.TB) *image.Client {
	t.Helper()
	c, err := image.NewClient(image.Options{UseHTTP: true})
	require.NoError(t, err)
	return c
}

// fakeBinaryImage builds a stand-in for the opm binary image: two layers
// of incompressible bytes (so that downloading them would show), the
// platform given, no database.
func fakeBinaryImage(t testing.TB, p image.Platform) v1.Image {
	t.Helper()
	var layers []v1.Layer
	for _, name := range []string{"bin/opm", "etc/nsswitch.conf"} {
		data := make([]byte, 256<<10)
		_, _ = rand.Read(data)
		lb := image.NewLayerBuilder()
		require.NoError(t, lb.AddFile(name, data))
		l, err := lb.Layer()
		require.NoError(t, err)
		layers = append(layers, l)
	}
	img, err := image.NewImage(image.ImageConfig{Platform: p, User: "1001", Labels: map[string]string{"org.example.base": "fake-opm",
		// As opm's serving image: fbc images built on it carry the serve cache.
		"org.opencontainers.image.source": indeximage.ServingImageSource}}, layers...)
	require.NoError(t, err)
	return img
}

func pushImage(t testing.TB, c *image.Client, img v1.Image, ref string) v1.Hash {
	t.Helper()
	r, err := image.ParseReference(ref)
	require.NoError(t, err)
	d, err := c.Write(context.Background(), img, r)
	require.NoError(t, err)
	return d
}

// pushBundles builds and pushes the bundle images of corpus package pkg's
// version directories, returning their references.
func pushBundles(t testing.TB, c *image.Client, reg string, pkg string, versions ...string) []string {
	t.Helper()
	var refs []string
	for _, v := range versions {
		dir := filepath.Join(corpusDir, pkg, v)
		b, err := bundle.LoadDir(dir)
		require.NoError(t, err)
		require.NotNil(t, b.Annotations, dir)
		img, err := image.BuildBundleImage(os.DirFS(dir), b.Annotations.Values)
		require.NoError(t, err)
		ref := reg + "/" + pkg + "-bundle:" + v
		pushImage(t, c, img, ref)
		refs = append(refs, ref)
	}
	return refs
}

func layerDigests(t testing.TB, c *image.Client, ref string) []string {
	t.Helper()
	r, err := image.ParseReference(ref)
	require.NoError(t, err)
	im, err := c.Open(context.Background(), r)
	require.NoError(t, err)
	defer func() { _ = im.Close() }()
	var out []string
	for _, l := range im.Layers() {
		out = append(out, l.Digest.String())
	}
	return out
}

func imageDigests(t testing.TB, img v1.Image) []string {
	t.Helper()
	ls, err := img.Layers()
	require.NoError(t, err)
	var out []string
	for _, l := range ls {
		d, err := l.Digest()
		require.NoError(t, err)
		out = append(out, d.String())
	}
	return out
}

func blobSizes(t testing.TB, c *image.Client, refs ...string) int64 {
	t.Helper()
	var n int64
	for _, ref := range refs {
		r, err := image.ParseReference(ref)
		require.NoError(t, err)
		im, err := c.Open(context.Background(), r)
		require.NoError(t, err)
		n += int64(len(im.RawConfig))
		for _, l := range im.Layers() {
			n += l.Size
		}
		_ = im.Close()
	}
	return n
}

func configSize(t testing.TB, c *image.Client, ref string) int64 {
	t.Helper()
	r, err := image.ParseReference(ref)
	require.NoError(t, err)
	im, err := c.Open(context.Background(), r)
	require.NoError(t, err)
	defer func() { _ = im.Close() }()
	return int64(len(im.RawConfig))
}

type imageOut struct {
	Image indeximage.Result `json:"image"`
}

func decodeImageOut(t *testing.T, out string) indeximage.Result {
	t.Helper()
	var o imageOut
	require.NoError(t, json.Unmarshal([]byte(out), &o), out)
	// One document holds the image summary and the add or remove result.
	var keys map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &keys))
	require.Contains(t, keys, "packages", out)
	return o.Image
}

// inspectJSON is `opm index inspect -o json` of a database file or image,
// with bundle paths of local directories normalized.
func inspectJSON(t *testing.T, args ...string) string {
	t.Helper()
	r := cmdtest.Run(t, append([]string{"index", "inspect", "-o", "json"}, args...)...)
	require.Equal(t, 0, r.Code, r.ErrOut)
	return r.Out
}

// noTempLeft fails when the directory holds entries other than those named.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func TestIndexImageChain(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	needCorpus(t)
	reg := startRegistry(t)
	c := testClient(t)
	work := t.TempDir()
	o.Dir = work
	tmp := t.TempDir()
	o.ProcEnv["TMPDIR"] = tmp

	base := fakeBinaryImage(t, image.Platform{OS: "linux", Architecture: "amd64"})
	pushImage(t, c, base, reg.ref("opm:fake"))
	baseLayers := imageDigests(t, base)

	batches := [][]string{
		pushBundles(t, c, reg.Addr, "etcd", "0.6.1", "0.9.0"),
		pushBundles(t, c, reg.Addr, "etcd", "0.9.2", "0.9.2-clusterwide"),
		pushBundles(t, c, reg.Addr, "etcd", "0.9.4", "0.9.4-clusterwide"),
		pushBundles(t, c, reg.Addr, "pelorus-operator", "0.0.1", "0.0.2", "0.0.3"),
	}
	dbFile := filepath.Join(t.TempDir(), "index.db")
	var prev indeximage.Result
	for i, refs := range batches {
		tag := reg.ref("idx:" + string(rune('0'+i)))
		args := []string{"index", "add", "--use-http", "-o", "json", "-b", strings.Join(refs, ","), "-t", tag}
		if i == 0 {
			args = append(args, "-i", reg.ref("opm:fake"))
		} else {
			args = append(args, "-f", reg.ref("idx:"+string(rune('0'+i-1))))
		}
		reg.proxy.take()
		r := o.Run(args...)
		require.Equal(t, 0, r.Code, r.ErrOut)
		traf := summarize(reg.proxy.take())
		res := decodeImageOut(t, r.Out)

		// The base layers are kept as they are, with exactly one database layer on top.
		got := layerDigests(t, c, tag)
		require.Len(t, got, len(baseLayers)+1, "one database layer on the base layers")
		assert.Equal(t, baseLayers, got[:len(baseLayers)], "base layers keep their digests")
		assert.Equal(t, res.DatabaseLayer, got[len(got)-1])
		if i > 0 {
			assert.Equal(t, 1, res.ReplacedLayers, "the previous database layer is replaced")
		}

		// Bytes moved: never a base layer; at most the old database layer
		// and the new bundles pulled, the new database layer, config and
		// manifest pushed.
		for _, d := range traf.BlobsGot {
			assert.NotContains(t, baseLayers, d, "add %d downloaded a base layer", i)
		}
		// The bundles, the base's config and (after the first) its database layer.
		maxPull := blobSizes(t, c, refs...) + configSize(t, c, args[len(args)-1])
		if i > 0 {
			maxPull += prev.DatabaseLayerSize
		}
		assert.LessOrEqual(t, traf.BlobsServed, maxPull, "add %d pulled too much: %+v", i, traf)
		assert.LessOrEqual(t, traf.Received, res.DatabaseLayerSize+8<<10, "add %d pushed too much: %+v", i, traf)
		assert.Equal(t, 1, traf.ManifestPushes)
		t.Logf("add %d: pulled %d bytes of blobs (limit %d), pushed %d bytes (database layer %d); opm counted %d/%d",
			i, traf.BlobsServed, maxPull, traf.Received, res.DatabaseLayerSize, res.BytesPulled, res.BytesPushed)

		// The same bundles added to a database file give the same index.
		mode := []string{}
		r = o.Run(append([]string{"index", "add", "--use-http", "--database", dbFile, "-b", strings.Join(refs, ",")}, mode...)...)
		require.Equal(t, 0, r.Code, r.ErrOut)
		assert.JSONEq(t, inspectJSON(t, dbFile), inspectJSON(t, "--use-http", tag), "add %d: image and --database differ", i)
		prev = res
	}

	// skopeo, an independent client, reads the result.
	last := reg.ref("idx:3")
	if _, err := exec.LookPath("skopeo"); err == nil {
		out, err := exec.Command("skopeo", "inspect", "--tls-verify=false", "docker://"+last).CombinedOutput()
		require.NoError(t, err, string(out))
		var si struct {
			Digest string
			Labels map[string]string
			Layers []string
		}
		require.NoError(t, json.Unmarshal(out, &si))
		assert.Equal(t, indeximage.DefaultDatabasePath, si.Labels[indeximage.DatabaseLabel])
		assert.Len(t, si.Layers, len(baseLayers)+1)
		assert.Equal(t, prev.Digest, si.Digest)
		out, err = exec.Command("skopeo", "inspect", "--config", "--tls-verify=false", "docker://"+last).CombinedOutput()
		require.NoError(t, err, string(out))
		var cfg v1.ConfigFile
		require.NoError(t, json.Unmarshal(out, &cfg))
		assert.Equal(t, []string{"/bin/opm"}, cfg.Config.Entrypoint)
		assert.Equal(t, []string{"registry", "serve", "--database", "/database/index.db"}, cfg.Config.Cmd)
		assert.Contains(t, cfg.Config.ExposedPorts, "50051/tcp")
		assert.Equal(t, "1001", cfg.Config.User, "the base config is kept")
		h := cfg.History[len(cfg.History)-1]
		assert.Equal(t, indeximage.LayerComment, h.Comment)
	}

	// rm, then export the image: the remaining bundles' manifests come back.
	r := o.Run("index", "rm", "--use-http", "-o", "pelorus-operator", "-f", last, "-t", reg.ref("idx:4"))
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "removed pelorus-operator (3 bundles)")
	got := layerDigests(t, c, reg.ref("idx:4"))
	require.Len(t, got, len(baseLayers)+1)
	out := filepath.Join(t.TempDir(), "exported")
	r = o.Run("index", "export", "--use-http", "-i", reg.ref("idx:4"), "-f", out)
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Equal(t, []string{"etcd"}, dirEntries(t, out))
	gotCSV, err := os.ReadFile(filepath.Join(out, "etcd/0.9.4/etcdoperator.v0.9.4.clusterserviceversion.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(gotCSV), "etcdoperator.v0.9.4")

	// Adding a bundle that is there: exit 3, nothing written.
	r = o.Run("index", "add", "--use-http", "-b", batches[0][0], "-f", reg.ref("idx:4"), "-t", reg.ref("idx:5"))
	assert.Equal(t, 3, r.Code, r.ErrOut)
	assert.False(t, reg.hasTag(t, "idx", "5"))

	assert.Empty(t, dirEntries(t, work), "nothing is left in the working directory")
	assert.Empty(t, dirEntries(t, tmp), "no temporary files are left")
}

func TestIndexImageMultiArch(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	needCorpus(t)
	reg := startRegistry(t)
	c := testClient(t)
	o.Dir = t.TempDir()

	// A two-platform base built and pushed with go-containerregistry alone.
	plats := []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}
	var adds []mutate.IndexAddendum
	baseLayers := map[string][]string{}
	for _, p := range plats {
		img := fakeBinaryImage(t, image.Platform{OS: p.OS, Architecture: p.Architecture})
		baseLayers[p.Architecture] = imageDigests(t, img)
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	list := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	ref, err := name.ParseReference(reg.ref("opm:multi"), name.Insecure)
	require.NoError(t, err)
	require.NoError(t, remote.WriteIndex(ref, list))

	b1 := pushBundles(t, c, reg.Addr, "etcd", "0.6.1", "0.9.0")
	b2 := pushBundles(t, c, reg.Addr, "etcd", "0.9.2")
	r := o.Run("index", "add", "--use-http", "-b", strings.Join(b1, ","), "-i", reg.ref("opm:multi"), "-t", reg.ref("idx:m1"))
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "linux/amd64, linux/arm64")
	reg.proxy.take()
	r = o.Run("index", "add", "--use-http", "-o", "json", "-b", strings.Join(b2, ","), "-f", reg.ref("idx:m1"), "-t", reg.ref("idx:m2"))
	require.Equal(t, 0, r.Code, r.ErrOut)
	res := decodeImageOut(t, r.Out)
	assert.Equal(t, 2, res.ReplacedLayers)
	traf := summarize(reg.proxy.take())
	assert.Equal(t, 3, traf.ManifestPushes, "two platform manifests and the list")
	for _, layers := range baseLayers {
		for _, d := range traf.BlobsGot {
			assert.NotContains(t, layers, d, "a base layer was downloaded")
		}
	}

	// Read back with go-containerregistry: each platform kept its own base
	// layers and got the same database layer.
	out, err := name.ParseReference(reg.ref("idx:m2"), name.Insecure)
	require.NoError(t, err)
	idx, err := remote.Index(out)
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	require.Len(t, im.Manifests, 2)
	for _, d := range im.Manifests {
		img, err := idx.Image(d.Digest)
		require.NoError(t, err)
		got := imageDigests(t, img)
		want := baseLayers[d.Platform.Architecture]
		require.Len(t, got, len(want)+1, d.Platform.Architecture)
		assert.Equal(t, want, got[:len(want)], d.Platform.Architecture)
		assert.Equal(t, res.DatabaseLayer, got[len(want)], d.Platform.Architecture)
		cf, err := img.ConfigFile()
		require.NoError(t, err)
		assert.Equal(t, d.Platform.Architecture, cf.Architecture)
	}
	for _, p := range []string{"linux/amd64", "linux/arm64"} {
		r = o.Run("index", "inspect", "--use-http", "--platform", p, reg.ref("idx:m2"))
		require.Equal(t, 0, r.Code, r.ErrOut)
		assert.Contains(t, r.Out, "singlenamespace-alpha (head etcdoperator.v0.9.2)")
	}

	// A docker-archive cannot hold a list; an OCI layout can.
	r = o.Run("index", "add", "--use-http", "-b", strings.Join(pushBundles(t, c, reg.Addr, "etcd", "0.9.4"), ","), "-f", reg.ref("idx:m2"), "-t", "oci:layout:m3")
	require.Equal(t, 0, r.Code, r.ErrOut)
	r = o.Run("index", "inspect", "--platform", "linux/arm64", "oci:layout:m3")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "etcdoperator.v0.9.4")
}

func TestIndexImageFailuresWriteNothing(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	reg := startRegistry(t)
	c := testClient(t)
	valid, err := filepath.Abs(validBundle)
	require.NoError(t, err)
	bad, err := filepath.Abs(syntaxBundle)
	require.NoError(t, err)
	_, v2 := twoVersions(t)
	work := t.TempDir()
	o.Dir = work
	tmp := t.TempDir()
	o.ProcEnv["TMPDIR"] = tmp

	pushImage(t, c, fakeBinaryImage(t, image.Platform{}), reg.ref("opm:fake"))
	r := o.Run("index", "add", "--use-http", "-b", valid, "-i", reg.ref("opm:fake"), "-t", reg.ref("idx:1"))
	require.Equal(t, 0, r.Code, r.ErrOut)

	// A bundle that does not load: nothing pushed.
	reg.proxy.take()
	r = o.Run("index", "add", "--use-http", "-b", bad, "-f", reg.ref("idx:1"), "-t", reg.ref("idx:2"))
	assert.Equal(t, 1, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "nothing was added")
	assert.False(t, reg.hasTag(t, "idx", "2"))
	for _, e := range reg.proxy.take() {
		assert.NotContains(t, []string{http.MethodPut, http.MethodPost, http.MethodPatch}, e.Method, "a failed add wrote to the registry: %+v", e)
	}

	// The registry fails the manifest push: the tag stays as it was.
	reg.proxy.setFail(func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/")
	})
	r = o.Run("index", "add", "--use-http", "--retries", "-1", "-b", v2, "-f", reg.ref("idx:1"), "-t", reg.ref("idx:1"))
	assert.Equal(t, 1, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "the destination was not changed")
	reg.proxy.setFail(nil)
	r = o.Run("index", "inspect", "--use-http", reg.ref("idx:1"))
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.NotContains(t, r.Out, "example-operator.v0.2.0", "idx:1 is untouched")

	// Not an index image.
	r = o.Run("index", "add", "--use-http", "-b", v2, "-f", reg.ref("opm:fake"), "-t", reg.ref("idx:3"))
	assert.Equal(t, 1, r.Code)
	assert.Contains(t, r.ErrOut, "is not an index image")

	// Usage errors.
	r = o.Run("index", "add", "-b", valid)
	assert.Equal(t, exit.UpstreamUsage, r.Code)
	r = o.Run("index", "add", "-b", valid, "--database", "x.db", "-t", reg.ref("idx:4"))
	assert.Equal(t, exit.UpstreamUsage, r.Code)
	assert.Contains(t, r.ErrOut, "--database works on a database file")
	r = o.Run("index", "add", "-b", valid, "-t", reg.ref("idx:4"), "-u", "kaniko")
	assert.Equal(t, exit.UpstreamUsage, r.Code)
	r = o.Run("index", "rm", "-o", "x", "-t", reg.ref("idx:4"))
	assert.Equal(t, exit.UpstreamUsage, r.Code)
	assert.Contains(t, r.ErrOut, "--from-index is required")

	assert.Empty(t, dirEntries(t, work), "nothing is left in the working directory")
	assert.Empty(t, dirEntries(t, tmp), "no temporary files are left")
}

func TestIndexGenerate(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	v1dir, v2dir := twoVersions(t)
	bad, err := filepath.Abs(syntaxBundle)
	require.NoError(t, err)
	work := t.TempDir()
	o.Dir = work
	r := o.Run("index", "add", "-b", v1dir+","+v2dir, "--generate", "-i", "example.com/opm:v1.73.0", "-o", "json")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.JSONEq(t, `{"database": "database/index.db", "dockerfile": "index.Dockerfile"}`, mustField(t, r.Out, "generated"))
	df, err := os.ReadFile(filepath.Join(work, "index.Dockerfile"))
	require.NoError(t, err)
	assert.Equal(t, `FROM example.com/opm:v1.73.0
LABEL operators.operatorframework.io.index.database.v1=/database/index.db
ADD database/index.db /database/index.db
EXPOSE 50051
ENTRYPOINT ["/bin/opm"]
CMD ["registry", "serve", "--database", "/database/index.db"]
`, string(df))
	r = o.Run("index", "inspect", "database/index.db")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "example-operator.v0.2.0 0.2.0 → example-operator.v0.1.0")
	assert.Equal(t, []string{"database", "index.Dockerfile"}, dirEntries(t, work))

	// -d names the Dockerfile; a failing add leaves the files as they were.
	r = o.Run("index", "add", "-b", v1dir, "--generate", "-i", "example.com/opm:v1.73.0", "-d", "custom.Dockerfile")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Equal(t, []string{"custom.Dockerfile", "database", "index.Dockerfile"}, dirEntries(t, work))
	before, err := os.ReadFile(filepath.Join(work, "database/index.db"))
	require.NoError(t, err)
	r = o.Run("index", "add", "-b", bad, "--generate", "-i", "example.com/opm:v1.73.0")
	assert.Equal(t, 1, r.Code)
	after, err := os.ReadFile(filepath.Join(work, "database/index.db"))
	require.NoError(t, err)
	assert.Equal(t, before, after)
	assert.Equal(t, []string{"index.db"}, dirEntries(t, filepath.Join(work, "database")))
}

func mustField(t *testing.T, doc, field string) string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(doc), &m), doc)
	return string(m[field])
}

// TestIndexImageFromUpstreamStyleImage: an index image built the upstream
// way — buildah from a generated index.Dockerfile and a database upstream
// opm wrote — works as --from-index, and its ADD layer (nothing but the
// database) is replaced, not stacked upon.
func TestIndexImageFromUpstreamStyleImage(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	needCorpus(t)
	refDB := shareddata.Require(t, "reference", "index", "etcd.replaces.db")
	buildah := registrytest.RequireTool(t, "buildah")
	reg := startRegistry(t)
	c := testClient(t)
	base := fakeBinaryImage(t, image.Platform{OS: "linux", Architecture: "amd64"})
	pushImage(t, c, base, reg.ref("opm:fake"))
	bundles := pushBundles(t, c, reg.Addr, "pelorus-operator", "0.0.1")

	ctxDir := t.TempDir()
	_, dockerfile, err := indeximage.Generate(ctxDir, refDB, "", reg.ref("opm:fake"))
	require.NoError(t, err)
	tag := reg.ref("upstream-style:1")
	// buildah pulls the FROM image into its storage: remove it too.
	t.Cleanup(func() { _ = exec.Command(buildah, "rmi", "-f", tag, reg.ref("opm:fake")).Run() })
	for _, args := range [][]string{
		{"bud", "--isolation", "chroot", "--tls-verify=false", "--layers=false", "-f", dockerfile, "-t", tag, ctxDir},
		{"push", "--tls-verify=false", tag},
	} {
		out, err := exec.Command(buildah, args...).CombinedOutput()
		require.NoError(t, err, "buildah %s: %s", strings.Join(args, " "), out)
	}
	upstream := layerDigests(t, c, tag)
	require.Len(t, upstream, 3, "the base layers and buildah's ADD layer")

	r := o.Run("index", "add", "--use-http", "-o", "json", "-b", bundles[0], "-f", tag, "-t", reg.ref("idx:2"))
	require.Equal(t, 0, r.Code, r.ErrOut)
	res := decodeImageOut(t, r.Out)
	assert.Equal(t, 1, res.ReplacedLayers, "buildah's database layer is replaced")
	got := layerDigests(t, c, reg.ref("idx:2"))
	assert.Equal(t, append(imageDigests(t, base), res.DatabaseLayer), got)
	r = o.Run("index", "inspect", "--use-http", reg.ref("idx:2"))
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "etcd (default channel singlenamespace-alpha)")
	assert.Contains(t, r.Out, "pelorus-operator")
}

// TestIndexAddPullTool: -p podman pulls the bundle image into podman's
// storage and opm reads it from there; the index records the reference.
func TestIndexAddPullTool(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	needCorpus(t)
	podman := registrytest.RequireTool(t, "podman")
	reg := startRegistry(t)
	c := testClient(t)
	bundles := pushBundles(t, c, reg.Addr, "etcd", "0.6.1")
	t.Cleanup(func() { _ = exec.Command(podman, "rmi", "-f", bundles[0]).Run() })
	o.Dir = t.TempDir()
	r := o.Run("index", "add", "--use-http", "-p", "podman", "-b", bundles[0], "--generate", "-i", "example.com/opm:v1.73.0")
	require.Equal(t, 0, r.Code, r.ErrOut)
	r = o.Run("index", "inspect", "-o", "json", "database/index.db")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, `"bundlePath": "`+bundles[0]+`"`)
}

// TestIndexAddBuildTool: -u podman builds the index image from the
// generated Dockerfile in a temporary directory; nothing is left behind.
func TestIndexAddBuildTool(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	podman := registrytest.RequireTool(t, "podman")
	reg := startRegistry(t)
	c := testClient(t)
	valid, err := filepath.Abs(validBundle)
	require.NoError(t, err)
	pushImage(t, c, fakeBinaryImage(t, image.Platform{OS: "linux", Architecture: "amd64"}), reg.ref("opm:fake"))
	work := t.TempDir()
	o.Dir = work
	tmp := t.TempDir()
	o.ProcEnv["TMPDIR"] = tmp
	tag := "localhost/opm-index-build-test:1"
	// podman build pulls the FROM image into its storage: remove it too.
	t.Cleanup(func() { _ = exec.Command(podman, "rmi", "-f", tag, reg.ref("opm:fake")).Run() })
	r := o.Run("index", "add", "--use-http", "-u", "podman", "-b", valid, "-i", reg.ref("opm:fake"), "-t", tag)
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "built "+tag)
	out, err := exec.Command(podman, "image", "inspect", "--format", "{{index .Labels \""+indeximage.DatabaseLabel+"\"}} {{.Config.Entrypoint}}", tag).CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, "/database/index.db [/bin/opm]", strings.TrimSpace(string(out)))
	assert.Empty(t, dirEntries(t, work))
	assert.Empty(t, dirEntries(t, tmp))
}
