package httpcatalog_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opmkit/opm/internal/httpcatalog"
)

// noisyCatalog is a catalog of about 6 MB that compresses to about half:
// more than the socket buffers of a client that reads nothing hold.
func noisyCatalog(t *testing.T) *httpcatalog.Store {
	t.Helper()
	r := rand.New(rand.NewSource(1))
	var b strings.Builder
	b.WriteString(`{"schema":"olm.package","name":"p"}` + "\n")
	pad := make([]byte, 1500)
	for i := range 2000 {
		r.Read(pad)
		fmt.Fprintf(&b, `{"schema":"olm.bundle","package":"p","name":"p.v%d","properties":[{"type":"pad","value":%q}]}`+"\n", i, hex.EncodeToString(pad))
	}
	return build(t, writeCatalog(t, map[string]string{"p/catalog.json": b.String()}))
}

// stallGzip opens n connections that ask for /api/v1/all with gzip and
// never read (their receive buffers as small as the kernel allows).
func stallGzip(t *testing.T, addr string, n int) {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	for range n {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if _, err := io.WriteString(c, "GET /api/v1/all HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
	}
}

func heapInUse() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapInuse)
}

// TestSlowGzipClientsHoldNoCompressor is the probe of clients that ask for
// the catalog with gzip and never read: each used to hold a compressor of
// its own (about 800 KiB) for as long as it liked (500 of them took the
// server from 50 to 455 MB). A response now holds at most one compressed
// 32 KiB chunk while it waits, as a plain one holds its copy buffer, and
// the compressors are shared; others are answered meanwhile.
func TestSlowGzipClientsHoldNoCompressor(t *testing.T) {
	st := noisyCatalog(t)
	srv := server(t, st, httpcatalog.Options{})
	addr := strings.TrimPrefix(srv.URL, "http://")
	_, plain := do(t, http.MethodGet, srv.URL+"/api/v1/all", nil)
	const clients = 40
	before := heapInUse()
	stallGzip(t, addr, clients)
	time.Sleep(2 * time.Second) // every response is waiting for its client
	grown := heapInUse() - before
	t.Logf("heap grew %.0f KiB for %d gzip clients that do not read (%.0f KiB each)", grown/1024, clients, grown/1024/clients)
	// The shared compressors (about 800 KiB each), and per client its
	// chunk, the copy buffer and net/http's buffers.
	if limit := float64(httpcatalog.DefaultGzipEncoders<<20 + clients*128<<10); grown > limit {
		t.Errorf("heap grew %.1f MiB for %d gzip clients that do not read, want at most %.1f MiB (%d compressors and 128 KiB a client)",
			grown/(1<<20), clients, limit/(1<<20), httpcatalog.DefaultGzipEncoders)
	}
	// The stalled clients stay connected and unread until the test ends
	// (the test server has no write timeout): a GET they could starve of
	// a compressor would never be answered. That it is answered is the
	// check; the minutes only catch that hang, whatever the load.
	type answer struct {
		gzip bool
		body []byte
		err  error
	}
	req := mustRequest(t, srv.URL+"/api/v1/all")
	req.Header.Set("Accept-Encoding", "gzip")
	answered := make(chan answer, 1)
	go func() {
		resp, err := plainClient.Do(req)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		answered <- answer{resp.Header.Get("Content-Encoding") == "gzip", body, err}
	}()
	select {
	case a := <-answered:
		if a.err != nil {
			t.Fatalf("gzip GET beside the stalled clients: %v", a.err)
		}
		if !a.gzip || !bytes.Equal(gunzip(t, a.body), plain) {
			t.Errorf("gzip GET beside the stalled clients: gzip %t, %d bytes, not the catalog", a.gzip, len(a.body))
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("a gzip GET beside the stalled clients is not answered after 2 minutes")
	}
}

// TestGzipEncodersShared: one compressor serves every response in turn,
// including while others wait for clients that do not read; the stream of
// chunks is one valid gzip member; and a negative count compresses nothing.
func TestGzipEncodersShared(t *testing.T) {
	st := noisyCatalog(t)
	srv := server(t, st, httpcatalog.Options{GzipEncoders: 1, Metas: true})
	_, plain := do(t, http.MethodGet, srv.URL+"/api/v1/all", nil)
	stallGzip(t, strings.TrimPrefix(srv.URL, "http://"), 3)
	done := make(chan error, 4)
	for range 4 {
		go func() {
			resp, err := plainClient.Do(mustRequest(t, srv.URL+"/api/v1/metas?schema=olm.bundle"))
			if err != nil {
				done <- err
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err == nil && (resp.Header.Get("Content-Encoding") != "gzip" || len(b) >= len(plain)) {
				err = fmt.Errorf("not compressed: %v, %d bytes", resp.Header, len(b))
			}
			done <- err
		}()
	}
	for range 4 {
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(2 * time.Minute):
			// Only a hang: a response the stalled ones starve waits forever.
			t.Fatal("a gzip response waited 2 minutes for the one compressor")
		}
	}
	resp, body := do(t, http.MethodGet, srv.URL+"/api/v1/all", map[string]string{"Accept-Encoding": "gzip"})
	if !bytes.Equal(gunzip(t, body), plain) {
		t.Errorf("gzip body does not decompress to the catalog (%v)", resp.Header)
	}
	off := server(t, st, httpcatalog.Options{GzipEncoders: -1})
	if resp, _ := do(t, http.MethodGet, off.URL+"/api/v1/all", map[string]string{"Accept-Encoding": "gzip"}); resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("GzipEncoders -1: %v, want no compression", resp.Header)
	}
}

func mustRequest(t *testing.T, url string) *http.Request {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Error(err)
	}
	req.Header.Set("Accept-Encoding", "gzip")
	return req
}
