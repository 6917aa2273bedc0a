package alpha_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/registrytest"
)

// pushRandomTo pushes a random image to repo on reg (TLS or not, trusting
// its test CA) and returns it by digest.
func pushRandomTo(t *testing.T, reg *registrytest.Registry, repo string) string {
	t.Helper()
	var opts []name.Option
	if !reg.TLS {
		opts = append(opts, name.Insecure)
	}
	r, err := name.NewRepository(reg.Addr+"/"+repo, opts...)
	require.NoError(t, err)
	img, err := random.Image(64<<10, 2)
	require.NoError(t, err)
	d, err := img.Digest()
	require.NoError(t, err)
	require.NoError(t, remote.Write(r.Digest(d.String()), img, remote.WithTransport(reg.Client().Transport)))
	return r.String() + "@" + d.String()
}

// catalogTo pushes to repoTag on reg a one-bundle catalog (smallCatalogWith)
// built in an OCI layout.
func catalogTo(t *testing.T, reg *registrytest.Registry, repoTag, bundle string, related ...string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "layout")
	smallCatalogWith(t, "oci:"+dir+":cat", bundle, related...)
	p, err := layout.FromPath(dir)
	require.NoError(t, err)
	idx, err := p.ImageIndex()
	require.NoError(t, err)
	m, err := idx.IndexManifest()
	require.NoError(t, err)
	require.Len(t, m.Manifests, 1)
	img, err := idx.Image(m.Manifests[0].Digest)
	require.NoError(t, err)
	var opts []name.Option
	if !reg.TLS {
		opts = append(opts, name.Insecure)
	}
	ref, err := name.ParseReference(reg.Addr+"/"+repoTag, opts...)
	require.NoError(t, err)
	require.NoError(t, remote.Write(ref, img, remote.WithTransport(reg.Client().Transport)))
}

// arrived says whether ref's digest is at dst (plain HTTP) under prefix.
func arrived(t *testing.T, dst *registrytest.Registry, prefix, ref string) bool {
	t.Helper()
	repo := ref[strings.Index(ref, "/")+1 : strings.Index(ref, "@")]
	_, err := remoteDigestOf(fmt.Sprintf("%s/%s/%s@%s", dst.Addr, prefix, repo, catalogimages.Digest(ref)))
	return err == nil
}

// TestMirrorPerSideTransport (issue 39): a self-signed TLS source and a
// plain-HTTP destination, each told apart by --src-* and --dest-* flags;
// without the source's flag its certificate is refused, and a side's two
// flags that contradict each other are a usage error.
func TestMirrorPerSideTransport(t *testing.T) {
	t.Parallel()
	src := registrytest.Start(t, registrytest.WithTLS())
	dst := registrytest.Start(t)
	o := cmdtest.New(t)
	bundle := pushRandomTo(t, src, "p/bundle")
	operand := pushRandomTo(t, src, "p/operand")
	catalogTo(t, src, "olm/cat:1", bundle, operand)
	manifests := filepath.Join(t.TempDir(), "m")

	r := o.Run("alpha", "mirror", src.Ref("olm/cat:1"), "--to", dst.Addr+"/m", "--manifests-dir", manifests, "--dest-use-http")
	assert.NotEqual(t, exit.OK, r.Code, "the source's certificate is signed by an unknown CA")
	assert.Contains(t, r.ErrOut, "TLS verification failed")

	r = o.Run("alpha", "mirror", src.Ref("olm/cat:1"), "--to", dst.Addr+"/m", "--manifests-dir", manifests,
		"--src-tls-verify=false", "--dest-use-http")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "mirrored 3 of 3 images")
	for _, ref := range []string{bundle, operand} {
		assert.True(t, arrived(t, dst, "m", ref), ref)
	}

	// The global flag still applies to the side without its own.
	r = o.Run("alpha", "mirror", src.Ref("olm/cat:1"), "--to", dst.Addr+"/g", "--manifests-dir", manifests,
		"--skip-tls-verify", "--dest-use-http")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.True(t, arrived(t, dst, "g", bundle))

	r = o.Run("alpha", "mirror", src.Ref("olm/cat:1"), "--to", dst.Addr+"/m", "--dest-use-http", "--dest-tls-verify=false")
	assert.Equal(t, exit.UpstreamUsage, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "--dest-tls-verify=false and --dest-use-http are mutually exclusive")
}

