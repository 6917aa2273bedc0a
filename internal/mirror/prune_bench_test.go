package mirror

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
}

func (p *slowProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.requests.Add(1)
	time.Sleep(p.delay)
	p.next.ServeHTTP(w, r)
}

// BenchmarkPruneLatency: prune (a dry run) of 400 images in 80
// repositories, half of them indexes of two platforms, half kept by a
// report (some of them also tagged), half tagged and unneeded, at a
// registry behind a proxy that adds 20 ms to every request, read 1 and
// 8 requests at a time. The listing is the same at both (checked).
//
//	go test -tags "$T" -run '^$' -bench PruneLatency -benchtime 1x ./internal/mirror/
func BenchmarkPruneLatency(b *testing.B) {
	const images, repos = 400, 80
	dst := registrytest.Start(b)
	target, err := url.Parse(dst.URL())
	if err != nil {
		b.Fatal(err)
	}
	proxy := &slowProxy{next: httputil.NewSingleHostReverseProxy(target), delay: 20 * time.Millisecond}
	srv := httptest.NewServer(proxy)
	b.Cleanup(srv.Close)
	to := strings.TrimPrefix(srv.URL, "http://") + "/m"

	kept := &Report{To: to, Images: []Result{}}
	for k := range images {
		repo, err := name.NewRepository(fmt.Sprintf("%s/m/p/r%02d", dst.Addr, k%repos), name.Insecure)
		if err != nil {
			b.Fatal(err)
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
				b.Fatal(err)
			}
			h, _ := idx.Digest()
			d = h.String()
			if err := remote.WriteIndex(ref(d), idx); err != nil {
				b.Fatal(err)
			}
		} else {
			img, err := random.Image(256, 1)
			if err != nil {
				b.Fatal(err)
			}
			h, _ := img.Digest()
			d = h.String()
			if err := remote.Write(ref(d), img); err != nil {
				b.Fatal(err)
			}
		}
		if k%2 == 0 {
			kept.Images = append(kept.Images, Result{Item: Item{Source: fmt.Sprintf("example.com/p/r%02d@%s", k%repos, d), Role: RoleImage},
				Target: fmt.Sprintf("%s/p/r%02d@%s", to, k%repos, d), Tag: tag})
		}
	}
	raw, err := json.Marshal(kept)
	if err != nil {
		b.Fatal(err)
	}
	report := filepath.Join(b.TempDir(), "kept.json")
	if err := os.WriteFile(report, raw, 0o644); err != nil {
		b.Fatal(err)
	}

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
