package alpha_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/mirror"
	"github.com/opmkit/opm/internal/registrytest"
)

// sourceProxy stands in front of a source registry: it counts the
// requests it passes and, when stallAt > 0, holds the stallAt-th blob GET
// (after sending half of the blob when half is set) until the client
// gives up, announcing it on stalled.
type sourceProxy struct {
	upstream string
	stallAt  int64
	half     bool
	requests atomic.Int64
	blobs    atomic.Int64
	stalled  chan struct{}
	once     sync.Once
	Addr     string
}

func newSourceProxy(t *testing.T, src *registrytest.Registry, stallAt int64, half bool) *sourceProxy {
	t.Helper()
	p := &sourceProxy{upstream: src.URL(), stallAt: stallAt, half: half, stalled: make(chan struct{})}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	p.Addr = strings.TrimPrefix(srv.URL, "http://")
	return p
}

func (p *sourceProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.requests.Add(1)
	stall := false
	if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
		stall = p.blobs.Add(1) == p.stallAt
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.upstream+r.URL.RequestURI(), r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	if stall && !p.half {
		p.once.Do(func() { close(p.stalled) })
		<-r.Context().Done()
		return
	}
	w.WriteHeader(resp.StatusCode)
	if stall {
		n, _ := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64)
		_, _ = io.CopyN(w, resp.Body, n/2)
		w.(http.Flusher).Flush()
		p.once.Do(func() { close(p.stalled) })
		<-r.Context().Done()
		return
	}
	_, _ = io.Copy(w, resp.Body)
}

// startRun starts cmd and returns the channel its end arrives on.
func startRun(t *testing.T, cmd *exec.Cmd) <-chan error {
	t.Helper()
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return done
}

// awaitStall waits for the proxy to stall the run started as done; the
// run ending first fails the test, naming it by what ("the mirror"). The
// three minutes are a guard against a hang, not a speed bound.
func awaitStall(t *testing.T, proxy *sourceProxy, cmd *exec.Cmd, done <-chan error, errOut *strings.Builder, what string) {
	t.Helper()
	select {
	case <-proxy.stalled:
	case err := <-done:
		t.Fatalf("%s ended before the stall (%v):\n%s", what, err, errOut.String())
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("%s never reached the stall:\n%s", what, errOut.String())
	}
}

// awaitEnd waits for the run started as done to end, failing with hung
// and its stderr if it has not within three minutes (a guard against a
// hang, not a speed bound).
func awaitEnd(t *testing.T, cmd *exec.Cmd, done <-chan error, errOut *strings.Builder, hung string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("%s:\n%s", hung, errOut.String())
	}
}

// truthFixture is a catalog of a bundle and five related images (one a
// three-platform list), all in src.
type truthFixture struct {
	src     *registrytest.Registry
	bundle  string
	related []string
}

func newTruthFixture(t *testing.T) *truthFixture {
	t.Helper()
	fx := &truthFixture{src: registrytest.Start(t)}
	fx.bundle = pushRandom(t, fx.src.Addr, "example.com/p/bundle", false)
	for i := range 5 {
		fx.related = append(fx.related, pushRandom(t, fx.src.Addr, fmt.Sprintf("example.com/p/img%d", i), i == 2))
	}
	return fx
}

// catalogVia pushes the fixture's catalog as ref (in src), naming every
// image through the proxy at addr, and returns the catalog's name there.
func (fx *truthFixture) catalogVia(t *testing.T, addr, repoTag string) string {
	t.Helper()
	via := func(s string) string { return addr + strings.TrimPrefix(s, fx.src.Addr) }
	var rel []string
	for _, r := range fx.related {
		rel = append(rel, via(r))
	}
	smallCatalogWith(t, fx.src.Ref(repoTag), via(fx.bundle), rel...)
	return addr + "/" + repoTag
}

var wroteLine = regexp.MustCompile(`wrote to (\S+): (\d+) of (\d+) images whole`)

