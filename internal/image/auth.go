package image

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/containers/image/v5/pkg/sysregistriesv2"
	"github.com/docker/docker-credential-helpers/client"
	"github.com/docker/docker-credential-helpers/credentials"
)

// Credentials for one registry, and where they came from (never the secret itself).
type Credentials struct {
	Username      string
	Password      string
	IdentityToken string
	// Source names the file or credential helper that held them.
	Source string
}

// Empty reports whether no credentials were found.
func (c Credentials) Empty() bool {
	return c.Username == "" && c.Password == "" && c.IdentityToken == ""
}

// AuthFiles lists the credential files consulted, in order: --authfile,
// $REGISTRY_AUTH_FILE, $DOCKER_CONFIG/config.json, ~/.docker/config.json,
// $XDG_RUNTIME_DIR/containers/auth.json, ${XDG_CONFIG_HOME:-~/.config}/containers/auth.json.
// Users of skopeo and podman expect REGISTRY_AUTH_FILE to win over Docker's file,
// so this order deliberately differs from go-containerregistry's default keychain.
func AuthFiles(authFile string) []string {
	home, _ := os.UserHomeDir()
	var paths []string
	add := func(p string) {
		if p == "" {
			return
		}
		for _, q := range paths {
			if q == p {
				return
			}
		}
		paths = append(paths, p)
	}
	add(authFile)
	add(os.Getenv("REGISTRY_AUTH_FILE"))
	if d := os.Getenv("DOCKER_CONFIG"); d != "" {
		add(filepath.Join(d, "config.json"))
	}
	if home != "" {
		add(filepath.Join(home, ".docker", "config.json"))
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		add(filepath.Join(d, "containers", "auth.json"))
	}
	cfgHome := os.Getenv("XDG_CONFIG_HOME")
	if cfgHome == "" && home != "" {
		cfgHome = filepath.Join(home, ".config")
	}
	if cfgHome != "" {
		add(filepath.Join(cfgHome, "containers", "auth.json"))
	}
	return paths
}

type authFile struct {
	Auths       map[string]authEntry `json:"auths"`
	CredHelpers map[string]string    `json:"credHelpers"`
	CredsStore  string               `json:"credsStore"`
}

type authEntry struct {
	Auth          string `json:"auth"`
	Username      string `json:"username"`
	Password      string `json:"password"`
	IdentityToken string `json:"identitytoken"`
}

// memo runs a lookup once per key for the life of a client; concurrent
// callers of the same key wait for the first one's answer.
type memo[V any] struct {
	mu sync.Mutex
	m  map[string]*memoEntry[V]
}

type memoEntry[V any] struct {
	once sync.Once
	v    V
	err  error
}

func (m *memo[V]) get(key string, lookup func() (V, error)) (V, error) {
	m.mu.Lock()
	if m.m == nil {
		m.m = map[string]*memoEntry[V]{}
	}
	e, ok := m.m[key]
	if !ok {
		e = &memoEntry[V]{}
		m.m[key] = e
	}
	m.mu.Unlock()
	e.once.Do(func() { e.v, e.err = lookup() })
	return e.v, e.err
}

// credentials are repo's credentials as LookupCredentials finds them,
// from the auth files as this client first read them: each file is read
// and parsed once per client (its error too), and registries.conf's
// credential helpers listed once, so a run that opens many images neither
// reads the files again for each nor keeps anything per repository (a
// lookup in the parsed files is a few map lookups).
func (c *Client) credentials(repo string) (Credentials, error) {
	c.authOnce.Do(func() { c.authPaths = AuthFiles(c.opts.AuthFile) })
	return c.lookupCredentials(repo, c.authPaths,
		func(p string) (*authFile, error) {
			return c.authFiles.get(p, func() (*authFile, error) { return readAuthFile(p) })
		},
		func() ([]string, error) {
			return c.sysHelpers.get("", func() ([]string, error) { return sysregistriesv2.CredentialHelpers(c.sys) })
		})
}

// LookupCredentials finds credentials for repo (host[:port]/path, such as
// quay.io/org/repo). In each file the most specific key wins: quay.io/org/repo,
// then quay.io/org, then quay.io; a credHelpers entry for the host or a
// credsStore runs that docker-credential-* helper. The first file with a match
// wins; after the files come credential helpers listed in registries.conf.
// The files are read on every call (the client's own requests use the files
// as it first read them); a credential helper is asked once per registry for
// the life of the client.
func (c *Client) LookupCredentials(repo string) (Credentials, error) {
	return c.lookupCredentials(repo, AuthFiles(c.opts.AuthFile), readAuthFile,
		func() ([]string, error) { return sysregistriesv2.CredentialHelpers(c.sys) })
}

