package httpcatalog

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// GzipMinSize is the body size above which responses are compressed for
// clients that accept gzip: catalogd documents that bodies of more than
// 1,400 bytes (about one packet) are compressed; smaller ones would gain
// nothing on the wire.
const GzipMinSize = 1400

// DefaultGzipEncoders is how many responses may be compressing a chunk at
// once (Options.GzipEncoders).
const DefaultGzipEncoders = 4

// gzipChunk is how much of a body is compressed at a time: a response
// holds at most one compressed chunk while its client is slow, never a
// compressor.
const gzipChunk = 32 << 10

// encoderPool is the compressors of all responses together: at most n
// exist (each about 800 KiB), and a response holds one only while it
// compresses a chunk, never while it waits for its client.
type encoderPool struct {
	free   chan *flate.Writer
	tokens chan struct{} // one per compressor made
}

func newEncoderPool(n int) *encoderPool {
	return &encoderPool{free: make(chan *flate.Writer, n), tokens: make(chan struct{}, n)}
}

// get waits for a free compressor, making one while fewer than n exist.
func (p *encoderPool) get() *flate.Writer {
	select {
	case w := <-p.free:
		return w
	default:
	}
	select {
	case w := <-p.free:
		return w
	case p.tokens <- struct{}{}:
		w, _ := flate.NewWriter(io.Discard, flate.DefaultCompression) // the level is valid
		return w
	}
}

func (p *encoderPool) put(w *flate.Writer) { p.free <- w }

// chunkBufs holds the compressed chunks of responses being written, and
// inBufs the chunks being gathered: a response waiting for its client
// holds neither of the latter.
var (
	chunkBufs = sync.Pool{New: func() any { return bytes.NewBuffer(make([]byte, 0, gzipChunk+gzipChunk/8)) }}
	inBufs    = sync.Pool{New: func() any { b := make([]byte, 0, gzipChunk); return &b }}
)

// gzipHandler compresses responses as catalogd's compression middleware
// does: every response says Vary: Accept-Encoding; a GET whose client
// accepts gzip and whose body is larger than GzipMinSize is sent with
// Content-Encoding: gzip, without Content-Length and Accept-Ranges; HEAD,
// partial content (Content-Range) and bodies already encoded are sent
// as they are. encoders 0 compresses nothing.
//
// The body is compressed a chunk at a time, each chunk with a compressor
// taken from the shared pool and returned before the chunk is written to
// the client, and sent as deflate blocks ending on a byte boundary (a
// sync flush), which one gzip member may hold one after another. So a
// client that does not read holds one compressed chunk (at most
// gzipChunk and a few bytes), as a plain response holds its copy buffer,
// instead of a compressor of its own; the compressors of all responses
// together are at most encoders.
func gzipHandler(next http.Handler, encoders int) http.Handler {
	pool := newEncoderPool(max(encoders, 1))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Accept-Encoding")
		if encoders <= 0 || r.Method == http.MethodHead || !acceptsGzip(r.Header.Get("Accept-Encoding")) {
			next.ServeHTTP(w, r)
			return
		}
		gw := &gzipWriter{ResponseWriter: w, pool: pool}
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
// whether the body is large enough to compress; then, compressing, it
// gathers a chunk of the body at a time and sends it compressed.
type gzipWriter struct {
	http.ResponseWriter
	pool     *encoderPool
	code     int
	buf      []byte // held back before deciding, then the chunk being gathered
	decided  bool
	compress bool
	started  bool // the gzip header is sent
	crc      uint32
	size     uint32 // of the body, modulo 2^32 (gzip's ISIZE)
	err      error  // of a write to the client: later writes fail with it
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
		if !g.compress {
			return g.ResponseWriter.Write(p)
		}
		return g.gather(p)
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
		if g.err != nil {
			return 0, g.err
		}
	}
	return len(p), nil
}

// gather adds p to the chunk, sending each chunk as it fills.
func (g *gzipWriter) gather(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if g.err != nil {
			return n, g.err
		}
		if g.buf == nil {
			g.buf = (*inBufs.Get().(*[]byte))[:0]
		}
		k := min(len(p), gzipChunk-len(g.buf))
		g.buf = append(g.buf, p[:k]...)
		p, n = p[k:], n+k
		if len(g.buf) == gzipChunk {
			g.send(false)
		}
	}
	return n, g.err
}

// send compresses the gathered chunk and writes it to the client (with the
// gzip header first, and the trailer when last).
func (g *gzipWriter) send(last bool) {
	if g.err != nil {
		return
	}
	out := chunkBufs.Get().(*bytes.Buffer)
	defer func() { out.Reset(); chunkBufs.Put(out) }()
	if !g.started {
		g.started = true
		// ID1 ID2, deflate, no flags, no time, no extra flags, unknown OS.
		out.Write([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255})
	}
	g.crc = crc32.Update(g.crc, crc32.IEEETable, g.buf)
	g.size += uint32(len(g.buf)) //nolint:gosec // ISIZE is the size modulo 2^32
	fw := g.pool.get()
	fw.Reset(out)
	_, _ = fw.Write(g.buf) // a bytes.Buffer takes every write
	if last {
		_ = fw.Close()
	} else {
		_ = fw.Flush()
	}
	fw.Reset(io.Discard) // keep no reference to out
	g.pool.put(fw)
	if g.buf != nil {
		in := g.buf[:0]
		inBufs.Put(&in)
		g.buf = nil
	}
	if last {
		out.Write(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, g.crc), g.size))
	}
	if _, err := g.ResponseWriter.Write(out.Bytes()); err != nil {
		g.err = err
	}
}

// decide sends the header, compressing or not, and what was held back.
func (g *gzipWriter) decide(compress bool) {
	g.decided, g.compress = true, compress
	h := g.Header()
	if compress {
		h.Set("Content-Encoding", "gzip")
		h.Del("Content-Length")
		h.Del("Accept-Ranges")
	}
	if g.code != 0 {
		g.ResponseWriter.WriteHeader(g.code)
	}
	if len(g.buf) == 0 {
		return
	}
	buf := g.buf
	g.buf = nil
	if compress {
		_, _ = g.gather(buf) // a failed write shows on the next Write
	} else {
		_, _ = g.ResponseWriter.Write(buf)
	}
}

func (g *gzipWriter) close() {
	if !g.decided {
		g.decide(false)
	}
	if g.compress {
		g.send(true) // a failed write: the client went away, nothing to tell it
	}
}

func (g *gzipWriter) Flush() {
	if !g.decided {
		return
	}
	if g.compress && len(g.buf) > 0 {
		g.send(false)
	}
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (g *gzipWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }
