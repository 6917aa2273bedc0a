package registry

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/opmkit/opm/internal/registry/api"
)

// stallStreams opens n ListBundles streams spread over conns connections to
// addr and never reads them: the client a server must survive. It waits
// until every stream has its response headers (the server is sending) or
// settle has passed (streams beyond the server's per-connection limit wait
// in the client), and returns how many started and a function that closes
// them all.
func stallStreams(t testing.TB, addr string, conns, n int, settle time.Duration) (int, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var cs []*grpc.ClientConn
	closeAll := func() {
		cancel()
		for _, c := range cs {
			c.Close()
		}
	}
	for i := 0; i < conns; i++ {
		c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			closeAll()
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	started := make(chan error, n)
	for i := 0; i < n; i++ {
		go func(c *grpc.ClientConn) {
			s, err := api.NewRegistryClient(c).ListBundles(ctx, &api.ListBundlesRequest{})
			if err == nil {
				_, err = s.Header() // the server has started answering
			}
			started <- err
		}(cs[i%conns])
	}
	ok := 0
	deadline := time.After(settle)
	for i := 0; i < n; i++ {
		select {
		case err := <-started:
			if err != nil && ctx.Err() == nil {
				closeAll()
				t.Fatalf("a stalled stream failed to start: %v", err)
			}
			ok++
		case <-deadline:
			return ok, closeAll
		}
	}
	return ok, closeAll
}

// rss is a process's resident set now (VmRSS) and at its peak (VmHWM), MiB.
func rss(t testing.TB, pid int) (now, peak float64) {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			now = kb / 1024
		case "VmHWM:":
			peak = kb / 1024
		}
	}
	return now, peak
}

// readAll has readers clients each list every bundle at once, and returns
// the first error.
func readAll(addr string, readers, want int) error {
	var wg sync.WaitGroup
	errs := make(chan error, readers)
	for i := 0; i < readers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := newClient(addr)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			n, err := drain(api.NewRegistryClient(conn).ListBundles(ctx, &api.ListBundlesRequest{}))
			if err == nil && n != want {
				err = fmt.Errorf("reader got %d messages, want %d", n, want)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// countListBundles is the number of ListBundles messages of the database
// served at addr.
func countListBundles(t testing.TB, addr string) int {
	t.Helper()
	conn, err := newClient(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	n, err := drain(api.NewRegistryClient(conn).ListBundles(context.Background(), &api.ListBundlesRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStalledStreamsKeepMemoryBounded is the probe of a client that opens
// many ListBundles streams and reads none of them, at issue 40's size:
// 2,000 streams on 20 connections against the 5,000-bundle database. The
// server (its own process) must stay within 120 KiB per stalled stream
// above its resident set before the attack (generous: at most
// --max-waiting-streams of them hold anything; before issue 27, each held
// sorted copies of two tables, MiBs), and readers on other connections must
// get every bundle meanwhile. bench/serve-stalled.sh has the figures.
func TestStalledStreamsKeepMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a 5,000-bundle database and a server process")
	}
	const conns, streams = 20, 2000 // issue 40's probe
	p := startServerProcess(t, benchDB(t))
	want := countListBundles(t, p.addr)
	before, _ := rss(t, p.cmd.Process.Pid)
	started, release := stallStreams(t, p.addr, conns, streams, 5*time.Second)
	defer release()
	time.Sleep(time.Second) // let the server queue what it will
	during, _ := rss(t, p.cmd.Process.Pid)
	if err := readAll(p.addr, 4, want); err != nil {
		t.Errorf("readers during the stall: %v", err)
	}
	grown := during - before
	t.Logf("server RSS %.0f MiB before, %.0f MiB with %d stalled streams, %d of them started (%.1f KiB a stream)", before, during, streams, started, grown*1024/streams)
	if limit := float64(streams) * 120 / 1024; grown > limit {
		t.Errorf("server RSS grew by %.0f MiB under %d stalled streams, want at most %.0f MiB", grown, streams, limit)
	}
	release()
	if err := p.terminate(t); err != nil {
		t.Fatalf("server process: %v\n%s", err, p.stderr.String())
	}
}

// BenchmarkStalledStreamsRSS is the whole probe: STALL_STREAMS (default
// 5,000) ListBundles streams on STALL_CONNS (default 50) connections, never
// read, against a server process serving the 5,000-bundle database; then
// STALL_READERS (default 20) clients list every bundle at once. It reports
// the server's RSS before (base-RSS-MB; its peak after the readers alone,
// readers-alone-peak-RSS-MB), with the streams stalled (stalled-RSS-MB),
// its peak after all (peak-RSS-MB), and the readers' wall time
// while stalled (readers-s) next to the same readers without the stall
// (readers-alone-s).
func BenchmarkStalledStreamsRSS(b *testing.B) {
	env := func(k string, def int) int {
		if v, err := strconv.Atoi(os.Getenv(k)); err == nil && v > 0 {
			return v
		}
		return def
	}
	streams, conns, readers := env("STALL_STREAMS", 5000), env("STALL_CONNS", 50), env("STALL_READERS", 20)
	path := benchDB(b)
	for i := 0; i < b.N; i++ {
		p := startServerProcess(b, path)
		want := countListBundles(b, p.addr)
		start := time.Now()
		if err := readAll(p.addr, readers, want); err != nil {
			b.Fatal(err)
		}
		alone := time.Since(start)
		base, alonePeak := rss(b, p.cmd.Process.Pid)
		started, release := stallStreams(b, p.addr, conns, streams, 10*time.Second)
		time.Sleep(2 * time.Second)
		stalled, _ := rss(b, p.cmd.Process.Pid)
		start = time.Now()
		if err := readAll(p.addr, readers, want); err != nil {
			b.Fatalf("readers during the stall: %v", err)
		}
		during := time.Since(start)
		_, peak := rss(b, p.cmd.Process.Pid)
		release()
		if err := p.terminate(b); err != nil {
			b.Fatalf("server process: %v\n%s", err, p.stderr.String())
		}
		b.ReportMetric(float64(started), "started-streams")
		b.ReportMetric(base, "base-RSS-MB")
		b.ReportMetric(alonePeak, "readers-alone-peak-RSS-MB")
		b.ReportMetric(stalled, "stalled-RSS-MB")
		b.ReportMetric(peak, "peak-RSS-MB")
		b.ReportMetric(during.Seconds(), "readers-s")
		b.ReportMetric(alone.Seconds(), "readers-alone-s")
	}
}

// TestSIGTERMWithStalledClientExitsZero is the probe of a pod being deleted
// while a client holds a ListBundles stream unread: the server process used
// to stay alive (130 s in the probe) until the client left. It exits 0
// after its stop grace (5 s by default), saying it cancelled the call.
func TestSIGTERMWithStalledClientExitsZero(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a 5,000-bundle database and a server process")
	}
	p := startServerProcess(t, benchDB(t))
	started, release := stallStreams(t, p.addr, 1, 1, 30*time.Second)
	defer release()
	if started != 1 {
		t.Fatal("the stalled stream did not start")
	}
	exited := make(chan error, 1)
	go func() { exited <- p.terminate(t) }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, p.stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("server still running 60 s after SIGTERM with a stalled client\n%s", p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "cancelled") || !strings.Contains(p.stderr.String(), "reason=signal") {
		t.Errorf("log:\n%s", p.stderr.String())
	}
}
