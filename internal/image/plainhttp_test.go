package image

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
)

// authRegistry is a plain-HTTP registry that demands basic auth and records
// every Authorization header it is sent.
type authRegistry struct {
	next http.Handler
	mu   sync.Mutex
	seen []string
}

func (a *authRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := r.Header.Get("Authorization")
	a.mu.Lock()
	if h != "" {
		a.seen = append(a.seen, h)
	}
	a.mu.Unlock()
	if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "pw" {
		w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	a.next.ServeHTTP(w, r)
}

func (a *authRegistry) sent() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

func TestPlainHTTPFallbackWarnsAndKeepsCredentials(t *testing.T) {
	home := isolateCredentials(t)
	reg := &authRegistry{next: registry.New(registry.Logger(discardLogger()))}
	srv := httptest.NewServer(reg)
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	authFile := filepath.Join(home, "auth.json")
	writeAuth(t, authFile, host, "alice", "pw")
	img, _ := BuildBundleImage(testBundle(), testLabels())
	ref := mustRef(t, host+"/plain/bundle:1")
	ctx := context.Background()

	// --skip-tls-verify: TLS fails, plain HTTP is tried, without credentials.
	var warnings []string
	c := mustClient(t, Options{SkipTLSVerify: true, AuthFile: authFile, Retries: -1, Warn: func(m string) { warnings = append(warnings, m) }})
	_, err := c.Write(ctx, img, ref)
	if err == nil {
		t.Fatal("push succeeded: credentials must have gone over plain HTTP")
	}
	t.Logf("refused: %v", err)
	if !strings.Contains(err.Error(), "--use-http") {
		t.Errorf("the error should say how to send the credentials: %v", err)
	}
	if got := reg.sent(); len(got) != 0 {
		t.Fatalf("credentials sent over plain HTTP without --use-http: %v", got)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], host) || !strings.Contains(warnings[0], "plain HTTP") || !strings.Contains(warnings[0], "--use-http") {
		t.Errorf("warnings %q: want one naming %s, plain HTTP and --use-http", warnings, host)
	}

	// Without a Warn function the warning is kept for the caller.
	c = mustClient(t, Options{SkipTLSVerify: true, AuthFile: authFile, Retries: -1})
	_, _ = c.Open(ctx, ref)
	if w := c.Warnings(); len(w) != 1 {
		t.Errorf("Warnings() = %q, want one", w)
	}

	// --use-http: the user asked for plain HTTP; credentials go.
	c = mustClient(t, Options{UseHTTP: true, AuthFile: authFile})
	if _, err := c.Write(ctx, img, ref); err != nil {
		t.Fatalf("push with --use-http: %v", err)
	}
	if len(reg.sent()) == 0 {
		t.Error("no credentials sent with --use-http")
	}
	if w := c.Warnings(); len(w) != 0 {
		t.Errorf("warnings with --use-http: %q", w)
	}
}
