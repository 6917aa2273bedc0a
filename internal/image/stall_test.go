package image

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opmkit/opm/internal/image/layerfs/tartest"
)

// Proxy behaviours, applied to what the registry sends back.
const (
	passThrough  = iota
	stallHeaders // forward requests, never answer
	stallOnce    // after threshold bytes on one connection, stop sending (once)
	dropOnce     // after threshold bytes on one connection, close it (once)
	stallAlways  // every connection stops after threshold bytes
)

// stallProxy is a TCP proxy in front of a registry that misbehaves on cue.
type stallProxy struct {
	ln        net.Listener
	target    string
	mode      atomic.Int32
	threshold int64
	fired     atomic.Bool
	conns     atomic.Int32
	wg        sync.WaitGroup
	mu        sync.Mutex
	open      []net.Conn
}

func startStallProxy(t *testing.T, target string, threshold int64) *stallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{ln: ln, target: target, threshold: threshold}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		// The client keeps idle connections alive; end them.
		p.mu.Lock()
		for _, c := range p.open {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *stallProxy) addr() string { return p.ln.Addr().String() }

func (p *stallProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.conns.Add(1)
		p.mu.Lock()
		p.open = append(p.open, c)
		p.mu.Unlock()
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.handle(c)
		}()
	}
}

