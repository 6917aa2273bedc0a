package image

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
)

// Traffic counts the bytes of HTTP bodies a client received from and sent
// to registries: blobs, manifests and token responses alike, and the
// requests made (each retry counted again). Layouts and archives on disk
// are not counted.
type Traffic struct {
	Received, Sent atomic.Int64
	// Requests counts the HTTP requests, by method.
	Requests sync.Map // method -> *atomic.Int64
}

// Count is how many requests of method (GET, HEAD, PUT...) were made, or
// of every method for "".
func (t *Traffic) Count(method string) int64 {
	var n int64
	t.Requests.Range(func(k, v any) bool {
		if method == "" || k == method {
			n += v.(*atomic.Int64).Load()
		}
		return true
	})
	return n
}

func (t *Traffic) request(method string) {
	v, ok := t.Requests.Load(method)
	if !ok {
		v, _ = t.Requests.LoadOrStore(method, new(atomic.Int64))
	}
	v.(*atomic.Int64).Add(1)
}

// countingTransport adds the body bytes of each exchange to a Traffic.
type countingTransport struct {
	next http.RoundTripper
	t    *Traffic
}

func (c countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.t.request(req.Method)
	if req.Body != nil && req.Body != http.NoBody {
		// A RoundTripper must not change the caller's request.
		r := req.Clone(req.Context())
		r.Body = &countingReadCloser{ReadCloser: req.Body, n: &c.t.Sent}
		req = r
	}
	resp, err := c.next.RoundTrip(req)
	if resp != nil && resp.Body != nil {
		resp.Body = &countingReadCloser{ReadCloser: resp.Body, n: &c.t.Received}
	}
	return resp, err
}

type countingReadCloser struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c *countingReadCloser) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}
