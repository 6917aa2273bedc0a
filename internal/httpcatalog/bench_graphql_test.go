package httpcatalog_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/catalogql"
	"github.com/opmkit/opm/internal/httpcatalog"
)

// BenchmarkGraphQL builds the GraphQL schema of a catalog of >=5,000
// bundles (what --http-graphql adds to start-up), answers a page of
// bundles with their properties, and reads /api/v1/all with zstd.
func BenchmarkGraphQL(b *testing.B) {
	dir := bigCatalog(b, 5000)
	s, err := httpcatalog.Build(os.DirFS(dir), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var schema *catalogql.Schema
	b.Run("build-schema", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if schema, err = catalogql.Build(s); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(s.Size())
	})
	srv := httptest.NewServer(httpcatalog.Handler(s, httpcatalog.Options{GraphQL: schema}))
	defer srv.Close()
	for _, tc := range []struct{ name, method, path, body, enc string }{
		{"query-page", http.MethodPost, "/api/v1/graphql", `{"query":"{ olmbundles(limit: 100, offset: 1000) { name package properties { type value } } }"}`, ""},
		{"all-zstd", http.MethodGet, "/api/v1/all", "", "zstd"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var n int64
			for b.Loop() {
				req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
				if tc.enc != "" {
					req.Header.Set("Accept-Encoding", tc.enc)
				}
				resp, err := plainClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				n, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || n == 0 {
					b.Fatalf("%s: %d, %d bytes", tc.path, resp.StatusCode, n)
				}
			}
			b.ReportMetric(float64(n), "wire-bytes")
		})
	}
}
