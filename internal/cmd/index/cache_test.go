package index_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/registrytest"
)

// blobGets counts the GETs of each blob path through it.
type blobGets struct {
	next http.Handler
	mu   sync.Mutex
	n    map[string]int
}

func (b *blobGets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
		b.mu.Lock()
		b.n[r.URL.Path]++
		b.mu.Unlock()
	}
	b.next.ServeHTTP(w, r)
}

// An add onto the index image the same home wrote last takes the database
// from the cache: its database layer is not downloaded, and the image is
// the one an add from another home (which downloads it) writes.
func TestIndexAddDatabaseCache(t *testing.T) {
	t.Parallel()
	needCorpus(t)
	o := cmdtest.New(t)
	r := registrytest.Start(t)
	target, err := url.Parse(r.URL())
	require.NoError(t, err)
	gets := &blobGets{next: httputil.NewSingleHostReverseProxy(target), n: map[string]int{}}
	srv := httptest.NewServer(gets)
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	c := testClient(t)

	pushImage(t, c, fakeBinaryImage(t, image.Platform{OS: "linux", Architecture: "amd64"}), addr+"/opm:fake")
	first := pushBundles(t, c, addr, "etcd", "0.6.1")
	more := pushBundles(t, c, addr, "etcd", "0.9.0")
	res := o.Run("index", "add", "--use-http", "-b", first[0], "-i", addr+"/opm:fake", "-t", addr+"/idx:0")
	require.Equal(t, 0, res.Code, res.ErrOut)
	layers := layerDigests(t, c, addr+"/idx:0")
	dbBlob := "/v2/idx/blobs/" + layers[len(layers)-1]

	res = o.Run("index", "add", "--use-http", "-b", more[0], "-f", addr+"/idx:0", "-t", addr+"/idx:1", "-o", "json")
	require.Equal(t, 0, res.Code, res.ErrOut)
	gets.mu.Lock()
	assert.Zero(t, gets.n[dbBlob], "the database layer the same home wrote was downloaded")
	gets.mu.Unlock()

	other := cmdtest.New(t).Run("index", "add", "--use-http", "-b", more[0], "-f", addr+"/idx:0", "-t", addr+"/idx:2", "-o", "json")
	require.Equal(t, 0, other.Code, other.ErrOut)
	gets.mu.Lock()
	assert.Equal(t, 1, gets.n[dbBlob], "an add from another home downloads the database layer once")
	gets.mu.Unlock()
	assert.Equal(t, layerDigests(t, c, addr+"/idx:2"), layerDigests(t, c, addr+"/idx:1"), "the cache changed the image written")
}
