package httpcatalog_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/opmkit/opm/internal/catalogql"
	"github.com/opmkit/opm/internal/httpcatalog"
	"github.com/opmkit/opm/internal/shareddata"
)

// catalogdAnswer is one request of testdata/catalogd and catalogd's answer
// to it, as the harness there recorded it (testdata/catalogd/README.md).
type catalogdAnswer struct {
	Name       string            `json:"name"`
	Method     string            `json:"method"`
	Path       string            `json:"path"`
	Header     map[string]string `json:"header"`
	Body       string            `json:"body"`
	BodyRepeat int               `json:"bodyRepeat"`
	BodyPrefix string            `json:"bodyPrefix"`
	BodySuffix string            `json:"bodySuffix"`
	// Opm is the GraphQL error opm answers instead of catalogd's answer
	// (hostile.requests.json: documents catalogd dies or hangs on).
	Opm      string `json:"opm"`
	Response struct {
		Status     int               `json:"status"`
		Header     map[string]string `json:"header"`
		Body       *string           `json:"body"`
		BodySHA256 string            `json:"bodySHA256"`
		BodyLen    int               `json:"bodyLen"`
		// Failure is what became of catalogd's process when it did not
		// answer (the harness's -isolate).
		Failure string `json:"failure"`
	} `json:"response"`
}

// TestCatalogdAnswers replays every request catalogd (operator-controller
// df2c201: its storage, HTTP handlers, GraphQL service and compression
// middleware) was recorded answering over testdata/catalogd/fixture, and
// compares opm's answers: status, headers, and the decoded body.
func TestCatalogdAnswers(t *testing.T) {
	t.Parallel()
	n := replayCatalogd(t, filepath.Join("testdata", "catalogd", "fixture"), filepath.Join("testdata", "catalogd", "fixture.answers.json"))
	t.Logf("%d catalogd answers replayed over the fixture", n)
}

// TestCatalogdAnswersReference does the same over reference renders of
// ../shared (upstream opm's renders of real index databases).
func TestCatalogdAnswersReference(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "catalogd", "reference", "*.answers.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded reference answers: %v", err)
	}
	for _, f := range files {
		render := strings.TrimSuffix(filepath.Base(f), ".answers.json") + ".fbc.json"
		t.Run(render, func(t *testing.T) {
			t.Parallel()
			p := shareddata.Require(t, "reference", "index", render)
			n := replayCatalogd(t, p, f)
			t.Logf("%d catalogd answers replayed over %s", n, render)
		})
	}
}

// TestCatalogdHostileDocuments replays documents graphql-go's parser and
// validation recurse on without bound: fragment cycles (which overflow
// catalogd's stack and kill its process), nesting tens of thousands deep,
// long and doubling fragment chains (which catalogd did not answer within
// 30 s). opm refuses each before validation with the error recorded beside
// catalogd's fate, and answers the others as catalogd does; a crash here
// takes the test binary down with it.
func TestCatalogdHostileDocuments(t *testing.T) {
	t.Parallel()
	n := replayCatalogd(t, filepath.Join("testdata", "catalogd", "fixture"), filepath.Join("testdata", "catalogd", "hostile.answers.json"))
	t.Logf("%d hostile documents replayed over the fixture", n)
}

// TestCatalogdAnswersBigBlob replays catalogd's answers over a catalog
// with a blob larger than its GraphQL queries read (16 MiB).
func TestCatalogdAnswersBigBlob(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: skipping the 17 MiB catalog")
	}
	n := replayCatalogd(t, bigBlobCatalog(t), filepath.Join("testdata", "catalogd", "big.answers.json"))
	t.Logf("%d catalogd answers replayed over a 17 MiB blob", n)
}

// bigBlobCatalog writes the catalog big.answers.json was recorded over: a blob
// of 17 MiB and a small one (README.md).
func bigBlobCatalog(t *testing.T) string {
	t.Helper()
	big := `{"schema":"big.blob","name":"big","x":"` + strings.Repeat("a", 17<<20) + "\"}\n" +
		`{"schema":"big.blob","name":"small"}` + "\n"
	return writeCatalog(t, map[string]string{"big.json": big})
}

