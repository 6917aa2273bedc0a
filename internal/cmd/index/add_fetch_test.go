package index_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/registrytest"
)

// gate sits in front of the registry. Once armed, it holds every blob
// download of a bundle repository until the registry has been asked for
// the index's database layer (or until patience runs out), and records
// which happened: a run that fetches the bundles first and opens the base
// after would never release them.
type gate struct {
	next     http.Handler
	mu       sync.Mutex
	armed    bool
	dbBlob   string        // path of the database layer's blob
	dbAsked  chan struct{} // closed when dbBlob is requested
	held     int           // bundle blob requests held
	released int           // of those, released by the database request
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	armed, dbBlob, asked := g.armed, g.dbBlob, g.dbAsked
	g.mu.Unlock()
	if armed && r.Method == http.MethodGet {
		switch {
		case r.URL.Path == dbBlob:
			g.mu.Lock()
			select {
			case <-asked:
			default:
				close(asked)
			}
			g.mu.Unlock()
		case strings.Contains(r.URL.Path, "-bundle/blobs/"):
			g.mu.Lock()
			g.held++
			g.mu.Unlock()
			select {
			case <-asked:
				g.mu.Lock()
				g.released++
				g.mu.Unlock()
			case <-time.After(15 * time.Second):
			}
		}
	}
	g.next.ServeHTTP(w, r)
}

func (g *gate) arm(dbBlob string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed, g.dbBlob, g.dbAsked, g.held, g.released = true, dbBlob, make(chan struct{}), 0, 0
}

// index add --from-index fetches the base's database while the bundles
// are being fetched, not after.
func TestIndexAddFetchesBaseWhileBundles(t *testing.T) {
	t.Parallel()
	needCorpus(t)
	o := cmdtest.New(t)
	r := registrytest.Start(t)
	target, err := url.Parse(r.URL())
	require.NoError(t, err)
	g := &gate{next: httputil.NewSingleHostReverseProxy(target)}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	c := testClient(t)

	pushImage(t, c, fakeBinaryImage(t, image.Platform{OS: "linux", Architecture: "amd64"}), addr+"/opm:fake")
	first := pushBundles(t, c, addr, "etcd", "0.6.1")
	more := pushBundles(t, c, addr, "etcd", "0.9.0", "0.9.2")
	// The first index is written from another home: this one's database
	// cache would otherwise hold its database, and nothing be fetched.
	res := cmdtest.New(t).Run("index", "add", "--use-http", "-b", first[0], "-i", addr+"/opm:fake", "-t", addr+"/idx:0")
	require.Equal(t, 0, res.Code, res.ErrOut)
	layers := layerDigests(t, c, addr+"/idx:0")

	g.arm("/v2/idx/blobs/" + layers[len(layers)-1])
	res = o.Run("index", "add", "--use-http", "-b", strings.Join(more, ","), "-f", addr+"/idx:0", "-t", addr+"/idx:1")
	require.Equal(t, 0, res.Code, res.ErrOut)
	g.mu.Lock()
	defer g.mu.Unlock()
	require.NotZero(t, g.held, "no bundle blob was downloaded")
	assert.Equal(t, g.held, g.released,
		"%d of %d bundle blob downloads were still waiting when the base's database was fetched; the rest had to give up waiting (the base was opened only after the bundles)", g.released, g.held)
}

// One index add run asks a registry's credential helper once, for the
// index image and every bundle alike.
func TestIndexAddCredentialHelperOncePerRun(t *testing.T) {
	t.Parallel()
	needCorpus(t)
	r := registrytest.Start(t, registrytest.WithAuth("alice", "s3cret-pw"))
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	helper := fmt.Sprintf("#!/bin/sh\n[ \"$1\" = get ] || exit 1\nread server\necho \"$server\" >> %q\n"+
		"printf '{\"ServerURL\":\"%%s\",\"Username\":\"alice\",\"Secret\":\"s3cret-pw\"}\\n' \"$server\"\n", calls)
	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "docker-credential-xyz"), []byte(helper), 0o755))
	auth := filepath.Join(dir, "auth.json")
	require.NoError(t, os.WriteFile(auth, []byte(`{"credHelpers":{"`+r.Addr+`":"xyz"}}`), 0o600))

	// Set up with a client of its own (credentials from a file).
	setupAuth := r.WriteAuthFile(t, filepath.Join(dir, "setup.json"), "", "alice", "s3cret-pw")
	c, err := image.NewClient(image.Options{AuthFile: setupAuth, CAFile: r.CAFile})
	require.NoError(t, err)
	pushImage(t, c, fakeBinaryImage(t, image.Platform{OS: "linux", Architecture: "amd64"}), r.Ref("opm:fake"))
	first := pushBundles(t, c, r.Addr, "etcd", "0.6.1", "0.9.0")
	more := pushBundles(t, c, r.Addr, "etcd", "0.9.2", "0.9.4")

	o := cmdtest.New(t)
	o.Dir = t.TempDir()
	o.ProcEnv["PATH"] = bin + string(os.PathListSeparator) + os.Getenv("PATH")
	o.ProcEnv["TMPDIR"] = t.TempDir()
	count := func() int {
		raw, err := os.ReadFile(calls)
		if os.IsNotExist(err) {
			return 0
		}
		require.NoError(t, err)
		for _, l := range strings.Fields(string(raw)) {
			require.Equal(t, r.Addr, l, "the helper was asked about another server")
		}
		return len(strings.Fields(string(raw)))
	}
	flags := []string{"--authfile", auth, "--ca-file", r.CAFile}
	res := o.Run(append([]string{"index", "add", "-b", strings.Join(first, ","), "-i", r.Ref("opm:fake"), "-t", r.Ref("idx:0")}, flags...)...)
	require.Equal(t, 0, res.Code, res.ErrOut)
	assert.Equal(t, 1, count(), "helper runs for a new index of two bundles")
	res = o.Run(append([]string{"index", "add", "-b", strings.Join(more, ","), "-f", r.Ref("idx:0"), "-t", r.Ref("idx:1")}, flags...)...)
	require.Equal(t, 0, res.Code, res.ErrOut)
	assert.Equal(t, 2, count(), "helper runs after a second run, from an index, of two more bundles")
}