// TestMirrorInterruptedTellsTheTruth (issue 35): a mirror stopped by
// SIGINT or --timeout at several points (reading the catalog, between
// blobs, in the middle of a blob), to a registry and to a directory, in a
// child process: its last line says what was written, matching the report
// and the destination; no image is "copied" with an error; no catalog
// object is written; a rerun says it resumes and completes.
func TestMirrorInterruptedTellsTheTruth(t *testing.T) {
	t.Parallel()
	fx := newTruthFixture(t)
	dst := registrytest.Start(t)
	n := 0
	for _, stop := range []string{"SIGINT", "timeout"} {
		for _, point := range []struct {
			name    string
			stallAt int64
			half    bool
		}{{"reading the catalog", 1, false}, {"between blobs", 7, false}, {"in a blob", 13, true}} {
			for _, toDir := range []bool{false, true} {
				n++
				id := n
				t.Run(fmt.Sprintf("%s %s to-dir=%v", stop, point.name, toDir), func(t *testing.T) {
					t.Parallel()
					proxy := newSourceProxy(t, fx.src, point.stallAt, point.half)
					catalog := fx.catalogVia(t, proxy.Addr, fmt.Sprintf("olm/cat:%d", id))
					o := cmdtest.New(t)
					work := t.TempDir()
					o.Dir = work
					dir := filepath.Join(work, "carry")
					manifests := filepath.Join(work, "manifests")
					to := fmt.Sprintf("%s/case%d", dst.Addr, id)
					args := []string{"alpha", "mirror", "--use-http", catalog, "--concurrency", "1"}
					if toDir {
						args = append(args, "--to-dir", dir)
					} else {
						args = append(args, "--to", to, "--manifests-dir", manifests)
					}
					run := append(append([]string{}, args...), "-o", "json")
					if stop == "timeout" {
						// The stall outlasts --timeout: no retry passes it.
						run = append(run, "--timeout", "15s", "--registry-timeout", "10m")
					}
					cmd := o.Command(run...)
					var out, errOut strings.Builder
					cmd.Stdout, cmd.Stderr = &out, &errOut
					done := startRun(t, cmd)
					if stop == "SIGINT" {
						awaitStall(t, proxy, cmd, done, &errOut, "the mirror")
						require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
					}
					awaitEnd(t, cmd, done, &errOut, "the stopped mirror never ended")
					want := exit.Interrupted
					if stop == "timeout" {
						want = exit.TimedOut
					}
					assert.Equal(t, want, cmd.ProcessState.ExitCode(), errOut.String())
					lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
					last := lines[len(lines)-1]
					t.Logf("last line: %s", last)

					// What the report says arrived.
					var rep struct {
						Images []struct {
							Source, Error string
							Copied        bool
						}
					}
					if toDir {
						if raw, err := os.ReadFile(filepath.Join(dir, mirror.ReportFile)); err == nil {
							require.NoError(t, json.Unmarshal(raw, &rep))
						}
					} else {
						_ = json.NewDecoder(strings.NewReader(out.String())).Decode(&rep)
					}
					whole := 0
					for _, im := range rep.Images {
						assert.False(t, im.Copied && im.Error != "", "%s is copied with an error: %s", im.Source, im.Error)
						if im.Copied {
							whole++
						}
					}

					// What is at the destination.
					at := 0
					if toDir {
						if entries, err := image.LayoutEntries(dir); err == nil {
							at = len(entries)
						}
						tmps, _ := filepath.Glob(filepath.Join(dir, "blobs", "sha256", ".tmp-*"))
						assert.Empty(t, tmps, "no partial file left")
					} else {
						for _, ref := range append([]string{fx.bundle}, fx.related...) {
							path := strings.TrimPrefix(ref, fx.src.Addr)
							if _, err := remoteDigestOf(to + path); err == nil {
								at++
							}
						}
						if _, err := remoteDigestOf(fmt.Sprintf("%s/olm/cat:%d", to, id)); err == nil {
							at++
						}
					}
					if m := wroteLine.FindStringSubmatch(last); m != nil {
						k, _ := strconv.Atoi(m[2])
						assert.Equal(t, whole, k, "the last line and the report agree: %s", last)
						assert.Equal(t, at, k, "the last line and the destination agree: %s", last)
						assert.Equal(t, "7", m[3], last)
					} else {
						assert.Contains(t, last, "nothing was written")
						assert.Zero(t, at, "nothing at the destination")
						_, err := os.Stat(dir)
						assert.True(t, os.IsNotExist(err), "no directory made")
						_, err = os.Stat(manifests)
						assert.True(t, os.IsNotExist(err), "no manifests written")
					}
					reached := false
					select {
					case <-proxy.stalled:
						reached = true
					default: // --timeout came first on a slow machine: the line must still be true
					}
					if point.stallAt > 1 && reached {
						assert.NotContains(t, last, "nothing was written", "the catalog was read and images copied: %s", last)
					}
					for _, f := range readDirIfAny(manifests) {
						assert.NotRegexp(t, `^(catalogsource|clustercatalog)-`, f, "no catalog object for an incomplete mirror")
						assert.Contains(t, last, f, "the last line names every file written")
					}

					// The rerun resumes and completes.
					o.Dir = work
					r := o.Run(args...)
					require.Equal(t, exit.OK, r.Code, r.ErrOut)
					if at > 0 {
						assert.Contains(t, r.ErrOut, fmt.Sprintf("resuming: %d images already there", at))
					}
					assert.Contains(t, r.ErrOut, "mirrored 7 of 7 images")
					if !toDir {
						assert.Contains(t, readDirIfAny(manifests), fmt.Sprintf("catalogsource-cat-%d.yaml", id))
					}
				})
			}
		}
	}
}