// TestMirrorRegistriesConfInsecure (issue 39): registries.conf marking
// the self-signed source insecure is honoured by alpha mirror
// (--registries-conf) and by render ($CONTAINERS_REGISTRIES_CONF), and
// a registries.conf that does not exist is refused.
func TestMirrorRegistriesConfInsecure(t *testing.T) {
	t.Parallel()
	src := registrytest.Start(t, registrytest.WithTLS())
	dst := registrytest.Start(t)
	o := cmdtest.New(t)
	bundle := pushRandomTo(t, src, "p/bundle")
	catalogTo(t, src, "olm/cat:1", bundle)
	conf := filepath.Join(t.TempDir(), "registries.conf")
	require.NoError(t, os.WriteFile(conf, []byte(fmt.Sprintf(`[[registry]]
location = %q
insecure = true
`, src.Addr)), 0o644))

	r := o.Run("render", src.Ref("olm/cat:1"))
	assert.NotEqual(t, exit.OK, r.Code, "without registries.conf the certificate is refused")
	assert.Contains(t, r.ErrOut, "TLS verification failed")

	o.Env["CONTAINERS_REGISTRIES_CONF"] = conf
	r = o.Run("render", src.Ref("olm/cat:1"))
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, bundle)
	r = o.Run("alpha", "list", "bundles", src.Ref("olm/cat:1"))
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "p.v1.0.0")
	delete(o.Env, "CONTAINERS_REGISTRIES_CONF")

	r = o.Run("alpha", "mirror", src.Ref("olm/cat:1"), "--to", dst.Addr+"/m", "--manifests-dir", filepath.Join(t.TempDir(), "m"),
		"--registries-conf", conf, "--dest-use-http")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.True(t, arrived(t, dst, "m", bundle))

	r = o.Run("render", src.Ref("olm/cat:1"), "--registries-conf", conf+".missing")
	assert.NotEqual(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "registries.conf.missing")
}

// closedAddr is a 127.0.0.1 address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// TestMirrorThroughRegistriesConfMirror (issue 39): the source registry
// is down (a closed port) and registries.conf names a mirror holding its
// images: digest pulls go to the mirror, and the catalog, pulled by tag,
// too unless the mirror says pull-from-mirror = "digest-only" (the
// containers default is "all"). The objects written still name the
// source.
func TestMirrorThroughRegistriesConfMirror(t *testing.T) {
	t.Parallel()
	down := closedAddr(t)
	mir := registrytest.Start(t)
	dst := registrytest.Start(t)
	o := cmdtest.New(t)
	bundle := strings.Replace(pushRandomTo(t, mir, "p/bundle"), mir.Addr, down, 1)
	operand := strings.Replace(pushRandomTo(t, mir, "p/operand"), mir.Addr, down, 1)
	catalogTo(t, mir, "olm/cat:1", bundle, operand)
	confText := func(pull string) string {
		return fmt.Sprintf(`[[registry]]
location = %q
[[registry.mirror]]
location = %q
insecure = true
%s
`, down, mir.Addr, pull)
	}
	dir := t.TempDir()
	digestOnly, all := filepath.Join(dir, "digest-only.conf"), filepath.Join(dir, "all.conf")
	require.NoError(t, os.WriteFile(digestOnly, []byte(confText(`pull-from-mirror = "digest-only"`)), 0o644))
	require.NoError(t, os.WriteFile(all, []byte(confText("")), 0o644))
	catalog := down + "/olm/cat:1"
	manifests := filepath.Join(t.TempDir(), "m")

	r := o.Run("alpha", "mirror", catalog, "--to", dst.Addr+"/m", "--manifests-dir", manifests, "--registries-conf", digestOnly, "--dest-use-http", "--retries", "0")
	assert.NotEqual(t, exit.OK, r.Code, "a tag is not pulled from a digest-only mirror")
	assert.Contains(t, r.ErrOut, down)

	r = o.Run("alpha", "mirror", catalog, "--to", dst.Addr+"/m", "--manifests-dir", manifests, "--registries-conf", all, "--dest-use-http")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "mirrored 3 of 3 images")
	for _, ref := range []string{bundle, operand} {
		assert.True(t, arrived(t, dst, "m", ref), ref)
	}
	idms := readFile(t, filepath.Join(manifests, "imagedigestmirrorset.yaml"))
	assert.Contains(t, idms, down+"/p/bundle", "the mirror sets name the source, not the registries.conf mirror")
}

