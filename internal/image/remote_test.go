package image

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

// recorder wraps a handler and keeps "METHOD PATH?QUERY" of every request.
type recorder struct {
	mu   sync.Mutex
	reqs []string
	next http.Handler
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req.Method+" "+req.URL.RequestURI())
	r.mu.Unlock()
	r.next.ServeHTTP(w, req)
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reqs
	r.reqs = nil
	return out
}

func recordedRegistry(t *testing.T) (string, *recorder) {
	rec := &recorder{next: registry.New(registry.Logger(discardLogger()))}
	s := httptest.NewServer(rec)
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://"), rec
}

func matching(reqs []string, method, substr string) []string {
	var out []string
	for _, r := range reqs {
		if strings.HasPrefix(r, method+" ") && strings.Contains(r, substr) {
			out = append(out, r)
		}
	}
	return out
}

// TestPushSkipsExistingBlobs: a second push of the same image uploads nothing.
func TestPushSkipsExistingBlobs(t *testing.T) {
	ctx := context.Background()
	addr, rec := recordedRegistry(t)
	c := mustClient(t, Options{UseHTTP: true})
	img, _ := BuildBundleImage(testBundle(), testLabels())
	if _, err := c.Write(ctx, img, mustRef(t, addr+"/b:1")); err != nil {
		t.Fatal(err)
	}
	if ups := matching(rec.take(), "POST", "/blobs/uploads/"); len(ups) != 2 {
		t.Errorf("first push: %d uploads, want 2 (layer, config)", len(ups))
	}
	if _, err := c.Write(ctx, img, mustRef(t, addr+"/b:2")); err != nil {
		t.Fatal(err)
	}
	reqs := rec.take()
	if ups := matching(reqs, "POST", "/blobs/uploads/"); len(ups) != 0 {
		t.Errorf("second push uploaded again: %v", ups)
	}
	if heads := matching(reqs, "HEAD", "/blobs/sha256:"); len(heads) == 0 {
		t.Errorf("second push made no existence check: %v", reqs)
	}
}

// TestAppendLayerMountsBaseLayers is the index-add shape: read manifest and
// config of a base image, add one layer, push to another repository. Base
// layers are mounted, never downloaded.
func TestAppendLayerMountsBaseLayers(t *testing.T) {
	ctx := context.Background()
	addr, rec := recordedRegistry(t)
	c := mustClient(t, Options{UseHTTP: true})

	lb := NewLayerBuilder()
	lb.AddFile("bin/opm", []byte("pretend binary"))
	binLayer, _ := lb.Layer()
	base, err := NewImage(ImageConfig{Labels: map[string]string{"base": "yes"}, Entrypoint: []string{"/bin/opm"}}, binLayer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(ctx, base, mustRef(t, addr+"/opm-base:latest")); err != nil {
		t.Fatal(err)
	}
	rec.take()

	im, err := c.Open(ctx, mustRef(t, addr+"/opm-base:latest"))
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	db := NewLayerBuilder()
	db.AddFile("database/index.db", []byte("sqlite"))
	dbLayer, _ := db.Layer()
	out, err := AppendLayer(im.V1Image(ctx), dbLayer, map[string]string{"operators.operatorframework.io.index.database.v1": "/database/index.db"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(ctx, out, mustRef(t, addr+"/index:v1")); err != nil {
		t.Fatal(err)
	}
	reqs := rec.take()
	binDigest, _ := binLayer.Digest()
	if got := matching(reqs, "GET", binDigest.String()); len(got) != 0 {
		t.Errorf("base layer downloaded: %v", got)
	}
	// This in-process registry shares blobs between repositories, so the HEAD
	// check finds the base layer; the real registry test checks the mount.
	if got := matching(reqs, "PUT", "digest="+strings.ReplaceAll(binDigest.String(), ":", "%3A")); len(got) != 0 {
		t.Errorf("base layer uploaded: %v", got)
	}

	res, err := c.Open(ctx, mustRef(t, addr+"/index:v1"))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	l := res.Labels()
	if l["base"] != "yes" || l["operators.operatorframework.io.index.database.v1"] != "/database/index.db" {
		t.Errorf("labels %v", l)
	}
	data, layer, err := res.FindFile(ctx, "database/index.db")
	if err != nil || string(data) != "sqlite" || layer != 1 {
		t.Errorf("FindFile = %q, %d, %v", data, layer, err)
	}
	if reqs := rec.take(); len(matching(reqs, "GET", binDigest.String())) != 0 {
		t.Errorf("FindFile read the base layer: %v", reqs)
	}
	f, err := res.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if b, _ := f.ReadFile("bin/opm"); string(b) != "pretend binary" {
		t.Errorf("bin/opm = %q", b)
	}
}

// flaky fails the first n requests for blobs with status, counting the
// requests for each blob.
type flaky struct {
	n      atomic.Int32
	status int
	next   http.Handler

	mu    sync.Mutex
	tries map[string]int
}

// mostTries is the most requests any one blob had.
func (f *flaky) mostTries() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	most := 0
	for _, n := range f.tries {
		most = max(most, n)
	}
	return most
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.Contains(r.URL.Path, "/blobs/") {
		f.mu.Lock()
		if f.tries == nil {
			f.tries = map[string]int{}
		}
		f.tries[r.Method+" "+r.URL.Path]++
		f.mu.Unlock()
	}
	if strings.Contains(r.URL.Path, "/blobs/") && f.n.Add(-1) >= 0 {
		if f.status == 0 { // drop the connection mid-request
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.Close()
			return
		}
		w.WriteHeader(f.status)
		return
	}
	f.next.ServeHTTP(w, r)
}

func TestRetries(t *testing.T) {
	ctx := context.Background()
	img, _ := BuildBundleImage(testBundle(), testLabels())
	for _, tc := range []struct {
		name     string
		status   int
		failures int32
		ok       bool
	}{
		{"503 twice", http.StatusServiceUnavailable, 2, true},
		{"429 once", http.StatusTooManyRequests, 1, true},
		{"connection reset", 0, 1, true},
		{"500 forever", http.StatusInternalServerError, 1000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fl := &flaky{status: tc.status, next: registry.New(registry.Logger(discardLogger()))}
			s := httptest.NewServer(fl)
			defer s.Close()
			addr := strings.TrimPrefix(s.URL, "http://")
			c := mustClient(t, Options{UseHTTP: true, Retries: 3, RetryDelay: 10 * time.Millisecond})
			if _, err := c.Write(ctx, img, mustRef(t, addr+"/r:1")); err != nil {
				t.Fatal(err)
			}
			fl.n.Store(tc.failures)
			fl.mu.Lock()
			fl.tries = nil // the pull's requests only
			fl.mu.Unlock()
			im, err := c.Open(ctx, mustRef(t, addr+"/r:1"))
			if err == nil {
				var f *FS
				f, err = im.FS(ctx)
				if err == nil {
					f.Close()
				}
				im.Close()
			}
			if tc.ok && err != nil {
				t.Fatalf("not retried: %v", err)
			}
			if !tc.ok && err == nil {
				t.Fatal("endless failure reported success")
			}
			// Counted, not timed (load stretches time): each blob is
			// asked for at most once and then once a retry.
			if most := fl.mostTries(); most > 1+3 {
				t.Errorf("a blob was asked for %d times with --retries 3", most)
			}
		})
	}
}

func TestCancelStopsCleanly(t *testing.T) {
	addr := localRegistry(t)
	c := mustClient(t, Options{UseHTTP: true, TempDir: t.TempDir()})
	img, _ := BuildBundleImage(testBundle(), testLabels())
	if _, err := c.Write(context.Background(), img, mustRef(t, addr+"/c:1")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Open(ctx, mustRef(t, addr+"/c:1")); !errors.Is(err, context.Canceled) {
		t.Errorf("open with cancelled context: %v", err)
	}
	dir := t.TempDir()
	if _, err := c.Write(ctx, img, mustRef(t, "oci-archive:"+dir+"/x.tar")); !errors.Is(err, context.Canceled) {
		t.Errorf("write with cancelled context: %v", err)
	}
	if _, err := c.Write(ctx, img, mustRef(t, "oci:"+dir+"/layout")); !errors.Is(err, context.Canceled) {
		t.Errorf("write layout with cancelled context: %v", err)
	}
	assertNoTemp(t, dir)
	assertNoTemp(t, c.Options().TempDir)
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	var bad []string
	walkAll(dir, func(p string) {
		base := p[strings.LastIndex(p, "/")+1:]
		if strings.HasPrefix(base, ".") || strings.HasPrefix(base, "opm-") {
			bad = append(bad, p)
		}
	})
	if len(bad) > 0 {
		t.Errorf("temporary files left: %v", bad)
	}
}
