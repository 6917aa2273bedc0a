package image

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opmkit/opm/internal/registrytest"
)

// peakHeap samples the heap until stop is called and returns the most
// seen over what it held at the start, after a collection (other tests
// of the package leave garbage): a hostile registry must not make opm
// hold what it sends. The test must not run in parallel with others.
func peakHeap() (stop func() uint64) {
	runtime.GC()
	var start runtime.MemStats
	runtime.ReadMemStats(&start)
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > start.HeapAlloc && ms.HeapAlloc-start.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc - start.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak.Load()
	}
}

// maxHostileHeap is the most heap a pull from a hostile registry may take
// (generous: a 4 MiB manifest, a 16 MiB tag page and their copies).
const maxHostileHeap = 200 << 20

// hostileOptions are small limits, and timeouts a loaded machine's real
// registry (the copies' destination) and the hostile one's sound answers
// meet: the rate is judged over 3 × 2 s.
func hostileOptions() Options {
	return Options{UseHTTP: true, Retries: 1, RetryDelay: 10 * time.Millisecond,
		ResponseTimeout: 2 * time.Second, IdleTimeout: 2 * time.Second, MaxLayerSize: 1 << 20}
}

// TestHostileRegistry (issue 35): every way a registry can try to hold
// opm forever or fill its memory or disk ends each pull, Open and its
// filesystem as render and bundle commands read it, and Copy as the
// mirror copies into a layout and into a registry, with an error naming
// what happened, in little memory, with nothing larger than the limits
// written.
func TestHostileRegistry(t *testing.T) {
	h := registrytest.StartHostile(t, registrytest.HostileOptions{SlowEvery: 20 * time.Millisecond})
	dst := registrytest.Start(t)
	cases := []struct {
		repo string
		// pull and copy are what the error says; "" when that path
		// succeeds (the tag list is read only by a copy).
		pull, copy string
	}{
		{repo: registrytest.HostileGood}, // the bounds leave a sound image alone
		{repo: registrytest.HostileManifestLoop, pull: "redirected the request for /v2/loop/manifest/manifests/1 more than 10 times", copy: "more than 10 times"},
		{repo: registrytest.HostileBlobLoop, pull: "more than 10 times", copy: "more than 10 times"},
		{repo: registrytest.HostileHugeLayer, pull: "compressed size 1.0 TiB is over the 1.0 MiB limit (--max-layer-size)",
			copy: "its manifest declares 1.0 TiB, over the 1.0 MiB limit (--max-layer-size)"},
		{repo: registrytest.HostileHugeManifest, pull: "announced a manifest of 99000000 bytes, over the 4MiB opm reads", copy: "announced a manifest"},
		{repo: registrytest.HostileHugeManifestChunked, pull: "sent a manifest larger than the 4MiB opm reads", copy: "sent a manifest larger"},
		{repo: registrytest.HostileSlowLayer, pull: "slower than the 1KiB/s of --min-transfer-rate", copy: "slower than the 1KiB/s"},
		{repo: registrytest.HostileStallLayer, pull: "sent nothing for 2s", copy: "sent nothing for 2s"},
		{repo: registrytest.HostileTagLoop, copy: "in more than 10000 pages"},
		{repo: registrytest.HostileTagBody, copy: "sent a tag list page larger than the 16MiB opm reads"},
	}
	for _, c := range cases {
		t.Run(c.repo, func(t *testing.T) {
			// Generous: each case ends in a few seconds; this only
			// keeps a regression from hanging the test run.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cl := mustClient(t, hostileOptions())
			ref := mustRef(t, h.Ref(c.repo))
			expect := func(what, want string, err error) {
				t.Helper()
				if ctx.Err() != nil {
					t.Fatalf("%s: still running at the outer deadline: %v", what, err)
				}
				if want == "" {
					if err != nil {
						t.Errorf("%s: %v", what, err)
					}
					return
				}
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%s: got %v, want an error saying %q", what, err, want)
					return
				}
				t.Logf("%s: %v", what, err)
			}

			stop := peakHeap()
			var err error
			if im, oerr := cl.Open(ctx, ref); oerr != nil {
				err = oerr
			} else {
				f, ferr := im.FS(ctx)
				if ferr == nil {
					_ = f.Close()
				}
				_ = im.Close()
				err = ferr
			}
			expect("pull", c.pull, err)

			dir := filepath.Join(t.TempDir(), "layout")
			cp := cl.NewCopier()
			_, err = cp.Copy(ctx, ref, Ref{Transport: TransportOCI, Path: dir, Tag: "x"}, CopyOptions{Referrers: true})
			_ = cp.Close()
			expect("copy to a layout", c.copy, err)
			largest := int64(0)
			_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
				if err != nil {
					return nil // the copy failed before the layout was made
				}
				if info, err := d.Info(); err == nil && !d.IsDir() {
					largest = max(largest, info.Size())
				}
				return nil
			})
			if largest > 1<<20 {
				t.Errorf("copy to a layout: wrote a file of %d bytes, over --max-layer-size", largest)
			}

			// The tag list is read alike whatever the destination: once.
			if !strings.HasPrefix(c.repo, "tags/") {
				cp = cl.NewCopier()
				_, err = cp.Copy(ctx, ref, mustRef(t, dst.Addr+"/"+c.repo), CopyOptions{Referrers: true, Tag: "1"})
				expect("copy to a registry", c.copy, err)
				if err != nil && strings.Contains(err.Error(), "registry "+dst.Addr) {
					t.Errorf("copy to a registry: %v blames the destination for the source's fault", err)
				}
				if c.repo == registrytest.HostileHugeLayer {
					resp, err := http.Head(dst.URL() + "/v2/" + c.repo + "/blobs/" + registrytest.HugeLayerDigest)
					if err != nil || resp.StatusCode != http.StatusNotFound {
						t.Errorf("copy to a registry: the 1 TiB layer is at the destination (%v, %v)", resp, err)
					}
				}
			}
			if peak := stop(); peak > maxHostileHeap {
				t.Errorf("peak heap %d MB, over %d MB", peak>>20, maxHostileHeap>>20)
			} else {
				t.Logf("peak heap %d MB", peak>>20)
			}
		})
	}
	t.Logf("the registry sent %d MB in %d requests", h.Sent.Load()>>20, h.Requests.Load())
}

// TestHostileTagPagesBounded: a Link loop is followed for exactly the
// page limit (the first page and the maxTagPages-1 after it), not one
// page more, once per attempt.
func TestHostileTagPagesBounded(t *testing.T) {
	h := registrytest.StartHostile(t, registrytest.HostileOptions{})
	cl := mustClient(t, hostileOptions())
	cp := cl.NewCopier()
	_, err := cp.Copy(context.Background(), mustRef(t, h.Ref(registrytest.HostileTagPages)),
		Ref{Transport: TransportOCI, Path: t.TempDir(), Tag: "x"}, CopyOptions{Referrers: true})
	if err == nil || !strings.Contains(err.Error(), "more than 10000 pages") {
		t.Fatalf("got %v, want the page limit", err)
	}
	if n := h.TagPages.Load(); n != maxTagPages {
		t.Errorf("%d pages served, want %d", n, maxTagPages)
	}
}

// TestTooSlowIsRetried: a crawling body is retried (and a blob resumed)
// as a stalled one is; a body over its limit or a redirect loop is not.
func TestTooSlowIsRetried(t *testing.T) {
	if !resumable(&errTooSlow{}) || !retryable(&errTooSlow{}) || !bodyBroke(&errTooSlow{}) {
		t.Error("a too-slow body is not retried")
	}
	if retryable(&errTooLarge{}) || resumable(&errRedirects{}) {
		t.Error("a body over its limit or a redirect loop is retried")
	}
}

// TestMinTransferRate: a body just above the rate passes; the same body
// under a rate set above it fails and is retried; 0 turns the check off.
func TestMinTransferRateFlag(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{{"1KiB", 1 << 10}, {"10KiB/s", 10 << 10}, {"0", -1}, {"512", 512}} {
		var o Options
		if err := (rateFlag{&o}).Set(c.in); err != nil || o.MinTransferRate != c.want {
			t.Errorf("%q: got %d, %v; want %d", c.in, o.MinTransferRate, err, c.want)
		}
	}
	var o Options
	if err := (rateFlag{&o}).Set("fast"); err == nil || !strings.Contains(err.Error(), "such as 1KiB") {
		t.Errorf("a bad rate: %v", err)
	}
	if err := o.Validate(); err != nil || o.MinTransferRate != DefaultMinTransferRate {
		t.Errorf("default: %d, %v", o.MinTransferRate, err)
	}
	if rate, window := o.minRate(); rate != 1<<10 || window != 30*time.Second {
		t.Errorf("default rate %d over %s, want 1KiB/s over 30s", rate, window)
	}
}

// TestSlowLayerWithoutRate: with the rate check off, the slow layer is
// only stopped by the caller: the check, not something else, ended it.
func TestSlowLayerWithoutRate(t *testing.T) {
	h := registrytest.StartHostile(t, registrytest.HostileOptions{SlowEvery: 20 * time.Millisecond})
	o := hostileOptions()
	o.MinTransferRate = -1
	cl := mustClient(t, o)
	// The deadline is the layer's only: a loaded machine may take long
	// to open the image.
	im, err := cl.Open(context.Background(), mustRef(t, h.Ref(registrytest.HostileSlowLayer)))
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = im.FS(ctx)
	if !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Fatalf("got %v, want the caller's deadline", err)
	}
}

// TestRequestBound: the longest a request may take, which holds the
// signature reading containers/image does with its own client: with the
// defaults 4 attempts of 10 s for an answer and 40 s of body, plus 3 s
// of backoff.
func TestRequestBound(t *testing.T) {
	var o Options
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if got, want := o.requestBound(), 4*(10+40)*time.Second+(200+400+800)*time.Millisecond+1600*time.Millisecond; got != want {
		t.Errorf("default bound %s, want %s", got, want)
	}
	o.Retries = -1
	if got := o.requestBound(); got != 50*time.Second+200*time.Millisecond {
		t.Errorf("no retries: %s", got)
	}
}
