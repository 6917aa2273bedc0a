package image

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// A registry that answers 429 Too Many Requests or 503 Service
// Unavailable with a Retry-After header is not failing: it says when to
// come back. opm waits that long (at most MaxRetryAfter) and asks again,
// up to MaxRateLimitWaits times for one request, without counting the
// answer against --retries. Without Retry-After, or past those bounds,
// the answer is a failure like any 5xx, retried with backoff under
// --retries.
const (
	// MaxRetryAfter caps one wait: a registry cannot hold a pull for an
	// hour by asking.
	MaxRetryAfter = 60 * time.Second
	// MaxRateLimitWaits caps the waits of one request, so that a registry
	// answering 429 forever fails a request within MaxRateLimitWaits ×
	// MaxRetryAfter (10 minutes), not never.
	MaxRateLimitWaits = 10
)

// retryAfter reads a Retry-After value, delay-seconds or an HTTP date, as
// a wait from now, capped at MaxRetryAfter; ok is false when there is
// none or it cannot be read.
func retryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		if n >= int64(MaxRetryAfter/time.Second) {
			return MaxRetryAfter, true
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), MaxRetryAfter), true
}

// rateLimitWait repeats a request a registry answered 429 or 503 with
// Retry-After, after the wait it asked for.
type rateLimitWait struct {
	host string
	c    *Client
	next http.RoundTripper
}

func (w rateLimitWait) RoundTrip(req *http.Request) (*http.Response, error) {
	for waits := 0; ; waits++ {
		resp, err := w.next.RoundTrip(req)
		if err != nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable) {
			return resp, err
		}
		d, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now())
		// A body already sent cannot be sent again unless the request
		// says how (GetBody): such an answer goes to the usual retries.
		again := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
		if !ok || !again || waits >= MaxRateLimitWaits {
			return resp, err
		}
		// The answer's body is a short error document; read a little of
		// it so the connection can be reused.
		_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
		_ = resp.Body.Close()
		w.c.rateLimited(w.host, resp.StatusCode, d)
		t := time.NewTimer(d)
		select {
		case <-req.Context().Done():
			t.Stop()
			return nil, req.Context().Err()
		case <-t.C:
		}
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
	}
}

// RateLimits counts the waits registries asked for (429 or 503 with
// Retry-After), for a progress line and a report; clients made from
// copies of the same options share it.
type RateLimits struct {
	waits, waited atomic.Int64
}

// Waits returns how many times a registry asked opm to wait, and for how
// long in all.
func (r *RateLimits) Waits() (n int, total time.Duration) {
	if r == nil {
		return 0, 0
	}
	return int(r.waits.Load()), time.Duration(r.waited.Load())
}

// Note is what a progress or summary line adds for the waits ("" when
// none).
func (r *RateLimits) Note() string {
	n, d := r.Waits()
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", waited %d times (%s) as registries asked (429/503 Retry-After)", n, d.Round(time.Second))
}

func (r *RateLimits) add(d time.Duration) {
	r.waits.Add(1)
	r.waited.Add(int64(d))
}

// rateLimited tells the user once per registry and answer that opm waits,
// and counts the wait.
func (c *Client) rateLimited(host string, status int, d time.Duration) {
	if c.opts.RateLimits != nil {
		c.opts.RateLimits.add(d)
	}
	c.warn(fmt.Sprintf("registry %s answered %d %s with Retry-After: waiting as it asks (each wait at most %s, %d for one request; not counted against --%s)",
		host, status, http.StatusText(status), MaxRetryAfter, MaxRateLimitWaits, FlagRetries))
}
