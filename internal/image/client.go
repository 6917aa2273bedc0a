package image

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/containers/image/v5/docker/reference"
	"github.com/containers/image/v5/pkg/sysregistriesv2"
	"github.com/containers/image/v5/pkg/tlsclientconfig"
	"github.com/containers/image/v5/types"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Client opens and writes images with one set of Options. It is safe for
// concurrent use and keeps HTTP connections alive between calls.
type Client struct {
	opts     Options
	platform Platform
	sys      *types.SystemContext
	caPEM    []byte

	mu         sync.Mutex
	transports map[string]http.RoundTripper
	// handshakes holds, per registry, side and credentials, what the
	// registry answered go-containerregistry's ping (handshake.go).
	handshakes sync.Map // key -> *handshake

	// authFiles holds each auth file as parsed (or its error), per path,
	// authPaths the files consulted (AuthFiles, once), sysHelpers the
	// credential helpers of registries.conf (one key), helped the answers
	// of credential helpers per helper and registry: none grows with the
	// repositories a client opens (credentials).
	authOnce   sync.Once
	authPaths  []string
	authFiles  memo[*authFile]
	sysHelpers memo[[]string]
	helped     memo[Credentials]

	sig policyState
	// systemPolicy replaces SystemPolicyPath (tests).
	systemPolicy string

	warnMu   sync.Mutex
	warned   map[string]bool
	warnings []string
}

// warn tells the user msg once.
func (c *Client) warn(msg string) {
	c.warnMu.Lock()
	defer c.warnMu.Unlock()
	if c.warned[msg] {
		return
	}
	if c.warned == nil {
		c.warned = map[string]bool{}
	}
	c.warned[msg] = true
	if c.opts.Warn != nil {
		c.opts.Warn(msg)
		return
	}
	c.warnings = append(c.warnings, msg)
}

// Warnings are the warnings given so far when Options.Warn is nil.
func (c *Client) Warnings() []string {
	c.warnMu.Lock()
	defer c.warnMu.Unlock()
	return append([]string(nil), c.warnings...)
}

// NewClient validates opts and reads the CA file.
func NewClient(opts Options) (*Client, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	p, _ := ParsePlatform(opts.Platform)
	c := &Client{opts: opts, platform: p, transports: map[string]http.RoundTripper{}}
	c.sys = &types.SystemContext{
		SystemRegistriesConfPath: opts.RegistriesConf,
		BigFilesTemporaryDir:     opts.TempDir,
		OSChoice:                 p.OS,
		ArchitectureChoice:       p.Architecture,
		VariantChoice:            p.Variant,
	}
	if opts.RegistriesConf != "" {
		// Also keep the drop-in directory from leaking in when a file is chosen.
		c.sys.SystemRegistriesConfDirPath = opts.RegistriesConf + ".d"
	}
	if opts.CAFile != "" {
		pem, err := os.ReadFile(opts.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", FlagCAFile, err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--%s %s: no PEM certificates found", FlagCAFile, opts.CAFile)
		}
		c.caPEM = pem
	}
	return c, nil
}

// Options returns the validated options (defaults filled in).
func (c *Client) Options() Options { return c.opts }

// endpoint is one registry location to talk to, after registries.conf.
type endpoint struct {
	ref      name.Reference
	insecure bool // registries.conf insecure=true: skip TLS verification, allow HTTP
	mirror   bool
	// push: the registry is written to (Options.Dest applies), not read
	// from (Options.Src).
	push bool
}

func (e endpoint) host() string { return e.ref.Context().RegistryStr() }

func (c *Client) registryConfig(r Ref) (*sysregistriesv2.Registry, error) {
	reg, err := sysregistriesv2.FindRegistry(c.sys, r.Name)
	if err != nil {
		return nil, fmt.Errorf("registries.conf: %w", err)
	}
	if reg != nil && reg.Blocked {
		return nil, fmt.Errorf("%s: registry %s is blocked in registries.conf", r, reg.Prefix)
	}
	return reg, nil
}

