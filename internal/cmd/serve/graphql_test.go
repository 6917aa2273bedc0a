package serve_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/serve"
)

// TestServeHTTPGraphQL: --http-graphql answers catalogd's GraphQL endpoint
// at the root and under /catalogs/NAME/; without it the path is 404.
func TestServeHTTPGraphQL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	catalog := `{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.bundle","package":"p","name":"p.v1","image":"r/p:1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
`
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	postQuery := func(url, body string) (int, string) {
		t.Helper()
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	post := func(url string) (int, string) {
		t.Helper()
		return postQuery(url, `{"query":"{ olmbundles { name properties { type } } }"}`)
	}
	base := startHTTP(t, serve.Options{Dir: dir, NoGRPC: true, HTTPGraphQL: true, HTTPCatalogName: "mine"})
	want := `{"data":{"olmbundles":[{"name":"p.v1","properties":[{"type":"olm.package"}]}]}}` + "\n"
	for _, path := range []string{"/api/v1/graphql", "/catalogs/mine/api/v1/graphql"} {
		if code, body := post(base + path); code != 200 || body != want {
			t.Errorf("POST %s: %d %q", path, code, body)
		}
	}
	// The 50 bytes that overflowed graphql-go's stack and ended the
	// process: refused, and the server answers on.
	if code, body := postQuery(base+"/api/v1/graphql", `{"query":"fragment A on Query { ...A } { ...A }"}`); code != 200 || !strings.Contains(body, `Cannot spread fragment \"A\" within itself.`) {
		t.Errorf("fragment cycle: %d %q", code, body)
	}
	if code, body := post(base + "/api/v1/graphql"); code != 200 || body != want {
		t.Errorf("after the cycle: %d %q", code, body)
	}
	if code, _ := post(base + "/catalogs/other/api/v1/graphql"); code != 404 {
		t.Errorf("another catalog: %d, want 404", code)
	}
	if code, _ := httpGet(t, base+"/api/v1/graphql"); code != 405 {
		t.Errorf("GET: %d, want 405", code)
	}

	base = startHTTP(t, serve.Options{Dir: dir, NoGRPC: true})
	if code, _ := post(base + "/api/v1/graphql"); code != 404 {
		t.Errorf("without --http-graphql: %d, want 404", code)
	}

	opts, err := cmdtest.Parse(t, serve.NewCmd, dir, "--http", ":8080", "--http-graphql")
	if err != nil || !opts.HTTPGraphQL {
		t.Errorf("--http-graphql parsed as %v (%v)", opts.HTTPGraphQL, err)
	}
	if opts, err := cmdtest.Parse(t, serve.NewCmd, dir, "--http", ":8080", "--http-graphql", "--http-graphql-concurrency", "3"); err != nil || opts.HTTPGraphQLConcurrency != 3 {
		t.Errorf("--http-graphql-concurrency parsed as %v (%v)", opts.HTTPGraphQLConcurrency, err)
	}
	if r := cmdtest.New(t).Run("serve", dir, "--http", "127.0.0.1:0", "--http-graphql", "--http-graphql-concurrency", "-1"); r.Code != 2 || !strings.Contains(r.ErrOut, "--http-graphql-concurrency -1") {
		t.Errorf("--http-graphql-concurrency -1: exit %d: %s", r.Code, r.ErrOut)
	}
	if r := cmdtest.New(t).Run("serve", dir, "--http-graphql"); r.Code != 2 || !strings.Contains(r.ErrOut, "--http ADDR") {
		t.Errorf("--http-graphql without --http: exit %d: %s", r.Code, r.ErrOut)
	}
}
