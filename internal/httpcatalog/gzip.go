package httpcatalog

import (
	"net/http"
	"strconv"
)

// GzipMinSize is the body size from which responses are compressed for
// clients that accept gzip or zstd: catalogd's middleware compresses from
// 1,024 bytes (its documentation says more than 1,400); smaller bodies
// would gain nothing on the wire.
const GzipMinSize = 1024

// gzipHandler compresses responses as catalogd's compression middleware
// does: every response says Vary: Accept-Encoding; a GET whose client
// accepts gzip or zstd (negotiate) and whose body is GzipMinSize or more is
// sent with that Content-Encoding, without Content-Length and
// Accept-Ranges; HEAD, partial content (Content-Range) and bodies already
// encoded are sent as they are.
func gzipHandler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Accept-Encoding")
		coding := negotiate(r)
		if coding == "" {
			next.ServeHTTP(w, r)
			return
		}
		gw := &gzipWriter{ResponseWriter: w, coding: coding}
		defer gw.close()
		next.ServeHTTP(gw, r)
	})
}

// gzipWriter holds the status and up to GzipMinSize bytes until it knows
// whether the body is large enough to compress.
type gzipWriter struct {
	http.ResponseWriter
	code    int
	buf     []byte
	decided bool
	coding  string // negotiated: gzip or zstd
	gz      compressor
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
		g.decide(cl >= GzipMinSize)
		return g.Write(p)
	}
	g.buf = append(g.buf, p...)
	if len(g.buf) >= GzipMinSize {
		g.decide(true)
	}
	return len(p), nil
}

// decide sends the header, compressing or not, and what was held back.
func (g *gzipWriter) decide(compress bool) {
	g.decided = true
	h := g.Header()
	if compress {
		h.Set("Content-Encoding", g.coding)
		h.Del("Content-Length")
		h.Del("Accept-Ranges")
		g.gz = newCompressor(g.coding, g.ResponseWriter)
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
