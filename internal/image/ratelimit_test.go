package image

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 7, 20, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1", time.Second, true},
		{" 0 ", 0, true},
		{"59", 59 * time.Second, true},
		{"60", MaxRetryAfter, true},
		{"3600", MaxRetryAfter, true},
		{"99999999999999999999", 0, false}, // overflows: not a number opm can read
		{"-1", 0, false},
		{"", 0, false},
		{"soon", 0, false},
		{"1.5", 0, false},
		{now.Add(5 * time.Second).Format(http.TimeFormat), 5 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true}, // past: now
		{now.Add(time.Hour).Format(http.TimeFormat), MaxRetryAfter, true},
		{now.Add(5 * time.Second).Format(time.RFC850), 5 * time.Second, true},
	} {
		got, ok := retryAfter(c.in, now)
		assert.Equal(t, c.ok, ok, "%q", c.in)
		assert.Equal(t, c.want, got, "%q", c.in)
	}
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"1", "0", "120", "-5", "Mon, 07 Dec 2026 20:00:05 GMT", "Monday, 07-Dec-26 20:00:05 GMT", "Mon Dec  7 20:00:05 2026", "x"} {
		f.Add(s)
	}
	now := time.Date(2026, 12, 7, 20, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := retryAfter(s, now)
		if !ok && d != 0 {
			t.Fatalf("%q: unreadable but %s", s, d)
		}
		if d < 0 || d > MaxRetryAfter {
			t.Fatalf("%q: wait %s outside [0, %s]", s, d, MaxRetryAfter)
		}
	})
}

// limitedRegistry answers a status with a Retry-After header (when set)
// to the first limit requests, then passes them to a registry.
type limitedRegistry struct {
	next       http.Handler
	status     int
	retryAfter string
	noHeader   atomic.Bool
	limit      atomic.Int64
	n, passed  atomic.Int64
}

func (l *limitedRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if l.n.Add(1) <= l.limit.Load() {
		if !l.noHeader.Load() {
			w.Header().Set("Retry-After", l.retryAfter)
		}
		w.WriteHeader(l.status)
		return
	}
	l.passed.Add(1)
	l.next.ServeHTTP(w, r)
}

// TestRateLimitWaits: 429 and 503 with Retry-After are waited out
// without counting against Retries (a pull with no retries at all goes
// through, and a push whose body must be sent again too), up to
// MaxRateLimitWaits for one request; without Retry-After they are
// failures as before.
func TestRateLimitWaits(t *testing.T) {
	isolateCredentials(t)
	ctx := context.Background()
	img, _ := BuildBundleImage(testBundle(), testLabels())
	start := func(status int, retryAfter string, limit int64) (*limitedRegistry, string) {
		reg := &limitedRegistry{next: registry.New(registry.Logger(discardLogger())), status: status, retryAfter: retryAfter}
		reg.limit.Store(limit)
		srv := httptest.NewServer(reg)
		t.Cleanup(srv.Close)
		return reg, strings.TrimPrefix(srv.URL, "http://")
	}
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		reg, host := start(status, "0", 0)
		ref := mustRef(t, host+"/p/bundle:1")
		c := mustClient(t, Options{UseHTTP: true, Retries: -1})
		_, err := c.Write(ctx, img, ref)
		require.NoError(t, err)

		// Every request of the pull and the push is answered status once.
		reg.n.Store(0)
		reg.limit.Store(MaxRateLimitWaits)
		limits := &RateLimits{}
		var warned []string
		c = mustClient(t, Options{UseHTTP: true, Retries: -1, RateLimits: limits, Warn: func(m string) { warned = append(warned, m) }})
		_, err = c.Open(ctx, ref)
		require.NoError(t, err, "%d", status)
		n, _ := limits.Waits()
		assert.Equal(t, MaxRateLimitWaits, n, "%d: each answer waited out", status)
		require.Len(t, warned, 1, "%d: said once", status)
		assert.Contains(t, warned[0], host)
		assert.Contains(t, warned[0], "not counted against --retries")

		reg.n.Store(0)
		reg.limit.Store(MaxRateLimitWaits)
		_, err = c.Write(ctx, img, mustRef(t, host+"/p/again:1"))
		require.NoError(t, err, "%d: a push's manifest is sent again", status)

		// One answer more than the waits allowed: a failure, which
		// Retries would have retried.
		reg.n.Store(0)
		reg.limit.Store(MaxRateLimitWaits + 1)
		c = mustClient(t, Options{UseHTTP: true, Retries: -1})
		_, err = c.Open(ctx, ref)
		require.Error(t, err, "%d", status)
		assert.Equal(t, int64(MaxRateLimitWaits+1), reg.n.Load(), "%d: asked again as many times as allowed", status)

		// Without Retry-After: a failure at once.
		reg.noHeader.Store(true)
		reg.n.Store(0)
		reg.limit.Store(1)
		_, err = c.Open(ctx, ref)
		require.Error(t, err, "%d", status)
		assert.Equal(t, int64(1), reg.n.Load(), "%d: no Retry-After, no wait", status)
	}
}
