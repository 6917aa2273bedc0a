package httpcatalog_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opmkit/opm/internal/httpcatalog"
	"github.com/opmkit/opm/internal/shareddata"
)

// A small catalog in two files, JSON and YAML, with an ignored file, blobs
// of several schemas interleaved, keys out of order and HTML characters.
var files = map[string]string{
	"a/catalog.json": `{"schema":"olm.package","name":"a","defaultChannel":"stable","description":"<b>a & b</b>` + long + `"}
{"schema":"olm.channel","package":"a","name":"stable","entries":[{"name":"a.v1"}]}
{"name":"a.v1","schema":"olm.bundle","package":"a","image":"r/a:1","properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.0.0"}}]}
`,
	"b/catalog.yaml": `schema: olm.package
name: b
defaultChannel: alpha
---
schema: olm.bundle
package: b
name: b.v1
image: r/b:1
properties:
- type: olm.package
  value: {packageName: b, version: 1.0.0, size: 12}
---
schema: olm.channel
package: b
name: alpha
entries:
- name: b.v1
---
schema: custom.thing
Package: b
value: 1
`,
	"notes.txt":      "not a catalog file",
	"skip/x.json":    `{"schema":"olm.package","name":"skipped"}`,
	".indexignore":   "skip/\n",
	"b/.indexignore": "",
}

// long makes the catalog large enough to be compressed.
var long = strings.Repeat(" words", 150)

// wantLines is what catalogd stores for files: each blob re-encoded with
// sorted keys and no HTML escaping, in walk order.
var wantLines = []string{
	`{"defaultChannel":"stable","description":"<b>a & b</b>` + long + `","name":"a","schema":"olm.package"}`,
	`{"entries":[{"name":"a.v1"}],"name":"stable","package":"a","schema":"olm.channel"}`,
	`{"image":"r/a:1","name":"a.v1","package":"a","properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.0.0"}}],"schema":"olm.bundle"}`,
	`{"defaultChannel":"alpha","name":"b","schema":"olm.package"}`,
	`{"image":"r/b:1","name":"b.v1","package":"b","properties":[{"type":"olm.package","value":{"packageName":"b","size":12,"version":"1.0.0"}}],"schema":"olm.bundle"}`,
	`{"entries":[{"name":"b.v1"}],"name":"alpha","package":"b","schema":"olm.channel"}`,
	`{"Package":"b","schema":"custom.thing","value":1}`,
}