// pullEndpoints lists mirrors (from registries.conf) and then the registry itself.
func (c *Client) pullEndpoints(r Ref) ([]endpoint, error) {
	reg, err := c.registryConfig(r)
	if err != nil {
		return nil, err
	}
	if reg == nil {
		ep, err := c.toEndpoint(r.named, false, false, false)
		return []endpoint{ep}, err
	}
	sources, err := reg.PullSourcesFromReference(r.named)
	if err != nil {
		return nil, fmt.Errorf("%s: registries.conf: %w", r, err)
	}
	var eps []endpoint
	for i, s := range sources {
		ep, err := c.toEndpoint(s.Reference, s.Endpoint.Insecure, i < len(sources)-1, false)
		if err != nil {
			return nil, err
		}
		eps = append(eps, ep)
	}
	return eps, nil
}

// pushEndpoint applies registries.conf's insecure and blocked settings; mirrors
// and location rewrites are for pulls only.
func (c *Client) pushEndpoint(r Ref) (endpoint, error) {
	reg, err := c.registryConfig(r)
	if err != nil {
		return endpoint{}, err
	}
	insecure := false
	if reg != nil && reference.Domain(r.named) == reg.Location {
		insecure = reg.Insecure
	}
	return c.toEndpoint(r.named, insecure, false, true)
}

func (c *Client) toEndpoint(named reference.Named, insecure, mirror, push bool) (endpoint, error) {
	var opts []name.Option
	if skip, useHTTP := c.opts.side(push); useHTTP || skip || insecure {
		opts = append(opts, name.Insecure)
	}
	ref, err := name.ParseReference(named.String(), opts...)
	if err != nil {
		return endpoint{}, fmt.Errorf("%s: %w", named, err)
	}
	return endpoint{ref: ref, insecure: insecure, mirror: mirror, push: push}, nil
}

// transport returns the HTTP transport for a registry host: system roots plus
// --ca-file plus certs.d directories, TLS verification unless told otherwise, and
// plain HTTP refused unless --use-http, --skip-tls-verify or an insecure registry.
func (c *Client) transport(ep endpoint) (http.RoundTripper, error) {
	host := ep.host()
	skip, useHTTP := c.opts.side(ep.push)
	skip = skip || ep.insecure
	allowHTTP := useHTTP || skip
	key := fmt.Sprintf("%s|%t|%t|%t", host, skip, allowHTTP, useHTTP)
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.transports[key]; ok {
		return t, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: skip} //nolint:gosec // only on explicit request
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if c.caPEM != nil {
		pool.AppendCertsFromPEM(c.caPEM)
	}
	cfg.RootCAs = pool
	for _, dir := range certDirs(host) {
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		if err := tlsclientconfig.SetupCertificates(dir, cfg); err != nil {
			return nil, fmt.Errorf("certificates for %s in %s: %w", host, dir, err)
		}
	}
	base := remote.DefaultTransport.(*http.Transport).Clone()
	base.TLSClientConfig = cfg
	// Every wait on the registry is bounded by --registry-timeout: the
	// connection and the TLS handshake too, whose library defaults (30 s,
	// 10 s) would otherwise make a registry that accepts and never answers
	// outlast the flag.
	dialer := &net.Dialer{Timeout: c.opts.ResponseTimeout, KeepAlive: 30 * time.Second}
	base.DialContext = dialer.DialContext
	base.TLSHandshakeTimeout = c.opts.ResponseTimeout
	base.ResponseHeaderTimeout = c.opts.ResponseTimeout
	rate, window := c.opts.minRate()
	var t http.RoundTripper = &stallGuard{host: host, idle: c.opts.IdleTimeout, wait: c.opts.ResponseTimeout, rate: rate, window: window, note: c.warn, next: base}
	t = boundGuard{host: host, next: t}
	switch {
	case !allowHTTP:
		t = httpsOnly{host: host, next: t}
	case !useHTTP:
		// Plain HTTP is only a fallback here (--skip-tls-verify or an
		// insecure registry): say so, and keep credentials off it.
		t = &plainFallback{host: host, c: c, next: t}
	}
	if c.opts.Traffic != nil {
		t = countingTransport{next: t, t: c.opts.Traffic}
	}
	// Outermost: each request asked again after a wait goes through the
	// guards and is counted as the first was.
	t = rateLimitWait{host: host, c: c, next: t}
	c.transports[key] = t
	return t, nil
}

