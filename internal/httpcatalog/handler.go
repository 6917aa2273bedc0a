package httpcatalog

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/opmkit/opm/internal/catalogql"
)

// ContentType is what catalogd calls its JSON lines.
const ContentType = "application/jsonl"

// Options shape the handler.
type Options struct {
	// Name, when set, is the only catalog name /catalogs/{name}/... answers
	// (others are 404, as on catalogd for a catalog it does not hold); when
	// empty any valid name answers with this catalog.
	Name string
	// Metas serves /api/v1/metas (catalogd's APIV1MetasHandler gate, off
	// by default there).
	Metas bool
	// Logger, when set, logs every request at debug level.
	Logger *slog.Logger
	// GraphQL, when set, serves /api/v1/graphql from it (catalogd's
	// GraphQLCatalogQueries gate, off by default there).
	GraphQL *catalogql.Schema
	// GraphQLConcurrency is how many GraphQL queries run at once (0:
	// catalogql.DefaultConcurrency); others wait a second for a turn,
	// then are answered 429.
	GraphQLConcurrency int
	// UI, when set, makes the handler for every path the API does not
	// answer (opm serve --http-ui: internal/catalogui).
	UI func(*Store) http.Handler
	// GzipEncoders bounds the compressors of all compressed responses together
	// (about 800 KiB each); a response holds one only while it compresses
	// a 32 KiB chunk, and waits for one meanwhile. 0 means
	// DefaultGzipEncoders; negative compresses nothing.
	GzipEncoders int
}

// Handler answers catalogd's HTTP API for the one catalog in s, both at the
// root (/api/v1/...) and under catalogd's path (/catalogs/{name}/api/v1/...),
// so that a ClusterCatalog's status.urls.base can point at either.
func Handler(s *Store, opts Options) http.Handler {
	h := &handler{store: s, opts: opts}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/all", onlyMethods(h.all))
	mux.HandleFunc("/catalogs/{catalog}/api/v1/all", onlyMethods(h.named(h.all)))
	if opts.Metas {
		mux.HandleFunc("/api/v1/metas", onlyMethods(h.metas))
		mux.HandleFunc("/catalogs/{catalog}/api/v1/metas", onlyMethods(h.named(h.metas)))
	}
	if opts.GraphQL != nil {
		graphQLRoutes(mux, opts.GraphQL, opts.Name, opts.GraphQLConcurrency)
	}
	if opts.UI != nil {
		mux.Handle("/", opts.UI(s))
	}
	enc := opts.GzipEncoders
	if enc == 0 {
		enc = DefaultGzipEncoders
	}
	out := gzipHandler(mux, enc)
	if opts.Logger != nil {
		out = logRequests(opts.Logger, out)
	}
	return out
}

type handler struct {
	store *Store
	opts  Options
}

// onlyMethods answers 405 to anything but GET and HEAD, as catalogd does
// for both endpoints.
func onlyMethods(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
			return
		}
		next(w, r)
	}
}

// named checks the {catalog} path segment: a name that is not a DNS-1123
// subdomain is a 400 saying why (catalogd's check against path traversal),
// another catalog than ours a 404.
func (h *handler) named(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("catalog")
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			http.Error(w, "invalid catalog name: "+strings.Join(errs, "; "), http.StatusBadRequest)
			return
		}
		if h.opts.Name != "" && name != h.opts.Name {
			statusError(w, http.StatusNotFound)
			return
		}
		next(w, r)
	}
}

// statusError writes catalogd's error body: the code and its text.
func statusError(w http.ResponseWriter, code int) {
	http.Error(w, fmt.Sprintf("%d %s", code, http.StatusText(code)), code)
}

// all is GET /api/v1/all: the whole file, with Last-Modified, conditional
// requests, HEAD and ranges as net/http serves content.
func (h *handler) all(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Content-Type", ContentType)
	http.ServeContent(w, r, "", h.store.ModTime(), h.store.All())
}

// metas is GET /api/v1/metas?schema=&package=&name=.
func (h *handler) metas(w http.ResponseWriter, r *http.Request) {
	// r.URL.Query drops what it cannot parse (a bad escape, a semicolon,
	// more parameters than Go allows), which would turn a filtered query
	// into the whole catalog: refuse it instead.
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		http.Error(w, "400 Bad Request: invalid query: "+clip(err.Error()), http.StatusBadRequest)
		return
	}
	for p := range q {
		if p != "schema" && p != "package" && p != "name" {
			statusError(w, http.StatusBadRequest)
			return
		}
	}
	modTime := h.store.ModTime()
	w.Header().Set("Last-Modified", modTime.UTC().Format(http.TimeFormat))
	if preconditionsAnswered(w, r, modTime) {
		return
	}
	w.Header().Add("Content-Type", ContentType)
	if r.Method == http.MethodHead {
		return
	}
	// An error here is the client going away mid-body; the status is sent.
	// Copying through Write alone (not the connection's ReadFrom) lets
	// net/http give a short body its Content-Length, as catalogd's does.
	_, _ = io.Copy(writerOnly{w}, h.store.Query(q.Get("schema"), q.Get("package"), q.Get("name")))
}

// preconditionsAnswered applies RFC 9110's conditional request headers to
// a resource with this modification time and no entity tag, and reports
// whether it answered (304 Not Modified or 412 Precondition Failed).
// Dates that do not parse are ignored, as net/http ignores them.
func preconditionsAnswered(w http.ResponseWriter, r *http.Request, modTime time.Time) bool {
	modTime = modTime.Truncate(time.Second) // Last-Modified has whole seconds
	failed := false
	if im := strings.TrimSpace(r.Header.Get("If-Match")); im != "" {
		failed = !strings.Contains(im, "*") // no entity tag can match ours: there is none
	} else if ius := r.Header.Get("If-Unmodified-Since"); ius != "" {
		if t, err := http.ParseTime(ius); err == nil && modTime.After(t) {
			failed = true
		}
	}
	if failed {
		w.WriteHeader(http.StatusPreconditionFailed)
		return true
	}
	if inm := strings.TrimSpace(r.Header.Get("If-None-Match")); inm != "" {
		if strings.Contains(inm, "*") {
			notModified(w)
			return true
		}
		return false // a tag that is not ours: the content is sent
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" {
		if t, err := http.ParseTime(ims); err == nil && !modTime.After(t) {
			notModified(w)
			return true
		}
	}
	return false
}

// writerOnly hides a ResponseWriter's ReadFrom.
type writerOnly struct{ io.Writer }

func notModified(w http.ResponseWriter) {
	h := w.Header()
	h.Del("Content-Type")
	h.Del("Content-Length")
	h.Del("Content-Encoding")
	w.WriteHeader(http.StatusNotModified)
}

// logRequests logs each request once answered.
func logRequests(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(sw, r)
		log.Debug("handled request", "method", r.Method, "uri", r.URL.RequestURI(), "status", sw.code,
			"bytes", sw.n, "remote", r.RemoteAddr, "took", time.Since(start).Round(time.Microsecond).String())
	})
}

type statusWriter struct {
	http.ResponseWriter
	code int
	n    int64
}

func (s *statusWriter) WriteHeader(code int) {
	s.code = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	n, err := s.ResponseWriter.Write(p)
	s.n += int64(n)
	return n, err
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
