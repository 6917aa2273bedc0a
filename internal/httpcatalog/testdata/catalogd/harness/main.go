// Command harness records catalogd's HTTP answers for opm's replay test
// (internal/httpcatalog/catalogd_test.go). It is built inside a work tree
// of operator-controller, whose internal packages it imports; see
// ../README.md. It is opm's code, not catalogd's: it only drives catalogd's
// storage, its HTTP handlers and the compression middleware catalogd wraps
// them in, as catalogd's main does.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/gzhttp"
	"github.com/klauspost/compress/zstd"

	"github.com/operator-framework/operator-controller/internal/catalogd/storage"
)

type request struct {
	Name   string            `json:"name"`
	Method string            `json:"method"`
	Path   string            `json:"path"`
	Header map[string]string `json:"header,omitempty"`
	Body   string            `json:"body,omitempty"`
	// BodyRepeat, when set, sends Body repeated this many times between
	// BodyPrefix and BodySuffix (large bodies).
	BodyRepeat int    `json:"bodyRepeat,omitempty"`
	BodyPrefix string `json:"bodyPrefix,omitempty"`
	BodySuffix string `json:"bodySuffix,omitempty"`
}

type response struct {
	Status int               `json:"status"`
	Header map[string]string `json:"header"`
	// Body is the decoded body when at most maxBody bytes and not JSON
	// lines (catalog content, checked by digest); else only its digest.
	Body       *string `json:"body,omitempty"`
	BodySHA256 string  `json:"bodySHA256"`
	BodyLen    int     `json:"bodyLen"`
}

type answer struct {
	request
	Response response `json:"response"`
}

const maxBody = 64 << 10

func main() {
	catalog := flag.String("catalog", "", "catalog directory or single FBC file")
	name := flag.String("name", "test-catalog", "ClusterCatalog name to store it under")
	reqs := flag.String("requests", "", "JSON file: a list of requests")
	out := flag.String("out", "", "answers file to write")
	flag.Parse()

	var rs []request
	b, err := os.ReadFile(*reqs)
	if err != nil {
		log.Fatal(err)
	}
	if err := json.Unmarshal(b, &rs); err != nil {
		log.Fatal(err)
	}
	dir := *catalog
	if st, err := os.Stat(dir); err != nil {
		log.Fatal(err)
	} else if !st.IsDir() {
		tmp, err := os.MkdirTemp("", "harness-fbc-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		data, err := os.ReadFile(dir)
		if err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, filepath.Base(dir)), data, 0o600); err != nil {
			log.Fatal(err)
		}
		dir = tmp
	}
	root, err := os.MkdirTemp("", "harness-store-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	base, _ := url.Parse("http://localhost/catalogs/")
	st := storage.NewLocalDirV1(root, base, storage.MetasHandlerEnabled, storage.GraphQLQueriesEnabled)
	if err := st.Store(context.Background(), *name, os.DirFS(dir)); err != nil {
		log.Fatal(err)
	}
	// What catalogd's serverutil wraps its storage handler in (metrics and
	// logging aside).
	srv := httptest.NewServer(gzhttp.GzipHandler(st.StorageServerHandler()))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}

	var answers []answer
	for _, r := range rs {
		body := r.Body
		if r.BodyRepeat > 0 {
			body = r.BodyPrefix + strings.Repeat(body, r.BodyRepeat) + r.BodySuffix
		}
		req, err := http.NewRequest(r.Method, srv.URL+r.Path, strings.NewReader(body))
		if err != nil {
			log.Fatal(err)
		}
		for k, v := range r.Header {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			log.Fatalf("%s: %v", r.Name, err)
		}
		raw, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			log.Fatalf("%s: %v", r.Name, err)
		}
		decoded, err := decode(resp.Header.Get("Content-Encoding"), raw)
		if err != nil {
			log.Fatalf("%s: %v", r.Name, err)
		}
		h := map[string]string{}
		for k, v := range resp.Header {
			switch k {
			case "Date":
				continue
			case "Last-Modified":
				h[k] = "<set>"
				continue
			case "Content-Length":
				if resp.Header.Get("Content-Encoding") != "" {
					h[k] = "<compressed>"
					continue
				}
			}
			h[k] = strings.Join(v, ", ")
		}
		sum := sha256.Sum256(decoded)
		a := answer{request: r, Response: response{Status: resp.StatusCode, Header: h, BodySHA256: hex.EncodeToString(sum[:]), BodyLen: len(decoded)}}
		if len(decoded) <= maxBody && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/jsonl") {
			s := string(decoded)
			a.Response.Body = &s
		}
		answers = append(answers, a)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(answers); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "%d answers from catalogd written to %s\n", len(answers), *out)
}

// decode undoes the Content-Encoding catalogd chose.
func decode(enc string, b []byte) ([]byte, error) {
	switch enc {
	case "":
		return b, nil
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(zr)
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		return io.ReadAll(zr)
	}
	return nil, fmt.Errorf("unknown Content-Encoding %q", enc)
}