func writeCatalog(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func build(t testing.TB, dir string) *httpcatalog.Store {
	t.Helper()
	s, err := httpcatalog.Build(os.DirFS(dir), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// server starts the handler on a real loopback listener.
func server(t *testing.T, s *httpcatalog.Store, opts httpcatalog.Options) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(httpcatalog.Handler(s, opts))
	t.Cleanup(srv.Close)
	return srv
}

// plainClient sends exactly the headers a test sets: no transparent gzip.
var plainClient = &http.Client{Transport: &http.Transport{DisableCompression: true}}

func do(t *testing.T, method, url string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := plainClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("body is not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestStoreLinesAsCatalogd(t *testing.T) {
	t.Parallel()
	s := build(t, writeCatalog(t, files))
	b, err := io.ReadAll(s.All())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), strings.Join(wantLines, "\n")+"\n"; got != want {
		t.Fatalf("catalog.jsonl:\n%s\nwant:\n%s", got, want)
	}
	if s.Blobs() != len(wantLines) {
		t.Errorf("Blobs() = %d, want %d", s.Blobs(), len(wantLines))
	}
}

func TestBuildRefusesBadCatalog(t *testing.T) {
	t.Parallel()
	for name, fs := range map[string]map[string]string{
		"syntax":   {"x/catalog.json": `{"schema":"olm.package",`},
		"not-obj":  {"x/catalog.json": `["schema"]`},
		"dup-keys": {"x/catalog.json": `{"schema":"olm.package","Schema":"olm.bundle"}`},
	} {
		_, err := httpcatalog.Build(os.DirFS(writeCatalog(t, fs)), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "x/catalog.json") {
			t.Errorf("%s: err = %v, want an error naming x/catalog.json", name, err)
		}
	}
}

func TestAll(t *testing.T) {
	t.Parallel()
	s := build(t, writeCatalog(t, files))
	srv := server(t, s, httpcatalog.Options{})
	want := strings.Join(wantLines, "\n") + "\n"
	if len(want) < httpcatalog.GzipMinSize {
		t.Fatalf("fixture too small (%d bytes) to exercise gzip", len(want))
	}
	for _, path := range []string{"/api/v1/all", "/catalogs/any-name/api/v1/all"} {
		resp, body := do(t, http.MethodGet, srv.URL+path, nil)
		if resp.StatusCode != 200 || string(body) != want {
			t.Fatalf("GET %s: %d %q", path, resp.StatusCode, body)
		}
		for k, v := range map[string]string{
			"Content-Type": "application/jsonl", "Vary": "Accept-Encoding", "Accept-Ranges": "bytes",
			"Last-Modified": s.ModTime().UTC().Format(http.TimeFormat),
		} {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("GET %s: %s = %q, want %q", path, k, got, v)
			}
		}
		if resp.ContentLength != int64(len(want)) || resp.Header.Get("Content-Encoding") != "" {
			t.Errorf("GET %s: length %d encoding %q, want %d plain", path, resp.ContentLength, resp.Header.Get("Content-Encoding"), len(want))
		}
	}

	// gzip when asked for, without Accept-Ranges and the plain length
	// (net/http sets the compressed one when the body fits its buffer).
	resp, body := do(t, http.MethodGet, srv.URL+"/api/v1/all", map[string]string{"Accept-Encoding": "gzip, deflate"})
	if resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Accept-Ranges") != "" || resp.ContentLength == int64(len(want)) {
		t.Fatalf("gzip GET: headers %v", resp.Header)
	}
	if got := string(gunzip(t, body)); got != want {
		t.Fatalf("gunzipped body %q", got)
	}
	if resp.Header.Get("Content-Type") != "application/jsonl" || resp.Header.Get("Vary") != "Accept-Encoding" {
		t.Errorf("gzip GET: headers %v", resp.Header)
	}
	// gzip;q=0 is a refusal.
	resp, body = do(t, http.MethodGet, srv.URL+"/api/v1/all", map[string]string{"Accept-Encoding": "gzip;q=0"})
	if resp.Header.Get("Content-Encoding") != "" || string(body) != want {
		t.Errorf("gzip;q=0 GET: %v", resp.Header)
	}
	// Go's default client asks for gzip and decompresses transparently.
	dresp, err := http.Get(srv.URL + "/api/v1/all")
	if err != nil {
		t.Fatal(err)
	}
	dbody, _ := io.ReadAll(dresp.Body)
	dresp.Body.Close()
	if !dresp.Uncompressed || string(dbody) != want {
		t.Errorf("default client: uncompressed=%v body %q", dresp.Uncompressed, dbody)
	}

	// HEAD: the headers of GET, no body, never compressed.
	resp, body = do(t, http.MethodHead, srv.URL+"/api/v1/all", map[string]string{"Accept-Encoding": "gzip"})
	if resp.StatusCode != 200 || len(body) != 0 || resp.ContentLength != int64(len(want)) || resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("HEAD: %d len %d body %q headers %v", resp.StatusCode, resp.ContentLength, body, resp.Header)
	}

	// Conditional requests.
	lm := resp.Header.Get("Last-Modified")
	resp, body = do(t, http.MethodGet, srv.URL+"/api/v1/all", map[string]string{"If-Modified-Since": lm, "Accept-Encoding": "gzip"})
	if resp.StatusCode != http.StatusNotModified || len(body) != 0 || resp.Header.Get("Content-Encoding") != "" || resp.Header.Get("Last-Modified") != lm {
		t.Errorf("If-Modified-Since now: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	earlier := s.ModTime().Add(-time.Hour).UTC().Format(http.TimeFormat)
	resp, body = do(t, http.MethodGet, srv.URL+"/api/v1/all", map[string]string{"If-Modified-Since": earlier})
	if resp.StatusCode != 200 || string(body) != want {
		t.Errorf("If-Modified-Since earlier: %d", resp.StatusCode)
	}
	resp, _ = do(t, http.MethodGet, srv.URL+"/api/v1/all", map[string]string{"If-Unmodified-Since": earlier})
	if resp.StatusCode != http.StatusPreconditionFailed {
		t.Errorf("If-Unmodified-Since earlier: %d, want 412", resp.StatusCode)
	}

	// A range is served plain, even to a gzip client.
	resp, body = do(t, http.MethodGet, srv.URL+"/api/v1/all", map[string]string{"Range": "bytes=0-9", "Accept-Encoding": "gzip"})
	if resp.StatusCode != http.StatusPartialContent || string(body) != want[:10] || resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("Range: %d %q %v", resp.StatusCode, body, resp.Header)
	}
}