func (p *stallProxy) handle(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	p.mu.Lock()
	p.open = append(p.open, server)
	p.mu.Unlock()
	go func() { _, _ = io.Copy(server, client); server.Close() }()
	mode := p.mode.Load()
	if mode == stallHeaders {
		_, _ = io.Copy(io.Discard, server) // swallow the answers until the client gives up
		return
	}
	var sent int64
	buf := make([]byte, 32<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 {
			if sent+int64(n) > p.threshold && (mode == stallAlways || (mode != passThrough && p.fired.CompareAndSwap(false, true))) {
				if mode == dropOnce {
					return
				}
				// Stall: hold the connection open, sending nothing, until
				// the client closes it.
				_, _ = io.Copy(io.Discard, client)
				return
			}
			sent += int64(n)
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// pushRandomImage pushes an image with one incompressible 2 MiB layer.
func pushRandomImage(t *testing.T, registry string) {
	t.Helper()
	data := make([]byte, 2<<20)
	_, _ = rand.Read(data)
	layer, err := LayerFromTar(tartest.Make(t, tartest.Entry{Name: "blob", Body: string(data)}))
	if err != nil {
		t.Fatal(err)
	}
	img, _ := NewImage(ImageConfig{}, layer)
	c := mustClient(t, Options{UseHTTP: true})
	if _, err := c.Write(context.Background(), img, mustRef(t, registry+"/stall/img:1")); err != nil {
		t.Fatal(err)
	}
}

// readThrough opens the image through the proxy and reads its layer whole,
// verifying digest and diff_id.
func readThrough(t *testing.T, p *stallProxy, retries int) error {
	t.Helper()
	c := mustClient(t, Options{UseHTTP: true, Retries: retries, RetryDelay: 10 * time.Millisecond,
		ResponseTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
	ctx := context.Background()
	im, err := c.Open(ctx, mustRef(t, p.addr()+"/stall/img:1"))
	if err != nil {
		return err
	}
	defer im.Close()
	lr, err := im.OpenLayer(ctx, 0)
	if err != nil {
		return err
	}
	defer lr.Close()
	if _, err := io.Copy(io.Discard, lr); err != nil {
		return err
	}
	return lr.Verify()
}

func TestStalledRegistry(t *testing.T) {
	reg := localRegistry(t)
	pushRandomImage(t, reg)

	t.Run("headers never come", func(t *testing.T) {
		p := startStallProxy(t, reg, 256<<10)
		p.mode.Store(stallHeaders)
		start := time.Now()
		err := readThrough(t, p, 1)
		t.Logf("failed after %s: %v", time.Since(start).Round(time.Millisecond), err)
		if err == nil || !strings.Contains(err.Error(), "timeout awaiting response headers") {
			t.Fatalf("got %v, want a response-header timeout", err)
		}
	})
	t.Run("body stalls once", func(t *testing.T) {
		p := startStallProxy(t, reg, 256<<10)
		p.mode.Store(stallOnce)
		if err := readThrough(t, p, 2); err != nil {
			t.Fatalf("a download that stalled once was not resumed: %v", err)
		}
		if !p.fired.Load() || p.conns.Load() < 2 {
			t.Errorf("the stall never happened or no new connection was made (fired %t, %d connections)", p.fired.Load(), p.conns.Load())
		}
	})
	t.Run("connection dropped mid-body", func(t *testing.T) {
		p := startStallProxy(t, reg, 256<<10)
		p.mode.Store(dropOnce)
		if err := readThrough(t, p, 2); err != nil {
			t.Fatalf("a download dropped once was not resumed: %v", err)
		}
		if !p.fired.Load() {
			t.Error("the drop never happened")
		}
	})
	t.Run("body always stalls", func(t *testing.T) {
		p := startStallProxy(t, reg, 256<<10)
		p.mode.Store(stallAlways)
		err := readThrough(t, p, 2)
		var st *errStalled
		if !errors.As(err, &st) || !strings.Contains(err.Error(), "--registry-timeout") {
			t.Fatalf("got %v, want a stalled-body error naming --registry-timeout", err)
		}
		if n := p.conns.Load(); n < 3 {
			t.Errorf("%d connections: want the first and two resumptions", n)
		}
	})
	t.Run("no misbehaviour", func(t *testing.T) {
		p := startStallProxy(t, reg, 256<<10)
		if err := readThrough(t, p, 0); err != nil {
			t.Fatal(err)
		}
	})
}

// silentListener accepts connections and never answers them, nor closes
// them until the test ends.
func silentListener(t *testing.T) string {
	t.Helper()
	addr, _ := countedSilentListener(t)
	return addr
}

// countedSilentListener is silentListener that also counts the
// connections it accepted (the attempts made).
func countedSilentListener(t *testing.T) (string, func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		held []net.Conn
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	return ln.Addr().String(), func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(held)
	}
}

// TestSilentRegistry: a registry that accepts and never answers is named
// while opm waits (before the timeout runs out), and the pull fails once
// the timeout has run out on the only attempt (Retries < 0), with an error
// naming the registry and the flag, whether the wait is for a TLS
// handshake or for response headers over plain HTTP.
func TestSilentRegistry(t *testing.T) {
	t.Parallel()
	const wait = time.Second
	for _, useHTTP := range []bool{false, true} {
		// Events, not durations (load stretches those): the listener
		// counts the attempts, and the note, whose timer stops when the
		// attempt ends, is there only if it came before the timeout.
		addr, attempts := countedSilentListener(t)
		var (
			mu    sync.Mutex
			notes []string
		)
		start := time.Now()
		c := mustClient(t, Options{UseHTTP: useHTTP, Retries: -1, ResponseTimeout: wait, IdleTimeout: wait,
			Warn: func(m string) {
				mu.Lock()
				defer mu.Unlock()
				notes = append(notes, m)
			}})
		_, err := c.Open(context.Background(), mustRef(t, addr+"/bundle:v1"))
		took := time.Since(start)
		var na *errNoAnswer
		if !errors.As(err, &na) || !strings.Contains(err.Error(), "read manifest of "+addr+"/bundle:v1: registry "+addr+" did not answer within 1s (raise --registry-timeout") {
			t.Errorf("use-http %t: got %v, want a no-answer error naming %s and the flag", useHTTP, err, addr)
		}
		if took < wait {
			t.Errorf("use-http %t: failed after %s, before the timeout of %s", useHTTP, took, wait)
		}
		// One attempt: one connection over TLS; with --use-http the ping
		// tries https and http at once, two. A retry would add as many.
		if n, want := attempts(), map[bool]int{false: 1, true: 2}[useHTTP]; n > want {
			t.Errorf("use-http %t: %d connections to the silent registry, want the only attempt's %d", useHTTP, n, want)
		}
		mu.Lock()
		if len(notes) != 1 || !strings.Contains(notes[0], "waiting for "+addr) {
			t.Errorf("use-http %t: notes %q, want one naming %s before the attempt timed out", useHTTP, notes, addr)
		}
		mu.Unlock()
		t.Logf("use-http %t: failed after %s: %v", useHTTP, took.Round(time.Millisecond), err)
	}
}

// TestSilentRegistryRetried: a registry's silence is retried like any
// timeout, so with one retry the pull waits twice.
func TestSilentRegistryRetried(t *testing.T) {
	t.Parallel()
	addr := silentListener(t)
	const wait = 500 * time.Millisecond
	c := mustClient(t, Options{Retries: 1, RetryDelay: time.Millisecond, ResponseTimeout: wait, IdleTimeout: wait})
	start := time.Now()
	_, err := c.Open(context.Background(), mustRef(t, addr+"/bundle:v1"))
	var na *errNoAnswer
	if !errors.As(err, &na) {
		t.Fatalf("got %v, want a no-answer error", err)
	}
	if took := time.Since(start); took < 2*wait {
		t.Errorf("failed after %s: one retry means two waits of %s", took, wait)
	}
}