// rateLimitingProxy answers 429 with Retry-After: 1 to every fifth
// request and passes the others to a registry. With dropDelete it
// answers every DELETE 405, as a proxy that passes only reads and
// pushes does.
type rateLimitingProxy struct {
	next            http.Handler
	n, limited, all atomic.Int64
	dropDelete      bool
	deletes         atomic.Int64
	// dropCatalog answers /v2/_catalog 404, as registries that do not
	// list their repositories do.
	dropCatalog bool
	// off passes every request on (the limit paused).
	off atomic.Bool
}

func (p *rateLimitingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.all.Add(1)
	if p.dropCatalog && r.URL.Path == "/v2/_catalog" {
		writeRegistryError(w, http.StatusNotFound, "NOT_FOUND", "not found")
		return
	}
	if r.Method == http.MethodDelete {
		p.deletes.Add(1)
		if p.dropDelete {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
	}
	if !p.off.Load() && p.n.Add(1)%5 == 0 {
		p.limited.Add(1)
		w.Header().Set("Retry-After", "1")
		writeRegistryError(w, http.StatusTooManyRequests, "TOOMANYREQUESTS", "slow down")
		return
	}
	p.next.ServeHTTP(w, r)
}

// rateLimitedFront serves a rateLimitingProxy to reg on a loopback port
// until the test ends, and returns it and its address.
func rateLimitedFront(t *testing.T, reg *registrytest.Registry) (*rateLimitingProxy, string) {
	t.Helper()
	u, err := url.Parse(reg.URL())
	require.NoError(t, err)
	proxy := &rateLimitingProxy{next: httputil.NewSingleHostReverseProxy(u)}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: proxy} //nolint:gosec // a test's loopback proxy
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return proxy, l.Addr().String()
}

// TestMirrorRateLimitedRegistry (issue 39): a source answering 429 with
// Retry-After: 1 to every fifth request is mirrored whole with the
// default --retries, and the waits are reported; they are not failures.
func TestMirrorRateLimitedRegistry(t *testing.T) {
	t.Parallel()
	src := registrytest.Start(t)
	dst := registrytest.Start(t)
	proxy, front := rateLimitedFront(t, src)
	o := cmdtest.New(t)
	var related []string
	for i := range 6 {
		related = append(related, strings.Replace(pushRandomTo(t, src, fmt.Sprintf("p/operand%d", i)), src.Addr, front, 1))
	}
	bundle := strings.Replace(pushRandomTo(t, src, "p/bundle"), src.Addr, front, 1)
	catalogTo(t, src, "olm/cat:1", bundle, related...)
	proxy.n.Store(0)

	r := o.Run("alpha", "mirror", front+"/olm/cat:1", "--to", dst.Addr+"/m", "--manifests-dir", filepath.Join(t.TempDir(), "m"), "--use-http", "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	var rep struct {
		Failed         int
		Complete       bool
		RateLimitWaits int
	}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &rep))
	t.Logf("%d requests, %d answered 429; the report counts %d waits\n%s", proxy.all.Load(), proxy.limited.Load(), rep.RateLimitWaits, r.ErrOut)
	assert.True(t, rep.Complete)
	assert.Zero(t, rep.Failed)
	assert.Positive(t, proxy.limited.Load())
	assert.Equal(t, int(proxy.limited.Load()), rep.RateLimitWaits, "every 429 was waited out, none went to --retries")
	assert.Contains(t, r.ErrOut, "answered 429 Too Many Requests with Retry-After: waiting as it asks")
	for _, ref := range append(related, bundle) {
		assert.True(t, arrived(t, dst, "m", ref), ref)
	}

	// --retries 0: a rate limit is still waited out, not a failure; the
	// summary says how many waits.
	before := proxy.limited.Load()
	r = o.Run("alpha", "mirror", front+"/olm/cat:1", "--to-dir", filepath.Join(t.TempDir(), "d"), "--use-http", "--retries", "0")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, fmt.Sprintf("waited %d times", proxy.limited.Load()-before))

	// A destination that limits pushes the same way: uploads are asked
	// again after the wait.
	dproxy, dfront := rateLimitedFront(t, dst)
	r = o.Run("alpha", "mirror", front+"/olm/cat:1", "--to", dfront+"/d", "--manifests-dir", filepath.Join(t.TempDir(), "m"), "--use-http", "--retries", "0")
	t.Logf("destination: %d requests, %d answered 429\n%s", dproxy.all.Load(), dproxy.limited.Load(), r.ErrOut)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	for _, ref := range append(related, bundle) {
		assert.True(t, arrived(t, dst, "d", ref), ref)
	}
}