func certDirs(host string) []string {
	dirs := []string{filepath.Join("/etc/containers/certs.d", host), filepath.Join("/etc/docker/certs.d", host)}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".config/containers/certs.d", host))
	}
	return dirs
}

// errPlainHTTP marks a refused plain-HTTP request; go-containerregistry falls
// back to http:// for loopback and private addresses on its own.
var errPlainHTTP = errors.New("plain HTTP is not allowed without --use-http")

type httpsOnly struct {
	host string
	next http.RoundTripper
}

func (h httpsOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme == "http" {
		return nil, fmt.Errorf("%s: %w", h.host, errPlainHTTP)
	}
	return h.next.RoundTrip(req)
}

// plainFallback lets requests fall back to plain HTTP, but warns and
// strips credentials: without --use-http nobody asked for them to travel
// in clear text.
type plainFallback struct {
	host string
	c    *Client
	next http.RoundTripper
}

func (p *plainFallback) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" {
		return p.next.RoundTrip(req)
	}
	p.c.warn(fmt.Sprintf("registry %s: falling back to plain HTTP (no TLS); credentials are not sent over it (pass --%s to send them)", p.host, FlagUseHTTP))
	if req.Header.Get("Authorization") != "" {
		req = req.Clone(req.Context())
		req.Header.Del("Authorization")
	}
	resp, err := p.next.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("registry %s asks for credentials over plain HTTP: %w", p.host, errCredsWithheld)
	}
	return resp, err
}

// errCredsWithheld: credentials were not sent over a plain-HTTP fallback.
var errCredsWithheld = fmt.Errorf("opm sends credentials over plain HTTP only with --%s: %w", FlagUseHTTP, ErrUnauthorized)

// remoteOptions builds go-containerregistry options for one endpoint.
func (c *Client) remoteOptions(ctx context.Context, ep endpoint) ([]remote.Option, Credentials, error) {
	tr, err := c.transport(ep)
	if err != nil {
		return nil, Credentials{}, err
	}
	cred, err := c.credentials(ep.ref.Context().Name())
	if err != nil {
		return nil, Credentials{}, err
	}
	auth := authn.Anonymous
	if !cred.Empty() {
		auth = authn.FromConfig(authn.AuthConfig{Username: cred.Username, Password: cred.Password, IdentityToken: cred.IdentityToken})
	}
	backoff := remote.Backoff{Duration: c.opts.RetryDelay, Factor: 2, Jitter: 0.1, Steps: c.opts.retries() + 1}
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithTransport(tr),
		remote.WithAuth(auth),
		remote.WithUserAgent("opm"),
		remote.WithRetryBackoff(backoff),
		remote.WithRetryStatusCodes(retryStatusCodes...),
		remote.WithRetryPredicate(retryable),
	}
	// A registry whose handshake was seen once is not asked again for
	// each repository (see handshake.go).
	hs := c.handshake(ep, cred)
	if shared := hs.shared(ctx, ep, tr, auth, backoff); shared != nil {
		opts = append(opts, remote.WithTransport(shared))
	} else {
		opts[1] = remote.WithTransport(pingObserver{next: tr, hs: hs})
	}
	return opts, cred, nil
}

var retryStatusCodes = []int{http.StatusRequestTimeout, http.StatusTooManyRequests,
	http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout}

// retryable is true for errors a retry can fix: timeouts and dropped connections.
func retryable(err error) bool {
	var na *errNoAnswer
	if errors.As(err, &na) {
		return true // before the check below: net/http's timeouts are also DeadlineExceeded
	}
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var te *transport.Error
	if errors.As(err, &te) {
		return te.Temporary()
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed)
}

// Error kinds callers can test with errors.Is.
var (
	ErrUnauthorized = errors.New("authentication failed")
	ErrDenied       = errors.New("access denied")
	ErrNotFound     = errors.New("image not found")
	// ErrBlobNotFound is a layer or config the image's manifest names but
	// the registry does not hold: the image exists and is broken.
	ErrBlobNotFound = errors.New("blob not found")
	ErrTLS          = errors.New("TLS verification failed")
)

