package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/opmkit/opm/internal/bytesize"
)

// stallGuard fails a response body that sends nothing for idle: a registry
// (or a proxy) that stops mid-body would otherwise hold opm forever, since
// http.Transport bounds only the wait for headers.
//
// It also names a registry that keeps opm waiting for an answer: after
// half of wait (at most maxSilence) it says once, through note, which
// registry opm is waiting for; and a wait that runs out is an
// errNoAnswer naming the registry and the flag.
//
// A body that keeps sending, but slower than rate bytes a second over a
// window of time spent waiting for it, fails too (errTooSlow): a registry
// sending a byte every few seconds never stalls, and would hold opm for
// months on one layer.
type stallGuard struct {
	host string
	idle time.Duration
	wait time.Duration
	// rate is the slowest transfer accepted, in bytes a second, over
	// window; 0 accepts any.
	rate   int64
	window time.Duration
	note   func(string)
	next   http.RoundTripper
}

// maxSilence is the longest a wait on a registry goes unmentioned.
const maxSilence = 5 * time.Second

func (g *stallGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	var noted *time.Timer
	// An upload's time goes into sending its body, which is not waiting
	// for the registry: only requests without one are named.
	if g.note != nil && g.wait > 0 && (req.Body == nil || req.Body == http.NoBody) {
		noted = time.AfterFunc(min(g.wait/2, maxSilence), func() {
			g.note(fmt.Sprintf("waiting for %s to answer (each attempt gives up after %s: --%s, --%s)", g.host, g.wait, FlagTimeout, FlagRetries))
		})
	}
	resp, err := g.next.RoundTrip(req.WithContext(ctx))
	if noted != nil {
		noted.Stop()
	}
	if err != nil {
		cancel()
		if bodyBroke(err) {
			// The request's body (a blob streamed from a source
			// registry) broke off: the source's fault, said as is.
			return nil, err
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && req.Context().Err() == nil {
			return nil, &errNoAnswer{host: g.host, wait: g.wait, err: err}
		}
		return nil, err
	}
	b := &idleBody{rc: resp.Body, cancel: cancel, host: g.host, idle: g.idle, rate: g.rate, window: g.window}
	// Cancelling the request's context closes the connection, which ends
	// a Read blocked on it. The timer runs only inside Read, so a slow
	// consumer is not mistaken for a stalled registry.
	b.timer = time.AfterFunc(time.Hour, func() {
		b.expired.Store(true)
		cancel()
	})
	b.timer.Stop()
	resp.Body = b
	return resp, nil
}

// errStalled is a body that sent nothing for too long; it is a net.Error
// timeout so that retries treat it like one.
type errStalled struct {
	host string
	idle time.Duration
}

func (e *errStalled) Error() string {
	return fmt.Sprintf("registry %s sent nothing for %s (raise --%s for a slow registry)", e.host, e.idle, FlagTimeout)
}
func (e *errStalled) Timeout() bool   { return true }
func (e *errStalled) Temporary() bool { return true }

// errNoAnswer is a registry that did not connect, finish its TLS
// handshake or send response headers in time; it is a net.Error timeout
// so that retries treat it like one.
type errNoAnswer struct {
	host string
	wait time.Duration
	err  error
}

func (e *errNoAnswer) Error() string {
	return fmt.Sprintf("registry %s did not answer within %s (raise --%s for a slow registry): %v", e.host, e.wait, FlagTimeout, e.err)
}
func (e *errNoAnswer) Unwrap() error   { return e.err }
func (e *errNoAnswer) Timeout() bool   { return true }
func (e *errNoAnswer) Temporary() bool { return true }

// errTooSlow is a body that arrived slower than --min-transfer-rate; a
// net.Error timeout, so that it is retried (and a blob resumed) like a
// stalled one.
type errTooSlow struct {
	host   string
	got    int64
	window time.Duration
	rate   int64
}

func (e *errTooSlow) Error() string {
	return fmt.Sprintf("registry %s sent %d bytes in %s, slower than the %s/s of --%s (lower it for a slow link; it is judged over three times --%s)",
		e.host, e.got, e.window.Round(time.Millisecond), bytesize.Format(e.rate), FlagMinTransferRate, FlagTimeout)
}
func (e *errTooSlow) Timeout() bool   { return true }
func (e *errTooSlow) Temporary() bool { return true }

type idleBody struct {
	rc      io.ReadCloser
	cancel  context.CancelFunc
	timer   *time.Timer
	expired atomic.Bool
	host    string
	idle    time.Duration
	// The rate is judged on the time spent inside Read only, so that a
	// slow consumer (a destination registry taking the bytes slowly) is
	// not blamed on the source: spent and got are the current window's.
	rate   int64
	window time.Duration
	spent  time.Duration
	got    int64
	slow   error
}

func (b *idleBody) Read(p []byte) (int, error) {
	if b.expired.Load() {
		return 0, &errStalled{host: b.host, idle: b.idle}
	}
	if b.slow != nil {
		return 0, b.slow
	}
	start := time.Now()
	b.timer.Reset(b.idle)
	n, err := b.rc.Read(p)
	b.timer.Stop()
	if b.expired.Load() {
		return n, &errStalled{host: b.host, idle: b.idle}
	}
	if b.rate > 0 && b.window > 0 {
		b.spent += time.Since(start)
		b.got += int64(n)
		if b.spent >= b.window && err == nil {
			if float64(b.got) < float64(b.rate)*b.spent.Seconds() {
				b.slow = &errTooSlow{host: b.host, got: b.got, window: b.spent, rate: b.rate}
				b.cancel()
				return n, b.slow
			}
			b.spent, b.got = 0, 0
		}
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	err := b.rc.Close()
	b.cancel()
	return err
}

// resumingBody re-fetches a blob whose download broke off (a dropped
// connection, a stalled body) and skips what was already read, up to
// retries times with doubling delays. The caller verifies the digest of the
// whole stream, so a registry that serves other bytes the second time is
// caught.
type resumingBody struct {
	ctx     context.Context
	open    func() (io.ReadCloser, error)
	rc      io.ReadCloser
	n       int64
	retries int
	delay   time.Duration
}

func (r *resumingBody) Read(p []byte) (int, error) {
	for {
		n, err := r.rc.Read(p)
		r.n += int64(n)
		if err == nil || err == io.EOF || !resumable(err) || r.retries <= 0 || r.ctx.Err() != nil {
			return n, err
		}
		if rerr := r.reopen(); rerr != nil {
			return n, fmt.Errorf("%w (resuming the download failed: %v)", err, rerr)
		}
		if n > 0 {
			return n, nil
		}
	}
}

func (r *resumingBody) reopen() error {
	r.retries--
	_ = r.rc.Close()
	select {
	case <-r.ctx.Done():
		return r.ctx.Err()
	case <-time.After(r.delay):
	}
	r.delay *= 2
	rc, err := r.open()
	if err != nil {
		return err
	}
	if _, err := io.CopyN(io.Discard, rc, r.n); err != nil {
		_ = rc.Close()
		return fmt.Errorf("skip the %d bytes already read: %w", r.n, err)
	}
	r.rc = rc
	return nil
}

func (r *resumingBody) Close() error { return r.rc.Close() }

// resumable is true for a body that broke off: retryable errors plus the
// unexpected EOF of a connection closed mid-body.
func resumable(err error) bool {
	return retryable(err) || errors.Is(err, io.ErrUnexpectedEOF)
}
