// Command hostileclients is the client side of bench/serve-hostile.sh: it
// opens connections to a running opm server that ask for a large answer and
// never read it, then times ordinary requests beside them and reads the
// server's resident set from /proc. It prints one line of figures, then
// keeps the hostile connections open for -hold (so that the script can stop
// the server while they are held), and exits.
//
//	hostileclients -mode http -addr 127.0.0.1:8080 -clients 500 -pid 1234
//	hostileclients -mode grpc -addr 127.0.0.1:50051 -conns 625 -streams 5000 -pid 1234
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/opmkit/opm/internal/registry/api"
)

func main() {
	mode := flag.String("mode", "http", "http: GET /api/v1/all with gzip, unread; grpc: ListBundles streams, unread")
	addr := flag.String("addr", "", "server address (host:port)")
	pid := flag.Int("pid", 0, "the server's process id, for its resident set")
	clients := flag.Int("clients", 500, "http: connections that never read")
	conns := flag.Int("conns", 625, "grpc: connections the streams are spread over")
	streams := flag.Int("streams", 5000, "grpc: streams that are never read")
	settle := flag.Duration("settle", 5*time.Second, "wait this long after opening them before measuring")
	probes := flag.Int("probes", 10, "ordinary requests timed beside the hostile clients, one at a time")
	hold := flag.Duration("hold", 0, "keep the hostile connections open this long after printing")
	flag.Parse()
	var err error
	switch *mode {
	case "http":
		err = runHTTP(*addr, *pid, *clients, *settle, *probes, *hold)
	case "grpc":
		err = runGRPC(*addr, *pid, *conns, *streams, *settle, *probes, *hold)
	default:
		err = fmt.Errorf("-mode %q: want http or grpc", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostileclients:", err)
		os.Exit(1)
	}
}

// rss is the process's resident set now and at its peak, MB.
func rss(pid int) (now, peak float64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			now = kb / 1000
		case "VmHWM:":
			peak = kb / 1000
		}
	}
	return now, peak
}

// resetPeak starts the process's peak resident set (VmHWM) afresh, so that
// the peak is the attack's, not start-up's (opm serve converts the catalog).
func resetPeak(pid int) {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// timings is p50 and max of ds, in seconds.
func timings(ds []time.Duration) string {
	if len(ds) == 0 {
		return "p50 - max -"
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return fmt.Sprintf("p50 %.3fs max %.3fs", ds[len(ds)/2].Seconds(), ds[len(ds)-1].Seconds())
}

// smallReceiveBuffer makes a client socket's receive buffer as small as the
// kernel allows, so that the server's writes block soon.
var smallReceiveBuffer = net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
	return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
}}

func runHTTP(addr string, pid, clients int, settle time.Duration, probes int, hold time.Duration) error {
	base := "http://" + addr
	resetPeak(pid)
	var held []net.Conn
	defer func() {
		for _, c := range held {
			_ = c.Close()
		}
	}()
	for range clients {
		c, err := smallReceiveBuffer.Dial("tcp", addr)
		if err != nil {
			return fmt.Errorf("after %d connections: %w", len(held), err)
		}
		held = append(held, c)
		if _, err := io.WriteString(c, "GET /api/v1/all HTTP/1.1\r\nHost: "+addr+"\r\nAccept-Encoding: gzip\r\n\r\n"); err != nil {
			return err
		}
	}
	time.Sleep(settle)
	stalled, _ := rss(pid)
	// Ordinary clients: the whole catalog with gzip (Go's client asks for
	// it and decompresses), and a small query.
	var all, small []time.Duration
	client := &http.Client{Timeout: 5 * time.Minute}
	for range probes {
		for _, p := range []struct {
			path string
			into *[]time.Duration
		}{{"/api/v1/all", &all}, {"/api/v1/metas?schema=olm.package&name=none", &small}} {
			start := time.Now()
			resp, err := client.Get(base + p.path)
			if err != nil {
				return err
			}
			_, err = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if err != nil {
				return err
			}
			*p.into = append(*p.into, time.Since(start))
		}
	}
	_, peak := rss(pid)
	fmt.Printf("http: %d gzip clients not reading: server RSS %.0f MB with them, peak %.0f MB from the first; beside them GET /api/v1/all (gzip) %s, GET /api/v1/metas %s\n",
		clients, stalled, peak, timings(all), timings(small))
	time.Sleep(hold)
	return nil
}

func runGRPC(addr string, pid, nconns, nstreams int, settle time.Duration, probes int, hold time.Duration) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resetPeak(pid)
	var cs []*grpc.ClientConn
	defer func() {
		for _, c := range cs {
			_ = c.Close()
		}
	}()
	for range nconns {
		c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return err
		}
		cs = append(cs, c)
	}
	started := make(chan error, nstreams)
	for i := range nstreams {
		go func(c *grpc.ClientConn) {
			s, err := api.NewRegistryClient(c).ListBundles(ctx, &api.ListBundlesRequest{})
			if err == nil {
				_, err = s.Header()
			}
			started <- err
		}(cs[i%nconns])
	}
	ok, refused := 0, 0
	deadline := time.After(settle)
wait:
	for range nstreams {
		select {
		case err := <-started:
			if err == nil {
				ok++
			} else {
				refused++
			}
		case <-deadline:
			break wait
		}
	}
	time.Sleep(settle)
	stalled, _ := rss(pid)
	reader, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
	if err != nil {
		return err
	}
	defer func() { _ = reader.Close() }()
	rc := api.NewRegistryClient(reader)
	var unary, lists []time.Duration
	// Ordinary calls get a minute each: a server starved by the attack
	// prints as a timeout, not as a bench that never ends.
	probeCtx, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	ctx = probeCtx
	failed := ""
	pkg := ""
	for i := range probes {
		start := time.Now()
		if failed != "" {
			break
		}
		s, err := rc.ListPackages(ctx, &api.ListPackageRequest{})
		if err != nil {
			failed = fmt.Sprintf("; ListPackages beside them failed: %v", err)
			break
		}
		for {
			p, err := s.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				failed = fmt.Sprintf("; ListPackages beside them failed: %v", err)
				break
			}
			if pkg == "" {
				pkg = p.GetName()
			}
		}
		if failed != "" {
			break
		}
		if _, err := rc.GetPackage(ctx, &api.GetPackageRequest{Name: pkg}); err != nil {
			failed = fmt.Sprintf("; GetPackage beside them failed: %v", err)
			break
		}
		unary = append(unary, time.Since(start))
		if i < 3 {
			start = time.Now()
			if err := drain(ctx, rc); err != nil {
				failed = fmt.Sprintf("; ListBundles beside them failed: %v", err)
				break
			}
			lists = append(lists, time.Since(start))
		}
	}
	_, peak := rss(pid)
	fmt.Printf("grpc: %d unread ListBundles streams on %d connections (%d answered headers, %d refused): server RSS %.0f MB with them, peak %.0f MB from the first; beside them ListPackages+GetPackage %s, whole ListBundles %s%s\n",
		nstreams, nconns, ok, refused, stalled, peak, timings(unary), timings(lists), failed)
	time.Sleep(hold)
	return nil
}

// drain reads a whole ListBundles answer.
func drain(ctx context.Context, rc api.RegistryClient) error {
	s, err := rc.ListBundles(ctx, &api.ListBundlesRequest{})
	if err != nil {
		return err
	}
	for {
		if _, err := s.Recv(); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}