func replayCatalogd(t *testing.T, catalog, answersFile string) int {
	t.Helper()
	data, err := os.ReadFile(answersFile)
	if err != nil {
		t.Fatal(err)
	}
	var answers []catalogdAnswer
	if err := json.Unmarshal(data, &answers); err != nil {
		t.Fatalf("%s: %v", answersFile, err)
	}
	dir := catalog
	if st, err := os.Stat(catalog); err != nil {
		t.Fatal(err)
	} else if !st.IsDir() {
		b, err := os.ReadFile(catalog)
		if err != nil {
			t.Fatal(err)
		}
		dir = writeCatalog(t, map[string]string{filepath.Base(catalog): string(b)})
	}
	s := build(t, dir)
	schema, err := catalogql.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	srv := server(t, s, httpcatalog.Options{Name: "test-catalog", Metas: true, GraphQL: schema})
	for _, a := range answers {
		body := a.Body
		if a.BodyRepeat > 0 {
			body = a.BodyPrefix + strings.Repeat(a.Body, a.BodyRepeat) + a.BodySuffix
		}
		req, err := http.NewRequest(a.Method, srv.URL+a.Path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range a.Header {
			req.Header.Set(k, v)
		}
		resp, err := plainClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", a.Name, err)
		}
		raw, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: %v", a.Name, err)
		}
		got, err := decodeBody(resp.Header.Get("Content-Encoding"), raw)
		if err != nil {
			t.Errorf("%s: %v", a.Name, err)
			continue
		}
		want := a.Response
		if a.Opm != "" {
			wantBody := `{"data":null,"errors":[{"message":` + jsonOf(a.Opm) + `,"locations":[]}]}` + "\n"
			if resp.StatusCode != http.StatusOK || string(got) != wantBody {
				t.Errorf("%s: %d %.500s, want 200 %s (catalogd: %d %s)", a.Name, resp.StatusCode, got, wantBody, want.Status, want.Failure)
			}
			continue
		}
		if want.Failure != "" {
			t.Errorf("%s: catalogd gave no answer (%s) and no opm answer is recorded", a.Name, want.Failure)
			continue
		}
		if resp.StatusCode != want.Status {
			t.Errorf("%s: status %d, catalogd %d (body %.300q)", a.Name, resp.StatusCode, want.Status, got)
		}
		if h := recordedHeader(resp.Header); !equalMaps(h, want.Header) {
			t.Errorf("%s: headers\n  opm      %v\n  catalogd %v", a.Name, h, want.Header)
		}
		if want.Body == nil {
			sum := sha256.Sum256(got)
			if hex.EncodeToString(sum[:]) != want.BodySHA256 {
				t.Errorf("%s: body of %d bytes differs from catalogd's %d bytes (sha256 %s)", a.Name, len(got), want.BodyLen, want.BodySHA256)
			}
			continue
		}
		if string(got) != *want.Body && canonicalGraphQL(got) != canonicalGraphQL([]byte(*want.Body)) {
			t.Errorf("%s: body\n  opm      %.2000s\n  catalogd %.2000s", a.Name, got, *want.Body)
		}
	}
	return len(answers)
}

// recordedHeader is a response's headers as the harness records them: no
// Date, Last-Modified only as set, and a compressed length only as such.
func recordedHeader(h http.Header) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		switch {
		case k == "Date":
			continue
		case k == "Last-Modified":
			out[k] = "<set>"
		case k == "Content-Length" && h.Get("Content-Encoding") != "":
			out[k] = "<compressed>"
		default:
			out[k] = strings.Join(v, ", ")
		}
	}
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func decodeBody(coding string, b []byte) ([]byte, error) {
	switch coding {
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
	return b, nil
}

// canonicalGraphQL sorts the lists catalogd answers in Go's map order,
// which differs from run to run: by name the summary's schemas and, in
// introspection, types and arguments; by their JSON the errors of fields
// that failed (graphql-go runs a selection's fields in map order).
// Anything else is compared as it is.
func canonicalGraphQL(b []byte) string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return string(b)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				l, ok := e.([]any)
				switch {
				case ok && (k == "schemas" || k == "types" || k == "args"):
					sort.SliceStable(l, func(i, j int) bool { return nameOf(l[i]) < nameOf(l[j]) })
				case ok && k == "errors":
					sort.SliceStable(l, func(i, j int) bool { return jsonOf(l[i]) < jsonOf(l[j]) })
				}
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	out, _ := json.Marshal(v)
	return string(out)
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func nameOf(v any) string {
	m, _ := v.(map[string]any)
	s, _ := m["name"].(string)
	return s
}