// readAuthFile reads and parses one credentials file; a file that does not
// exist is fs.ErrNotExist, unwrapped, for lookupCredentials to skip.
func readAuthFile(p string) (*authFile, error) {
	raw, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("read credentials file: %w", err)
	}
	var f authFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("credentials file %s is not valid JSON: %w", p, redactJSONError(err))
	}
	return &f, nil
}

// lookupCredentials is LookupCredentials over paths, each read by read,
// and registries.conf's credential helpers as helpers lists them.
func (c *Client) lookupCredentials(repo string, paths []string, read func(string) (*authFile, error), helpers func() ([]string, error)) (Credentials, error) {
	host, _, _ := strings.Cut(repo, "/")
	for i, p := range paths {
		f, err := read(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				if i != 0 || c.opts.AuthFile == "" {
					continue
				}
				// Only --authfile must exist.
				return Credentials{}, fmt.Errorf("read credentials file: %w", err)
			}
			return Credentials{}, err
		}
		if helper, ok := f.CredHelpers[host]; ok {
			cred, err := c.helperCredentials(helper, host)
			if err != nil || !cred.Empty() {
				return cred, err
			}
		}
		for key := repo; ; {
			if e, ok := f.entry(key); ok {
				cred, err := e.decode()
				if err != nil {
					return Credentials{}, fmt.Errorf("credentials file %s, entry %q: %w", p, key, err)
				}
				cred.Source = p
				return cred, nil
			}
			i := strings.LastIndex(key, "/")
			if i < 0 {
				break
			}
			key = key[:i]
		}
		if f.CredsStore != "" {
			cred, err := c.helperCredentials(f.CredsStore, host)
			if err != nil || !cred.Empty() {
				return cred, err
			}
		}
	}
	hs, err := helpers()
	if err != nil {
		return Credentials{}, fmt.Errorf("registries.conf credential helpers: %w", err)
	}
	for _, h := range hs {
		if h == sysregistriesv2.AuthenticationFileHelper {
			continue // the files above
		}
		cred, err := c.helperCredentials(h, host)
		if err != nil || !cred.Empty() {
			return cred, err
		}
	}
	return Credentials{}, nil
}

// entry finds key exactly, or (for a bare host) any key that normalizes to it,
// such as https://index.docker.io/v1/ for docker.io.
func (f authFile) entry(key string) (authEntry, bool) {
	if e, ok := f.Auths[key]; ok {
		return e, true
	}
	if strings.Contains(key, "/") {
		return authEntry{}, false
	}
	for k, e := range f.Auths {
		if normalizeAuthKey(k) == normalizeAuthKey(key) {
			return e, true
		}
	}
	return authEntry{}, false
}

func normalizeAuthKey(k string) string {
	k = strings.TrimPrefix(strings.TrimPrefix(k, "https://"), "http://")
	k, _, _ = strings.Cut(k, "/")
	switch k {
	case "index.docker.io", "registry-1.docker.io":
		return "docker.io"
	}
	return k
}

func (e authEntry) decode() (Credentials, error) {
	cred := Credentials{Username: e.Username, Password: e.Password, IdentityToken: e.IdentityToken}
	if e.Auth != "" {
		raw, err := base64.StdEncoding.DecodeString(e.Auth)
		if err != nil {
			return Credentials{}, errors.New(`"auth" is not valid base64`)
		}
		user, pass, ok := strings.Cut(string(raw), ":")
		if !ok {
			return Credentials{}, errors.New(`"auth" is not base64 of user:password`)
		}
		cred.Username, cred.Password = user, pass
	}
	return cred, nil
}

// helperCredentials asks docker-credential-NAME for host's credentials,
// once per helper and registry for the life of the client (a helper may
// be slow: a keychain, a cloud token exchange); "not found" is not an error.
func (c *Client) helperCredentials(name, host string) (Credentials, error) {
	return c.helped.get(name+"\x00"+host, func() (Credentials, error) { return runHelper(name, host) })
}

func runHelper(name, host string) (Credentials, error) {
	server := host
	if normalizeAuthKey(host) == "docker.io" {
		server = "https://index.docker.io/v1/"
	}
	creds, err := client.Get(client.NewShellProgramFunc("docker-credential-"+name), server)
	if err != nil {
		if credentials.IsErrCredentialsNotFound(err) {
			return Credentials{}, nil
		}
		return Credentials{}, fmt.Errorf("credential helper docker-credential-%s for %s: %w", name, host, err)
	}
	c := Credentials{Username: creds.Username, Password: creds.Secret, Source: "docker-credential-" + name}
	if creds.Username == "<token>" {
		c = Credentials{IdentityToken: creds.Secret, Source: c.Source}
	}
	return c, nil
}

// redactJSONError keeps the position of a JSON syntax error but not the
// offending text, which could be a secret.
func redactJSONError(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("syntax error at byte %d", se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("field %q has the wrong type", te.Field)
	}
	return errors.New("cannot decode")
}