func TestGzipThreshold(t *testing.T) {
	t.Parallel()
	// One blob padded so that its line is exactly n bytes.
	line := func(n int) string {
		base := `{"pad":"","schema":"x"}`
		return strings.Replace(base, `"pad":""`, `"pad":"`+strings.Repeat("p", n-len(base)-1)+`"`, 1)
	}
	for _, tc := range []struct {
		size int
		gzip bool
	}{{httpcatalog.GzipMinSize - 1, false}, {httpcatalog.GzipMinSize, true}} {
		l := line(tc.size)
		s := build(t, writeCatalog(t, map[string]string{"c.json": l}))
		if s.Size() != int64(tc.size) {
			t.Fatalf("line of %d bytes stored as %d", tc.size, s.Size())
		}
		srv := server(t, s, httpcatalog.Options{Metas: true})
		for _, path := range []string{"/api/v1/all", "/api/v1/metas?schema=x"} {
			resp, body := do(t, http.MethodGet, srv.URL+path, map[string]string{"Accept-Encoding": "gzip"})
			got := resp.Header.Get("Content-Encoding") == "gzip"
			if got != tc.gzip {
				t.Errorf("%s with a %d-byte body: gzip=%v, want %v", path, tc.size, got, tc.gzip)
			}
			if got {
				body = gunzip(t, body)
			}
			if string(body) != l+"\n" && string(body) != l {
				t.Errorf("%s: body %q", path, body)
			}
		}
	}
}