// registryError rewrites go-containerregistry errors into messages that say
// what to do, as a *PullError (see SharedCause). It never includes
// credentials: only their source file.
func registryError(op string, ep endpoint, cred Credentials, err error) error {
	e := describeRegistryError(op, ep, cred, err)
	prefix := fmt.Sprintf("%s %s: ", op, ep.ref)
	if !strings.HasPrefix(e.Error(), prefix) {
		return e
	}
	return &PullError{Op: op, Ref: ep.ref.String(), repo: ep.ref.Context().RepositoryStr(), prefix: prefix, err: e}
}

func describeRegistryError(op string, ep endpoint, cred Credentials, err error) error {
	host := ep.host()
	var (
		te *transport.Error
		na *errNoAnswer
	)
	switch {
	case errors.As(err, &na):
		// Said alone: a plain-HTTP fallback refused beside it is not the
		// reason, the registry's silence is. First, as net/http's
		// timeouts are also context.DeadlineExceeded.
		return fmt.Errorf("%s %s: %w", op, ep.ref, na)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s %s: %w", op, ep.ref, err)
	case errors.As(err, &te) && te.StatusCode == http.StatusUnauthorized:
		if cred.Empty() {
			return fmt.Errorf("%s %s: registry %s requires credentials and none were found (--%s, REGISTRY_AUTH_FILE, DOCKER_CONFIG, ~/.docker/config.json, containers auth.json): %w",
				op, ep.ref, host, FlagAuthFile, ErrUnauthorized)
		}
		return fmt.Errorf("%s %s: registry %s rejected the credentials from %s: %w", op, ep.ref, host, cred.Source, ErrUnauthorized)
	case errors.As(err, &te) && te.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%s %s: registry %s denied access: %w", op, ep.ref, host, ErrDenied)
	case errors.As(err, &te) && te.StatusCode == http.StatusNotFound:
		return notFoundError(op, ep, te)
	case isTLSError(err):
		return fmt.Errorf("%s %s: %w for %s (trust its CA with --%s, or use --%s): %v", op, ep.ref, ErrTLS, host, FlagCAFile, FlagSkipTLSVerify, err)
	case errors.Is(err, errPlainHTTP):
		return fmt.Errorf("%s %s: registry %s answered only over plain HTTP; pass --%s to allow it: %w", op, ep.ref, host, FlagUseHTTP, err)
	}
	return fmt.Errorf("%s %s: %w", op, ep.ref, err)
}

// notFoundError words a 404. The registry's diagnostics are quoted by code
// and message only: their detail is a free-form value that go-containerregistry
// prints as Go map syntax (map[Tag:1]), which means nothing to a user.
func notFoundError(op string, ep endpoint, te *transport.Error) error {
	blob := op == opFetchBlob
	var said []string
	for _, d := range te.Errors {
		if d.Code == transport.BlobUnknownErrorCode {
			blob = true
		}
		msg := string(d.Code)
		if d.Message != "" {
			msg += ": " + d.Message
		}
		said = append(said, msg)
	}
	if blob {
		return fmt.Errorf("%s %s: %w: the image's manifest names this blob but the registry does not hold it (an interrupted push, or the blob was garbage-collected); push the image again", op, ep.ref, ErrBlobNotFound)
	}
	if len(said) > 0 {
		return fmt.Errorf("%s %s: %w (the registry says %s)", op, ep.ref, ErrNotFound, strings.Join(said, "; "))
	}
	return fmt.Errorf("%s %s: %w", op, ep.ref, ErrNotFound)
}

// opFetchBlob is the registryError op of blob reads.
const opFetchBlob = "fetch blob"

func isTLSError(err error) bool {
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	var cv *tls.CertificateVerificationError
	if errors.As(err, &ua) || errors.As(err, &hn) || errors.As(err, &ci) || errors.As(err, &cv) {
		return true
	}
	// go-containerregistry's ping joins https and http attempts into one error
	// without Unwrap []error; fall back to the text.
	return strings.Contains(err.Error(), "x509: ") || strings.Contains(err.Error(), "tls: failed to verify")
}
