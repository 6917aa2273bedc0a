package httpcatalog

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// GzipMinSize is the body size from which responses are compressed for
// clients that accept gzip or zstd: catalogd's middleware compresses from
// 1,024 bytes (its documentation says more than 1,400); smaller bodies
// would gain nothing on the wire.
const GzipMinSize = 1024

// DefaultGzipEncoders is how many responses may be compressing a chunk at
// once (Options.GzipEncoders).
const DefaultGzipEncoders = 4

// gzipChunk is how much of a body is compressed at a time: a response
// holds at most one compressed chunk while its client is slow, never a
// compressor.
const gzipChunk = 32 << 10

// encoderPool is the gzip compressors of all responses together: at most
// n exist (each about 800 KiB), and a response holds one only while it
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
// accepts gzip or zstd (negotiate) and whose body is GzipMinSize or more is
// sent with that Content-Encoding, without Content-Length and
// Accept-Ranges; HEAD, partial content (Content-Range) and bodies already
// encoded are sent as they are. encoders <= 0 compresses nothing.
//
// The body is compressed a chunk at a time (chunked), each gzip chunk with
// a compressor taken from the shared pool and returned before the chunk is
// written to the client; so a client that does not read holds one
// compressed chunk, as a plain response holds its copy buffer, and the
// compressors of all responses together are at most encoders.
func gzipHandler(next http.Handler, encoders int) http.Handler {
	pool := newEncoderPool(max(encoders, 1))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Accept-Encoding")
		coding := negotiate(r)
		if encoders <= 0 || coding == "" {
			next.ServeHTTP(w, r)
			return
		}
		gw := &gzipWriter{ResponseWriter: w, coding: coding, pool: pool}
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
	pool    *encoderPool
	gz      *chunked
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
		if g.gz != nil && g.gz.err != nil {
			return 0, g.gz.err
		}
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
		g.gz = &chunked{w: g.ResponseWriter, coding: g.coding, pool: g.pool}
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
		g.gz.send(true) // a failed write: the client went away, nothing to tell it
	}
}

func (g *gzipWriter) Flush() {
	if !g.decided {
		return
	}
	if g.gz != nil && len(g.gz.buf) > 0 {
		g.gz.send(false)
	}
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (g *gzipWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// chunked compresses a body a chunk at a time into w: gzip as deflate
// blocks ending on a byte boundary (a sync flush), which one gzip member
// may hold one after another; zstd as one frame per chunk, which a zstd
// stream may hold one after another.
type chunked struct {
	w       io.Writer
	coding  string
	pool    *encoderPool
	buf     []byte // the chunk being gathered
	started bool   // the gzip header is sent
	crc     uint32
	size    uint32 // of the body, modulo 2^32 (gzip's ISIZE)
	err     error  // of a write to the client: later writes fail with it
}

// Write adds p to the chunk, sending each chunk as it fills.
func (c *chunked) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if c.err != nil {
			return n, c.err
		}
		if c.buf == nil {
			c.buf = (*inBufs.Get().(*[]byte))[:0]
		}
		k := min(len(p), gzipChunk-len(c.buf))
		c.buf = append(c.buf, p[:k]...)
		p, n = p[k:], n+k
		if len(c.buf) == gzipChunk {
			c.send(false)
		}
	}
	return n, c.err
}

// send compresses the gathered chunk and writes it to the client (for
// gzip, with the header first and the trailer when last).
func (c *chunked) send(last bool) {
	if c.err != nil {
		return
	}
	out := chunkBufs.Get().(*bytes.Buffer)
	defer func() { out.Reset(); chunkBufs.Put(out) }()
	if c.coding == codingZstd {
		if len(c.buf) > 0 || !c.started {
			c.started = true
			out.Write(zstdEncoder().EncodeAll(c.buf, nil))
		}
	} else {
		c.gzipChunk(out, last)
	}
	if c.buf != nil {
		in := c.buf[:0]
		inBufs.Put(&in)
		c.buf = nil
	}
	if out.Len() == 0 {
		return
	}
	if _, err := c.w.Write(out.Bytes()); err != nil {
		c.err = err
	}
}

func (c *chunked) gzipChunk(out *bytes.Buffer, last bool) {
	if !c.started {
		c.started = true
		// ID1 ID2, deflate, no flags, no time, no extra flags, unknown OS.
		out.Write([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255})
	}
	c.crc = crc32.Update(c.crc, crc32.IEEETable, c.buf)
	c.size += uint32(len(c.buf)) //nolint:gosec // ISIZE is the size modulo 2^32
	fw := c.pool.get()
	fw.Reset(out)
	_, _ = fw.Write(c.buf) // a bytes.Buffer takes every write
	if last {
		_ = fw.Close()
	} else {
		_ = fw.Flush()
	}
	fw.Reset(io.Discard) // keep no reference to out
	c.pool.put(fw)
	if last {
		out.Write(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, c.crc), c.size))
	}
}