func readDirIfAny(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// pushSig pushes a small image to the repository of the image ref (by
// digest) as its cosign signature tag, sha256-HEX.sig.
func pushSig(t *testing.T, ref string) {
	t.Helper()
	d, err := name.NewDigest(ref, name.Insecure)
	require.NoError(t, err)
	img, err := random.Image(512, 1)
	require.NoError(t, err)
	hex := strings.TrimPrefix(d.DigestStr(), "sha256:")
	require.NoError(t, remote.Write(d.Context().Tag("sha256-"+hex+".sig"), img))
}

// TestMirrorIncompleteAndOffline (issue 35): an image gone at the source
// leaves no CatalogSource or ClusterCatalog (--allow-incomplete writes
// them, marked); --from-dir reads no registry, names what the directory
// lacks with its bundles and the advice that helps; --to-dir and
// --from-dir count the same images, a signature tag with its image.
func TestMirrorIncompleteAndOffline(t *testing.T) {
	t.Parallel()
	src := registrytest.Start(t)
	dst := registrytest.Start(t)
	proxy := newSourceProxy(t, src, 0, false)
	o := cmdtest.New(t)
	via := func(s string) string { return proxy.Addr + strings.TrimPrefix(s, src.Addr) }
	bundle := pushRandom(t, src.Addr, "example.com/p/bundle", false)
	good := pushRandom(t, src.Addr, "example.com/p/operator", true)
	pushSig(t, good)
	gone := src.Addr + "/p/gone@sha256:" + strings.Repeat("ab", 32)
	smallCatalogWith(t, src.Ref("olm/cat:1"), via(bundle), via(good), via(gone))
	catalog := proxy.Addr + "/olm/cat:1"

	manifests := filepath.Join(t.TempDir(), "m")
	r := o.Run("alpha", "mirror", "--use-http", catalog, "--to", dst.Addr+"/direct", "--manifests-dir", manifests)
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "mirrored 3 of 4 images")
	t.Logf("an incomplete mirror:\n%s", r.ErrOut)
	assert.Contains(t, r.ErrOut, "no CatalogSource or ClusterCatalog written: 1 images the catalog needs did not arrive")
	assert.Equal(t, []string{"imagedigestmirrorset.yaml", "mapping.txt"}, readDir(t, manifests))
	assert.NotContains(t, readFile(t, filepath.Join(manifests, "mapping.txt")), "olm/cat")

	r = o.Run("alpha", "mirror", "--use-http", catalog, "--to", dst.Addr+"/direct", "--manifests-dir", manifests, "--allow-incomplete", "-o", "json")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	cs := readFile(t, filepath.Join(manifests, "catalogsource-cat-1.yaml"))
	assert.True(t, strings.HasPrefix(cs, "# INCOMPLETE MIRROR (--allow-incomplete): 1 images"), cs)
	assert.Contains(t, cs, via(gone))
	assert.Contains(t, readFile(t, filepath.Join(manifests, "clustercatalog-cat-1.yaml")), "# INCOMPLETE MIRROR")
	var rep struct {
		Complete       bool
		Missing        []string
		CatalogObjects string
	}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &rep))
	assert.False(t, rep.Complete)
	assert.Equal(t, []string{via(gone)}, rep.Missing)
	assert.Equal(t, mirror.CatalogIncomplete, rep.CatalogObjects)

	// Through a directory: the same count either side.
	dir := filepath.Join(t.TempDir(), "carry")
	r = o.Run("alpha", "mirror", "--use-http", catalog, "--to-dir", dir)
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "mirrored 3 of 4 images")
	entries, err := image.LayoutEntries(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 4, "the catalog, two images and the signature")

	before := proxy.requests.Load()
	far := filepath.Join(t.TempDir(), "far")
	r = o.Run("alpha", "mirror", "--use-http", "--from-dir", dir, "--to", dst.Addr+"/far", "--manifests-dir", far)
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	t.Logf("--from-dir of an incomplete directory:\n%s", r.ErrOut)
	assert.Equal(t, before, proxy.requests.Load(), "--from-dir reads no source registry")
	assert.Contains(t, r.ErrOut, "mirrored 3 of 4 images", "counted as --to-dir counted")
	assert.Contains(t, r.ErrOut, via(gone)+": not in "+dir+" (the --to-dir run that wrote it could not copy it: ")
	assert.Contains(t, r.ErrOut, "1 images are not in "+dir+": run opm alpha mirror --to-dir again on the connected side")
	assert.Contains(t, r.ErrOut, "needed by p/p.v1.0.0 (related r1)")
	assert.Contains(t, r.ErrOut, "--to-dir again on the connected side")
	assert.NotContains(t, r.ErrOut, "run the same command again to retry")
	assert.NotContains(t, readDir(t, far), "catalogsource-cat-1.yaml")
	sig, err := remoteDigestOf(dst.Addr + "/far/p/operator:sha256-" + strings.TrimPrefix(good[strings.Index(good, "@sha256:")+1:], "sha256:") + ".sig")
	require.NoError(t, err, "the signature came along with its image")
	assert.NotEmpty(t, sig.Hex)
}

// TestMirrorTamperedDirectory (issue 35): a mirror directory is untrusted:
// a catalog entry swapped for another catalog whose blobs were slipped in,
// a FIFO blob, a FIFO index.json and a blob linked to a file outside are
// refused with what is wrong; nothing of the swapped catalog reaches the
// registry; --to-dir refuses a DIR whose blobs is a link.
func TestMirrorTamperedDirectory(t *testing.T) {
	t.Parallel()
	src := registrytest.Start(t)
	dst := registrytest.Start(t)
	o := cmdtest.New(t)
	bundle := pushRandom(t, src.Addr, "example.com/p/bundle", false)
	op := pushRandom(t, src.Addr, "example.com/p/operator", false)
	smallCatalogWith(t, src.Ref("olm/cat:1"), bundle, op)
	other := pushRandom(t, src.Addr, "example.com/q/bundle", false)
	smallCatalogWith(t, src.Ref("olm/evil:1"), other)

	base := filepath.Join(t.TempDir(), "carry")
	r := o.Run("alpha", "mirror", "--use-http", src.Ref("olm/cat:1"), "--to-dir", base)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	evil := filepath.Join(t.TempDir(), "evil")
	r = o.Run("alpha", "mirror", "--use-http", src.Ref("olm/evil:1"), "--to-dir", evil)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	entries, err := image.LayoutEntries(base)
	require.NoError(t, err)
	byName := map[string]string{}
	for _, e := range entries {
		byName[e.Annotations["org.opencontainers.image.ref.name"]] = e.Digest.String()
	}
	evilEntries, err := image.LayoutEntries(evil)
	require.NoError(t, err)
	var evilCatalog string
	for _, e := range evilEntries {
		if e.Annotations[mirror.AnnotationRole] == mirror.RoleCatalog {
			evilCatalog = e.Digest.String()
		}
	}
	require.NotEmpty(t, evilCatalog)
	catalogDigest := byName[src.Ref("olm/cat:1")]
	require.NotEmpty(t, catalogDigest)
	// A layer of the operator image, to tamper with.
	layer := layerOf(t, base, byName[op])

	for _, c := range []struct {
		name   string
		tamper func(t *testing.T, dir string)
		want   []string
	}{
		{"swapped catalog", func(t *testing.T, dir string) {
			blobs, err := filepath.Glob(filepath.Join(evil, "blobs", "sha256", "*"))
			require.NoError(t, err)
			for _, b := range blobs {
				raw, err := os.ReadFile(b)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, "blobs", "sha256", filepath.Base(b)), raw, 0o644))
			}
			idx := readFile(t, filepath.Join(dir, "index.json"))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "index.json"), []byte(strings.ReplaceAll(idx, catalogDigest, evilCatalog)), 0o644))
		}, []string{evilCatalog, catalogDigest, "changed after it was written"}},
		{"FIFO blob", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(layer, "sha256:"))
			require.NoError(t, os.Remove(p))
			require.NoError(t, syscall.Mkfifo(p, 0o644))
		}, []string{strings.TrimPrefix(layer, "sha256:") + " is a FIFO"}},
		{"FIFO index.json", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "index.json")
			require.NoError(t, os.Remove(p))
			require.NoError(t, syscall.Mkfifo(p, 0o644))
		}, []string{"index.json is a FIFO"}},
		{"blob linked outside", func(t *testing.T, dir string) {
			outside := filepath.Join(t.TempDir(), "secret")
			require.NoError(t, os.WriteFile(outside, []byte("this machine's secret"), 0o600))
			p := filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(layer, "sha256:"))
			require.NoError(t, os.Remove(p))
			require.NoError(t, os.Symlink(outside, p))
		}, []string{strings.TrimPrefix(layer, "sha256:") + " is a symbolic link"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "carry")
			cmdtest.CopyDir(t, base, dir)
			c.tamper(t, dir)
			prefix := dst.Addr + "/" + strings.ReplaceAll(strings.ToLower(c.name), " ", "-")
			manifests := filepath.Join(t.TempDir(), "m")
			cmd := o.Command("alpha", "mirror", "--use-http", "--from-dir", dir, "--to", prefix, "--manifests-dir", manifests)
			var errOut strings.Builder
			cmd.Stderr = &errOut
			awaitEnd(t, cmd, startRun(t, cmd), &errOut, "the mirror hangs on the tampered directory")
			assert.NotEqual(t, exit.OK, cmd.ProcessState.ExitCode(), errOut.String())
			for _, w := range c.want {
				assert.Contains(t, errOut.String(), w)
			}
			_, err := remoteDigestOf(prefix + "/olm/cat:1")
			if c.name != "FIFO blob" && c.name != "blob linked outside" {
				assert.Error(t, err, "nothing of a refused directory reaches the registry")
			}
			_, err = remoteDigestOf(prefix + "/p/operator@" + byName[op])
			assert.Error(t, err, "the tampered image is not pushed")
			for _, f := range readDirIfAny(manifests) {
				assert.NotRegexp(t, `^(catalogsource|clustercatalog)-`, f)
			}
		})
	}

	t.Run("DIR/blobs a link", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "carry")
		outside := t.TempDir()
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.Symlink(outside, filepath.Join(dir, "blobs")))
		r := o.Run("alpha", "mirror", "--use-http", src.Ref("olm/cat:1"), "--to-dir", dir)
		assert.NotEqual(t, exit.OK, r.Code)
		assert.Contains(t, r.ErrOut, filepath.Join(dir, "blobs")+" is a symbolic link")
		assert.Empty(t, readDirIfAny(outside), "nothing written through the link")
	})
}

// layerOf is the first layer's digest of the image manifest d in the
// layout dir.
func layerOf(t *testing.T, dir, d string) string {
	t.Helper()
	raw := readFile(t, filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(d, "sha256:")))
	var m struct{ Layers []struct{ Digest string } }
	require.NoError(t, json.Unmarshal([]byte(raw), &m))
	require.NotEmpty(t, m.Layers)
	return m.Layers[0].Digest
}

// TestMirrorRefusesLocalImages (issue 35): a catalog naming oci: and
// oci-archive: images (files of the machine reading it) mirrors nothing
// from this machine: alpha mirror and alpha list images refuse them with
// the bundle naming them; the catalog image itself may be local.
func TestMirrorRefusesLocalImages(t *testing.T) {
	t.Parallel()
	src := registrytest.Start(t)
	dst := registrytest.Start(t)
	o := cmdtest.New(t)
	bundle := pushRandom(t, src.Addr, "example.com/p/bundle", false)
	// A real layout and archive, so that a leak would find something.
	secret := filepath.Join(t.TempDir(), "secret")
	smallCatalogWith(t, "oci:"+secret+":1", bundle)
	archive := filepath.Join(t.TempDir(), "secret.tar")
	require.NoError(t, os.WriteFile(archive, []byte("not read"), 0o600))
	local := filepath.Join(t.TempDir(), "catalog")
	smallCatalogWith(t, "oci:"+local+":v1", bundle, "oci:"+secret+":1", "oci-archive:"+archive, "docker://"+pushRandom(t, src.Addr, "example.com/p/op", false))

	for _, args := range [][]string{
		{"--to-dir", filepath.Join(t.TempDir(), "carry")},
		{"--to", dst.Addr + "/m", "--manifests-dir", filepath.Join(t.TempDir(), "m")},
	} {
		r := o.Run(append([]string{"alpha", "mirror", "--use-http", "oci:" + local + ":v1"}, args...)...)
		assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
		assert.Contains(t, r.ErrOut, "names 2 images that are not in a registry; nothing was copied")
		assert.Contains(t, r.ErrOut, `bundle p/p.v1.0.0 names related image "r0" oci:`+secret+":1: the oci: transport reads this machine's files")
		assert.Contains(t, r.ErrOut, "oci-archive:"+archive)
		if args[0] == "--to-dir" {
			_, err := os.Stat(args[1])
			assert.True(t, os.IsNotExist(err), "no directory written")
		}
	}
	_, err := remoteDigestOf(dst.Addr + "/m/catalog:latest")
	assert.Error(t, err, "nothing pushed")

	r := o.Run("alpha", "list", "images", "--use-http", "oci:"+local+":v1")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.NotContains(t, r.Out, "oci:")
	assert.Contains(t, r.Out, src.Addr+"/p/op@sha256:")
	assert.Contains(t, r.ErrOut, "2 images are not registry references and are not listed")
	assert.Contains(t, r.ErrOut, "oci-archive:"+archive)
	sc := bufio.NewScanner(strings.NewReader(r.Out))
	for sc.Scan() {
		assert.NotContains(t, sc.Text(), "docker://", "listed as a registry name")
	}
}

// TestMirrorDirectoryLocked (issue 35): while one run writes a mirror
// directory, a second run into it is refused at once (the first holds its
// lock); once the first has stopped, a run removes the partial files it
// left and completes the directory.
func TestMirrorDirectoryLocked(t *testing.T) {
	t.Parallel()
	fx := newTruthFixture(t)
	proxy := newSourceProxy(t, fx.src, 9, true)
	catalog := fx.catalogVia(t, proxy.Addr, "olm/cat:locked")
	o := cmdtest.New(t)
	dir := filepath.Join(t.TempDir(), "carry")
	cmd := o.Command("alpha", "mirror", "--use-http", catalog, "--to-dir", dir, "--concurrency", "1", "--registry-timeout", "10m")
	var errOut strings.Builder
	cmd.Stderr = &errOut
	done := startRun(t, cmd)
	awaitStall(t, proxy, cmd, done, &errOut, "the first run")

	r := o.Run("alpha", "mirror", "--use-http", catalog, "--to-dir", dir)
	assert.NotEqual(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "another opm run is writing to it")

	// Killed mid-blob: its partial file stays behind, and goes at the next start.
	require.NoError(t, cmd.Process.Kill())
	<-done
	tmps, err := filepath.Glob(filepath.Join(dir, "blobs", "sha256", ".tmp-*"))
	require.NoError(t, err)
	require.NotEmpty(t, tmps, "a killed run leaves its partial blob")
	r = o.Run("alpha", "mirror", "--use-http", catalog, "--to-dir", dir)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	for _, tmp := range tmps {
		assert.NoFileExists(t, tmp, "removed however fresh")
	}
}
