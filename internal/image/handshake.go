package image

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// go-containerregistry shakes hands with a registry (GET /v2/, then a
// token for bearer registries) for every repository it reads or writes:
// a mirror of 2,000 images in 2,000 repositories pings each registry
// 2,000 times or more, a fifth of its requests. A registry that asks no
// bearer token (anonymous, or basic auth) answers every ping the same, so
// once the first handshake was seen, the others are answered from it,
// without a request: one transport past the handshake serves every
// repository of that registry. Bearer tokens are scoped to a repository:
// those registries keep a handshake a repository.

// handshake is what one registry (on one side, with one set of
// credentials) answered the first ping that succeeded.
type handshake struct {
	mu        sync.Mutex
	seen      bool
	scheme    string // of the ping answered
	status    int
	challenge string // WWW-Authenticate
	rt        http.RoundTripper
	// upload is rt without go-containerregistry's retries, which would
	// send a request again with its body already read: uploadBlob
	// retries an upload whole.
	upload http.RoundTripper
}

func (c *Client) handshake(ep endpoint, cred Credentials) *handshake {
	reg := ep.ref.Context().Registry
	key := fmt.Sprintf("%s|%t|%t|%s|%s|%s", reg.RegistryStr(), ep.push, ep.insecure, cred.Username, cred.Password, cred.IdentityToken)
	v, _ := c.handshakes.LoadOrStore(key, &handshake{})
	return v.(*handshake)
}

// uploadTransport is the transport for blob uploads to ep's registry
// once its handshake is shared (nil before, or for a bearer registry).
func (c *Client) uploadTransport(ep endpoint, cred Credentials) http.RoundTripper {
	h := c.handshake(ep, cred)
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.upload
}

// observe records a ping's answer: 200, or 401 with a basic challenge.
func (h *handshake) observe(req *http.Request, resp *http.Response) {
	if req.Method != http.MethodGet || req.URL.Path != "/v2/" {
		return
	}
	challenge := resp.Header.Get("WWW-Authenticate")
	switch {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode == http.StatusUnauthorized && strings.HasPrefix(strings.ToLower(challenge), "basic"):
	default:
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.seen {
		h.seen, h.scheme, h.status, h.challenge = true, req.URL.Scheme, resp.StatusCode, challenge
	}
}

// shared returns the transport every repository of the registry uses once
// a handshake was seen, wrapped as go-containerregistry wraps tr (retries,
// user agent), since it wraps it no more; nil before.
func (h *handshake) shared(ctx context.Context, ep endpoint, tr http.RoundTripper, auth authn.Authenticator, backoff remote.Backoff) http.RoundTripper {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rt != nil || !h.seen {
		return h.rt
	}
	reg := ep.ref.Context().Registry
	base := transport.NewUserAgent(transport.NewRetry(tr, transport.WithRetryBackoff(backoff),
		transport.WithRetryPredicate(retryable), transport.WithRetryStatusCodes(retryStatusCodes...)), "opm")
	rt, err := transport.NewWithContext(ctx, reg, auth, pingReplay{next: base, h: h}, nil)
	if err != nil {
		return nil
	}
	if ep.push {
		up, err := transport.NewWithContext(ctx, reg, auth, pingReplay{next: transport.NewUserAgent(tr, "opm"), h: h}, nil)
		if err != nil {
			return nil
		}
		h.upload = up
	}
	h.rt = rt
	return rt
}

// pingObserver passes requests on, telling h what the registry answered
// to a ping.
type pingObserver struct {
	next http.RoundTripper
	hs   *handshake
}

func (o pingObserver) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := o.next.RoundTrip(req)
	if err == nil {
		o.hs.observe(req, resp)
	}
	return resp, err
}

// pingReplay answers the ping of a handshake as the registry answered
// the one seen (over the scheme it was answered on: the other, which
// go-containerregistry also tries for a plain-HTTP registry, fails), and
// passes every other request on. The lock of h is held by shared.
type pingReplay struct {
	next http.RoundTripper
	h    *handshake
}

var errOtherScheme = errors.New("not the scheme the registry answered on")

func (p pingReplay) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.URL.Path != "/v2/" {
		return p.next.RoundTrip(req)
	}
	if req.URL.Scheme != p.h.scheme {
		return nil, errOtherScheme
	}
	hdr := http.Header{}
	if p.h.challenge != "" {
		hdr.Set("WWW-Authenticate", p.h.challenge)
	}
	return &http.Response{Status: http.StatusText(p.h.status), StatusCode: p.h.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: hdr, Body: http.NoBody, Request: req}, nil
}
