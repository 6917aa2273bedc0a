package mirror

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
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
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/registrytest"
)

// slowProxy passes requests on after delay, as a registry far away
// answers, and counts them.
type slowProxy struct {
	next     http.Handler
	delay    time.Duration
	requests atomic.Int64
	// seen, when set, is told of each request, numbered from 1.
	seen func(n int64)
}

func (p *slowProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := p.requests.Add(1)
	if p.seen != nil {
		p.seen(n)
	}
	time.Sleep(p.delay)
	p.next.ServeHTTP(w, r)
}

// registryToPrune is a registry holding images in repos repositories,
// half of them indexes of two platforms, even ones kept by the report
// it returns, odd ones tagged and unneeded, behind a proxy that delays
// each request; to is the proxy's --to.
func registryToPrune(tb testing.TB, images, repos int, delay time.Duration) (proxy *slowProxy, to, report string) {
	tb.Helper()
	dst := registrytest.Start(tb)
	target, err := url.Parse(dst.URL())
	if err != nil {
		tb.Fatal(err)
	}
	next := httputil.NewSingleHostReverseProxy(target)
	next.ErrorLog = log.New(io.Discard, "", 0) // the requests a cancelled run drops
	proxy = &slowProxy{next: next, delay: delay}
	srv := httptest.NewServer(proxy)
	tb.Cleanup(srv.Close)
	to = strings.TrimPrefix(srv.URL, "http://") + "/m"

	kept := &Report{To: to, Images: []Result{}}
	for k := range images {
		repo, err := name.NewRepository(fmt.Sprintf("%s/m/p/r%02d", dst.Addr, k%repos), name.Insecure)
		if err != nil {
			tb.Fatal(err)
		}
		// Even k are kept, odd k tagged and unneeded; every fourth is
		// an index, some kept ones are tagged too.
		var d, tag string
		if k%2 == 1 {
			tag = fmt.Sprintf("old-%d", k)
		} else if k%10 == 2 {
			tag = fmt.Sprintf("t-%d", k)
		}
		ref := func(d string) name.Reference {
			if tag != "" {
				return repo.Tag(tag)
			}
			return repo.Digest(d)
		}
		if k%4 < 2 {
			idx, err := random.Index(256, 1, 2)
			if err != nil {
				tb.Fatal(err)
			}
			h, _ := idx.Digest()
			d = h.String()
			if err := remote.WriteIndex(ref(d), idx); err != nil {
				tb.Fatal(err)
			}
		} else {
			img, err := random.Image(256, 1)
			if err != nil {
				tb.Fatal(err)
			}
			h, _ := img.Digest()
			d = h.String()
			if err := remote.Write(ref(d), img); err != nil {
				tb.Fatal(err)
			}
		}
		if k%2 == 0 {
			kept.Images = append(kept.Images, Result{Item: Item{Source: fmt.Sprintf("example.com/p/r%02d@%s", k%repos, d), Role: RoleImage},
				Target: fmt.Sprintf("%s/p/r%02d@%s", to, k%repos, d), Tag: tag})
		}
	}
	raw, err := json.Marshal(kept)
	if err != nil {
		tb.Fatal(err)
	}
	report = filepath.Join(tb.TempDir(), "kept.json")
	if err := os.WriteFile(report, raw, 0o644); err != nil {
		tb.Fatal(err)
	}

	return proxy, to, report
}

// BenchmarkPruneLatency: prune (a dry run) of 400 images in 80
// repositories, half of them indexes of two platforms, half kept by a
// report (some of them also tagged), half tagged and unneeded, at a
// registry behind a proxy that adds 20 ms to every request, read 1 and
// 8 requests at a time. The listing is the same at both (checked).
//
//	go test -tags "$T" -run '^$' -bench PruneLatency -benchtime 1x ./internal/mirror/
func BenchmarkPruneLatency(b *testing.B) {
	proxy, to, report := registryToPrune(b, 400, 80, 20*time.Millisecond)
	var first []byte
	for _, c := range []int{1, 8} {
		b.Run(fmt.Sprintf("concurrency=%d", c), func(b *testing.B) {
			var requests int64
			var rep *PruneReport
			for b.Loop() {
				cl, err := image.NewClient(image.Options{UseHTTP: true})
				if err != nil {
					b.Fatal(err)
				}
				before := proxy.requests.Load()
				rep, err = Prune(context.Background(), cl, PruneOptions{To: to, Keep: []string{report}, Concurrency: c,
					Images: func(context.Context, string) ([]catalogimages.Image, error) { return nil, nil }})
				if err != nil {
					b.Fatal(err)
				}
				requests = proxy.requests.Load() - before
			}
			got, err := json.Marshal(rep)
			if err != nil {
				b.Fatal(err)
			}
			if first == nil {
				first = got
			} else if !bytes.Equal(first, got) {
				b.Fatalf("concurrency %d lists otherwise:\n%s\nthan 1:\n%s", c, got, first)
			}
			b.ReportMetric(float64(requests), "requests/op")
			b.ReportMetric(float64(len(rep.Unneeded)), "unneeded")
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
		})
	}
}

// TestPruneCancelled: a run cancelled while it reads the registry stops
// at once (the requests already sent finish, no more start) and says
// that nothing was deleted.
func TestPruneCancelled(t *testing.T) {
	t.Parallel()
	proxy, to, report := registryToPrune(t, 60, 12, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var atCancel atomic.Int64
	proxy.seen = func(n int64) {
		if n == 40 {
			cancel()
			atCancel.Store(n)
		}
	}
	cl, err := image.NewClient(image.Options{UseHTTP: true})
	require.NoError(t, err)
	rep, err := Prune(ctx, cl, PruneOptions{To: to, Keep: []string{report}, Concurrency: 8, Confirm: true,
		Images: func(context.Context, string) ([]catalogimages.Image, error) { return nil, nil }})
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, ErrNothingDeleted)
	require.NotNil(t, rep)
	assert.Zero(t, rep.Deleted)
	assert.Empty(t, rep.Unneeded, "nothing is listed from a run cut short")
	after := proxy.requests.Load() - atCancel.Load()
	t.Logf("%d requests in all, %d after the cancel: %v", proxy.requests.Load(), after, err)
	assert.LessOrEqual(t, after, int64(8), "only requests already on their way arrive after the cancel")
}
