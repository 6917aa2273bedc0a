package httpcatalog_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/httpcatalog"
	"github.com/opmkit/opm/internal/shareddata"
)

// bigCatalog lays out at least n bundles: the reference renders copied
// under renamed packages, as bench/serve-fbc.sh builds its catalog.
func bigCatalog(b *testing.B, n int) string {
	b.Helper()
	refs, err := filepath.Glob(filepath.Join(shareddata.Require(b, "reference", "index"), "*.replaces.fbc.json"))
	if err != nil || len(refs) == 0 {
		b.Fatalf("no reference renders: %v", err)
	}
	dir := b.TempDir()
	bundles := 0
	for c := 1; bundles < n; c++ {
		for _, f := range refs {
			data, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			pkg := strings.SplitN(filepath.Base(f), ".", 2)[0]
			out := strings.ReplaceAll(string(data), pkg, pkg+"-c"+string(rune('0'+c%10))+strings.Repeat("x", c/10))
			p := filepath.Join(dir, filepath.Base(f)+"-"+strings.Repeat("c", c))
			if err := os.MkdirAll(p, 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(p, "catalog.json"), []byte(out), 0o644); err != nil {
				b.Fatal(err)
			}
			bundles += strings.Count(out, `"schema": "olm.bundle"`)
		}
	}
	return dir
}

// BenchmarkBuild stores a catalog of >=5,000 bundles as the HTTP server
// does at start-up.
func BenchmarkBuild(b *testing.B) {
	dir := bigCatalog(b, 5000)
	b.ReportAllocs()
	for b.Loop() {
		s, err := httpcatalog.Build(os.DirFS(dir), b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(s.Size())
		_ = s.Close()
	}
}

// BenchmarkAll reads /api/v1/all of that catalog over loopback, plain and
// gzip, and a metas query of one package.
func BenchmarkAll(b *testing.B) {
	dir := bigCatalog(b, 5000)
	s, err := httpcatalog.Build(os.DirFS(dir), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	srv := httptest.NewServer(httpcatalog.Handler(s, httpcatalog.Options{Metas: true}))
	defer srv.Close()
	for _, tc := range []struct{ name, path, enc string }{
		{"all-plain", "/api/v1/all", ""},
		{"all-gzip", "/api/v1/all", "gzip"},
		{"metas-package", "/api/v1/metas?package=etcd-c1", ""},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var n int64
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodGet, srv.URL+tc.path, nil)
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