func TestMetas(t *testing.T) {
	t.Parallel()
	s := build(t, writeCatalog(t, files))
	srv := server(t, s, httpcatalog.Options{Metas: true, Name: "mine"})
	for _, tc := range []struct {
		query string
		want  []int // indexes into wantLines
	}{
		{"", []int{0, 1, 2, 3, 4, 5, 6}},
		{"schema=olm.bundle", []int{2, 4}},
		{"package=b", []int{4, 5, 6}}, // custom.thing's "Package" counts, case-folded
		{"schema=olm.package&name=b", []int{3}},
		{"schema=olm.channel&package=a&name=stable", []int{1}},
		{"name=a.v1&package=b", nil},
		{"schema=nope", nil},
		{"schema=", []int{0, 1, 2, 3, 4, 5, 6}},
	} {
		for _, base := range []string{"/api/v1/metas", "/catalogs/mine/api/v1/metas"} {
			resp, body := do(t, http.MethodGet, srv.URL+base+"?"+tc.query, nil)
			var want string
			for _, i := range tc.want {
				want += wantLines[i] + "\n"
			}
			if resp.StatusCode != 200 || string(body) != want {
				t.Errorf("GET %s?%s: %d\n%s\nwant\n%s", base, tc.query, resp.StatusCode, body, want)
			}
			if len(tc.want) > 0 && resp.Header.Get("Content-Type") != "application/jsonl" {
				t.Errorf("GET %s?%s: Content-Type %q", base, tc.query, resp.Header.Get("Content-Type"))
			}
			if resp.Header.Get("Last-Modified") != s.ModTime().UTC().Format(http.TimeFormat) {
				t.Errorf("GET %s?%s: Last-Modified %q", base, tc.query, resp.Header.Get("Last-Modified"))
			}
		}
	}
	// Each line of a query answer is a JSON object, as jq -c reads them.
	_, body := do(t, http.MethodGet, srv.URL+"/api/v1/metas?package=a", nil)
	sc := bufio.NewScanner(bytes.NewReader(body))
	n := 0
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		n++
	}
	if n != 2 { // the olm.package blob has a name, no package
		t.Errorf("package=a: %d lines, want 2", n)
	}

	resp, body := do(t, http.MethodGet, srv.URL+"/api/v1/metas?schema=olm.bundle&version=1", nil)
	if resp.StatusCode != 400 || string(body) != "400 Bad Request\n" || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("unknown parameter: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	lm := s.ModTime().UTC().Format(http.TimeFormat)
	resp, body = do(t, http.MethodGet, srv.URL+"/api/v1/metas?package=a", map[string]string{"If-Modified-Since": lm})
	if resp.StatusCode != 304 || len(body) != 0 || resp.Header.Get("Last-Modified") != lm || resp.Header.Get("Content-Type") != "" {
		t.Errorf("If-Modified-Since: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	resp, _ = do(t, http.MethodGet, srv.URL+"/api/v1/metas", map[string]string{"If-Modified-Since": "not a date"})
	if resp.StatusCode != 200 {
		t.Errorf("unparsable If-Modified-Since: %d, want 200", resp.StatusCode)
	}
	resp, _ = do(t, http.MethodGet, srv.URL+"/api/v1/metas", map[string]string{"If-None-Match": "*"})
	if resp.StatusCode != 304 {
		t.Errorf("If-None-Match *: %d, want 304", resp.StatusCode)
	}
	resp, _ = do(t, http.MethodGet, srv.URL+"/api/v1/metas", map[string]string{"If-Match": `"abc"`})
	if resp.StatusCode != 412 {
		t.Errorf("If-Match: %d, want 412", resp.StatusCode)
	}
	resp, body = do(t, http.MethodHead, srv.URL+"/api/v1/metas?package=a", nil)
	if resp.StatusCode != 200 || len(body) != 0 || resp.Header.Get("Content-Type") != "application/jsonl" {
		t.Errorf("HEAD metas: %d %q %v", resp.StatusCode, body, resp.Header)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	s := build(t, writeCatalog(t, files))
	srv := server(t, s, httpcatalog.Options{Name: "mine"})
	for _, tc := range []struct {
		method, path string
		code         int
		body         string
	}{
		{http.MethodPost, "/api/v1/all", 405, "Method Not Allowed\n"},
		{http.MethodDelete, "/catalogs/mine/api/v1/all", 405, "Method Not Allowed\n"},
		{http.MethodGet, "/catalogs/other/api/v1/all", 404, "404 Not Found\n"},
		{http.MethodGet, "/catalogs/Bad_Name/api/v1/all", 400, ""},
		{http.MethodGet, "/api/v1/metas", 404, "404 page not found\n"}, // the gate is off
		{http.MethodGet, "/api/v2/all", 404, "404 page not found\n"},
	} {
		resp, body := do(t, tc.method, srv.URL+tc.path, nil)
		if resp.StatusCode != tc.code {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.code)
		}
		if tc.body != "" && string(body) != tc.body {
			t.Errorf("%s %s: body %q, want %q", tc.method, tc.path, body, tc.body)
		}
		if tc.code == 400 && !strings.HasPrefix(string(body), "invalid catalog name: a lowercase RFC 1123 subdomain") {
			t.Errorf("%s %s: body %q", tc.method, tc.path, body)
		}
		if resp.Header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("%s %s: no Vary", tc.method, tc.path)
		}
	}
}

// TestReferenceRender serves an upstream render and checks that /all holds
// every blob of it and metas finds each bundle by name.
func TestReferenceRender(t *testing.T) {
	t.Parallel()
	render := shareddata.Require(t, "reference", "index", "etcd.replaces.fbc.json")
	data, err := os.ReadFile(render)
	if err != nil {
		t.Fatal(err)
	}
	s := build(t, writeCatalog(t, map[string]string{"etcd/catalog.json": string(data)}))
	srv := server(t, s, httpcatalog.Options{Metas: true})
	dec := json.NewDecoder(bytes.NewReader(data))
	var bundles []string
	n := 0
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		n++
		if m["schema"] == "olm.bundle" {
			bundles = append(bundles, m["name"].(string))
		}
	}
	resp, err := http.Get(srv.URL + "/api/v1/all")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if lines := bytes.Count(body, []byte("\n")); lines != n {
		t.Fatalf("/all has %d lines, the render %d blobs", lines, n)
	}
	for _, b := range bundles {
		_, body := do(t, http.MethodGet, srv.URL+"/api/v1/metas?schema=olm.bundle&name="+b, nil)
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil || m["name"] != b || bytes.Count(body, []byte("\n")) != 1 {
			t.Errorf("metas name=%s: %q", b, body)
		}
	}
}

// Start stores the catalog in the background; Wait listens and serves it as
// Listen would, and what nobody waited for, or could not listen, leaves no
// temporary copy behind.
func TestStartInBackground(t *testing.T) {
	dir := writeCatalog(t, files)
	bad := writeCatalog(t, map[string]string{"x/catalog.json": `{"schema":`})
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	left := func() []os.DirEntry {
		entries, err := os.ReadDir(tmp)
		if err != nil {
			t.Fatal(err)
		}
		return entries
	}

	p := httpcatalog.Start(dir, httpcatalog.ServerOptions{Addr: "127.0.0.1:0"})
	srv, _, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	resp, body := do(t, http.MethodGet, "http://"+srv.Addr().String()+"/catalogs/x/api/v1/all", nil)
	if resp.StatusCode != http.StatusOK || string(body) != strings.Join(wantLines, "\n")+"\n" {
		t.Errorf("GET /api/v1/all = %d:\n%s", resp.StatusCode, body)
	}
	cancel()
	<-done
	p.Close() // the caller owns srv: Close leaves it alone
	if len(left()) == 0 {
		t.Fatal("Close of a Pending released the server Wait handed out")
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if l := left(); len(l) != 0 {
		t.Fatalf("left behind: %v", l)
	}

	// Nobody waits: Close releases the store.
	httpcatalog.Start(dir, httpcatalog.ServerOptions{Addr: "127.0.0.1:0"}).Close()
	if l := left(); len(l) != 0 {
		t.Fatalf("left behind by an unused Start: %v", l)
	}

	// A busy address fails Wait and releases the store.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	p = httpcatalog.Start(dir, httpcatalog.ServerOptions{Addr: busy.Addr().String()})
	if _, _, err := p.Wait(); err == nil {
		t.Fatal("Wait on a busy address succeeded")
	}
	p.Close()
	if l := left(); len(l) != 0 {
		t.Fatalf("left behind by a failed listen: %v", l)
	}

	// A bad catalog fails Wait.
	if _, _, err := httpcatalog.Start(bad, httpcatalog.ServerOptions{Addr: "127.0.0.1:0"}).Wait(); err == nil || !strings.Contains(err.Error(), "catalog.json") {
		t.Fatalf("Wait on a bad catalog = %v", err)
	}
}

// TestMetasRefusesUnparsableQuery: a query Go cannot parse is a 400, not
// the whole catalog (which is what dropping its bad parts would answer).
func TestMetasRefusesUnparsableQuery(t *testing.T) {
	t.Parallel()
	s := build(t, writeCatalog(t, files))
	srv := server(t, s, httpcatalog.Options{Metas: true})
	many := strings.Repeat("name=x&", 10_001) + "schema=olm.bundle"
	for name, query := range map[string]string{
		"bad-escape": "schema=%ZZ",
		"semicolon":  "schema=olm.bundle;name=a.v1",
		"too-many":   many,
	} {
		resp, body := do(t, http.MethodGet, srv.URL+"/api/v1/metas?"+query, nil)
		if resp.StatusCode != 400 || !strings.HasPrefix(string(body), "400 Bad Request: invalid query: ") || len(body) > 200 {
			t.Errorf("%s: %d %.300q", name, resp.StatusCode, body)
		}
	}
}

// TestBuildErrorsQuoteBriefly: an error about a huge input repeats at
// most a short prefix of it.
func TestBuildErrorsQuoteBriefly(t *testing.T) {
	t.Parallel()
	huge := "1" + strings.Repeat("0", 1<<20)
	_, err := httpcatalog.Build(os.DirFS(writeCatalog(t, map[string]string{
		"x/catalog.json": `{"schema":"olm.package","name":"x","n":` + huge + `}`,
	})), t.TempDir())
	if err == nil {
		t.Fatal("a number beyond float64 was stored")
	}
	if msg := err.Error(); len(msg) > 300 || !strings.Contains(msg, "x/catalog.json") || !strings.Contains(msg, "number 1000") || !strings.Contains(msg, "000…") {
		t.Errorf("error of %d bytes: %.400s", len(msg), msg)
	}
}
