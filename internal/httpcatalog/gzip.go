package httpcatalog

import (
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
)

// GzipMinSize is the body size above which responses are compressed for
// clients that accept gzip: catalogd documents that bodies of more than
// 1,400 bytes (about one packet) are compressed; smaller ones would gain
// nothing on the wire.
const GzipMinSize = 1400

// gzipHandler compresses responses as catalogd's compression middleware
// does: every response says Vary: Accept-Encoding; a GET whose client
// accepts gzip and whose body is larger than GzipMinSize is sent with
// Content-Encoding: gzip, without Content-Length and Accept-Ranges; HEAD,
// partial content (Content-Range) and bodies already encoded are sent
// as they are.
func gzipHandler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Accept-Encoding")
		if r.Method == http.MethodHead || !acceptsGzip(r.Header.Get("Accept-Encoding")) {
			next.ServeHTTP(w, r)
			return
		}
		gw := &gzipWriter{ResponseWriter: w}
		defer gw.close()
		next.ServeHTTP(gw, r)
	})
}

// acceptsGzip reads an Accept-Encoding header: gzip (or *) with a quality
// above zero.
func acceptsGzip(h string) bool {
	for _, part := range strings.Split(h, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "x-gzip" && coding != "*" {
			continue
		}
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		if q > 0 {
			return true
		}
	}
	return false
}

// gzipWriter holds the status and up to GzipMinSize bytes until it knows
// whether the body is large enough to compress.
type gzipWriter struct {
	http.ResponseWriter
	code    int
	buf     []byte
	decided bool
	gz      *gzip.Writer
}

func (g *gzipWriter) WriteHeader(code int) {
	if g.decided || g.code != 0 {
		g.ResponseWriter.WriteHeader(code)
		return
	}
	if code < 200 || code == http.StatusNoContent || code == http.StatusNotModified {
		g.decide(false) // no body to compress
		g.ResponseWriter.WriteHeader(code)
		return
	}
	g.code = code
}

func (g *gzipWriter) Write(p []byte) (int, error) {
	if g.decided {
		if g.gz != nil {
			return g.gz.Write(p)
		}
		return g.ResponseWriter.Write(p)
	}
	h := g.Header()
	if h.Get("Content-Encoding") != "" || h.Get("Content-Range") != "" {
		g.decide(false)
		return g.Write(p)
	}
	if cl, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64); err == nil {
		g.decide(cl > GzipMinSize)
		return g.Write(p)
	}
	g.buf = append(g.buf, p...)
	if len(g.buf) > GzipMinSize {
		g.decide(true)
	}
	return len(p), nil
}

// decide sends the header, compressing or not, and what was held back.
func (g *gzipWriter) decide(compress bool) {
	g.decided = true
	h := g.Header()
	if compress {
		h.Set("Content-Encoding", "gzip")
		h.Del("Content-Length")
		h.Del("Accept-Ranges")
		g.gz = gzip.NewWriter(g.ResponseWriter)
	}
	if g.code != 0 {
		g.ResponseWriter.WriteHeader(g.code)
	}
	if len(g.buf) > 0 {
		buf := g.buf
		g.buf = nil
		if g.gz != nil {
			_, _ = g.gz.Write(buf) // a failed write shows on the next Write or close
		} else {
			_, _ = g.ResponseWriter.Write(buf)
		}
	}
}

func (g *gzipWriter) close() {
	if !g.decided {
		g.decide(false)
	}
	if g.gz != nil {
		_ = g.gz.Close() // the client went away: nothing to tell it
	}
}

func (g *gzipWriter) Flush() {
	if !g.decided {
		return
	}
	if g.gz != nil {
		_ = g.gz.Flush()
	}
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (g *gzipWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }
