// Package registrytest starts Debian's docker-registry (CNCF distribution) on
// 127.0.0.1 for integration tests: plain HTTP, TLS with a throw-away CA, and
// TLS with htpasswd basic auth.
package registrytest

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Binary is the registry executable Debian's docker-registry package installs.
const Binary = "docker-registry"

// Registry is one running registry process.
type Registry struct {
	// Addr is host:port, always on 127.0.0.1.
	Addr string
	// TLS is true for the TLS and auth variants.
	TLS bool
	// CAFile is the PEM file of the CA that signed the server certificate ("" without TLS).
	CAFile string
	// CAPool holds the same CA, for Go clients.
	CAPool *x509.CertPool
	// Username and Password are set for the auth variant.
	Username, Password string
	// Dir is the registry's temporary working directory (config, storage, certs).
	Dir string

	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has exited
	// waitErr is the process's exit status; read it after exited is closed.
	waitErr error
	output  *syncBuffer
}

type config struct {
	tls        bool
	user, pass string
	noDelete   bool
}

// Option changes the registry variant.
type Option func(*config)

// WithTLS serves HTTPS with a certificate for 127.0.0.1 and localhost signed by a fresh CA.
func WithTLS() Option { return func(c *config) { c.tls = true } }

// WithAuth serves HTTPS (implies WithTLS) and requires basic auth with these credentials.
func WithAuth(user, pass string) Option {
	return func(c *config) { c.tls, c.user, c.pass = true, user, pass }
}

// WithoutDelete serves a registry that refuses to delete manifests (405
// UNSUPPORTED), as docker-registry does by default.
func WithoutDelete() Option { return func(c *config) { c.noDelete = true } }

// RequireTool returns the path of a tool the integration tests need. A missing tool
// skips the test on a developer's machine but fails it in CI (CI=true), where the
// CI script installs it.
func RequireTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	msg := fmt.Sprintf("%s not found in PATH (Debian: apt-get install -y %s)", name, debianPackage(name))
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip("skipping: " + msg)
	return ""
}

func debianPackage(tool string) string {
	switch tool {
	case "htpasswd":
		return "apache2-utils"
	default:
		return tool
	}
}

// Start runs a registry until the test ends. Without options it serves plain HTTP.
func Start(t testing.TB, opts ...Option) *Registry {
	t.Helper()
	bin := RequireTool(t, Binary)
	var c config
	for _, o := range opts {
		o(&c)
	}
	dir := t.TempDir()
	r := &Registry{Dir: dir, TLS: c.tls, Username: c.user, Password: c.pass}
	if c.tls {
		if err := r.writeCerts(); err != nil {
			t.Fatalf("registrytest: certificates: %v", err)
		}
	}
	if c.user != "" {
		hash, err := bcrypt.GenerateFromPassword([]byte(c.pass), bcrypt.MinCost)
		if err != nil {
			t.Fatalf("registrytest: bcrypt: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "htpasswd"), []byte(c.user+":"+string(hash)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The port is picked by closing a listener and handing its port to the
	// registry; another process could grab it in between, so retry a few times.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatalf("registrytest: free port: %v", err)
		}
		r.Addr = fmt.Sprintf("127.0.0.1:%d", port)
		if lastErr = r.start(bin, c); lastErr == nil {
			t.Cleanup(r.stop)
			return r
		}
	}
	t.Fatalf("registrytest: %v", lastErr)
	return nil
}

func (r *Registry) start(bin string, c config) error {
	cfg := fmt.Sprintf(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: %t
http:
  addr: %s
`, filepath.Join(r.Dir, "storage"), !c.noDelete, r.Addr)
	if c.tls {
		cfg += fmt.Sprintf("  tls:\n    certificate: %s\n    key: %s\n",
			filepath.Join(r.Dir, "server.crt"), filepath.Join(r.Dir, "server.key"))
	}
	if c.user != "" {
		cfg += fmt.Sprintf("auth:\n  htpasswd:\n    realm: opm-test\n    path: %s\n", filepath.Join(r.Dir, "htpasswd"))
	}
	cfgPath := filepath.Join(r.Dir, "config.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return err
	}
	r.output = &syncBuffer{}
	r.cmd = exec.Command(bin, "serve", cfgPath)
	r.cmd.Stdout, r.cmd.Stderr = r.output, r.output
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan struct{})
	r.exited = exited
	go func() { r.waitErr = r.cmd.Wait(); close(exited) }()

	client := r.Client()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("%s exited early (%v): %s", bin, r.waitErr, r.output.String())
		default:
		}
		resp, err := client.Get(r.URL() + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusUnauthorized {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = r.cmd.Process.Kill()
	<-exited
	return fmt.Errorf("%s did not answer on %s/v2/ within 15s: %s", bin, r.URL(), r.output.String())
}

func (r *Registry) stop() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(5 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.exited
	}
}

// URL is the registry's base URL (http:// or https://).
func (r *Registry) URL() string {
	if r.TLS {
		return "https://" + r.Addr
	}
	return "http://" + r.Addr
}

// Ref names a repository and tag on this registry, such as 127.0.0.1:5000/repo:tag.
func (r *Registry) Ref(repoAndTag string) string { return r.Addr + "/" + repoAndTag }

// Output is what the registry process printed so far.
func (r *Registry) Output() string { return r.output.String() }

// Client is an HTTP client that trusts the test CA and sends the test credentials.
func (r *Registry) Client() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: r.CAPool, MinVersion: tls.VersionTLS12}
	var rt http.RoundTripper = tr
	if r.Username != "" {
		rt = basicAuth{r.Username, r.Password, tr}
	}
	return &http.Client{Transport: rt, Timeout: 10 * time.Second}
}

type basicAuth struct {
	user, pass string
	next       http.RoundTripper
}

func (b basicAuth) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.SetBasicAuth(b.user, b.pass)
	return b.next.RoundTrip(req)
}

// WriteAuthFile writes a containers/docker auth file holding this registry's
// credentials under key (the registry address, or a namespace such as ADDR/org),
// and returns its path.
func (r *Registry) WriteAuthFile(t testing.TB, path, key, user, pass string) string {
	t.Helper()
	if key == "" {
		key = r.Addr
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, key, basicToken(user, pass))
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// syncBuffer collects process output written from another goroutine,
// its last outputKeep bytes: the registry logs each request that fails
// (a HEAD of a blob it lacks), which over a long test would grow the
// test's heap with the requests (tests that measure the heap).
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

const outputKeep = 64 << 10

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	if b.buf.Len() > 2*outputKeep {
		last := append([]byte(nil), b.buf.Bytes()[b.buf.Len()-outputKeep:]...)
		b.buf = bytes.Buffer{}
		b.buf.Write(last)
	}
	return n, err
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
