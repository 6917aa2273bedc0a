package registry

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/registry/api"
)

func refDB(t testing.TB, name string) string {
	return filepath.Join(sharedDir(t), "reference", "index", name)
}

// syncBuffer is a log destination safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestServeLogsStartAndStopAndStopsOnCancel(t *testing.T) {
	var logs syncBuffer
	db := refDB(t, "etcd.replaces.db")
	srv := startServer(t, Options{DB: db, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err := Probe(context.Background(), ProbeOptions{Addr: srv.addr}); err != nil {
		t.Fatalf("probe while serving: %v", err)
	}
	if err := Probe(context.Background(), ProbeOptions{Addr: srv.addr, Service: "api.Registry"}); err != nil {
		t.Fatalf("probe api.Registry while serving: %v", err)
	}
	if err := srv.stop(t); err != nil {
		t.Fatalf("Serve after cancel: %v, want nil", err)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want a start and a stop line, got:\n%s", logs.String())
	}
	for _, want := range []string{`msg="serving registry"`, "database=" + db, "address=" + srv.addr, "packages=1", "bundles=6"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("start line lacks %q: %s", want, lines[0])
		}
	}
	if !strings.Contains(lines[1], `msg="stopped serving registry"`) || !strings.Contains(lines[1], "reason=signal") {
		t.Errorf("stop line: %s", lines[1])
	}
	err := Probe(context.Background(), ProbeOptions{Addr: srv.addr, ConnectTimeout: 200 * time.Millisecond})
	var pe *ProbeError
	if !errors.As(err, &pe) || pe.Failure != ProbeConnectFailed || pe.ExitCode() != 2 {
		t.Errorf("probe after stop: %v, want a connect failure", err)
	}
}

func TestServeTimeoutStopsGracefully(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = Serve(context.Background(), Options{DB: refDB(t, "etcd.replaces.db"), Listener: lis, Timeout: 300 * time.Millisecond, Logger: discardLogger})
	if err != nil {
		t.Fatalf("Serve with Timeout: %v, want nil", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("returned after %s, before the timeout", d)
	}
}

// blockingBackend holds ListBundles until released, to stop the server with
// a call in flight.
type blockingBackend struct {
	*SQLite
	entered chan struct{}
	release chan struct{}
}

func (b *blockingBackend) ListBundles(ctx context.Context, send func(*api.Bundle) error) error {
	close(b.entered)
	<-b.release
	return b.SQLite.ListBundles(ctx, send)
}

func TestGracefulStopFinishesCallsInFlight(t *testing.T) {
	b := &blockingBackend{SQLite: openRef(t, "etcd.replaces.db"), entered: make(chan struct{}), release: make(chan struct{})}
	srv := startServer(t, Options{Backend: b})

	type result struct {
		n   int
		err error
	}
	got := make(chan result, 1)
	go func() {
		stream, err := api.NewRegistryClient(srv.conn).ListBundles(context.Background(), &api.ListBundlesRequest{})
		if err != nil {
			got <- result{0, err}
			return
		}
		n := 0
		for {
			_, err := stream.Recv()
			if err == io.EOF {
				got <- result{n, nil}
				return
			}
			if err != nil {
				got <- result{n, err}
				return
			}
			n++
		}
	}()
	<-b.entered
	stopped := make(chan error, 1)
	go func() {
		srv.cancel()
		stopped <- <-srv.done
	}()
	select {
	case err := <-stopped:
		t.Fatalf("Serve returned (%v) while a call was in flight", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(b.release)
	r := <-got
	if r.err != nil || r.n != 7 {
		t.Errorf("in-flight ListBundles: %d bundles, err %v; want all 7 and no error", r.n, r.err)
	}
	if err := <-stopped; err != nil {
		t.Errorf("Serve: %v, want nil", err)
	}
	srv.cancel = nil // stopped already
	srv.conn.Close()
}

func TestServeRefusesWhatIsNotAnIndex(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plainDB := filepath.Join(dir, "plain.db")
	sdb, err := sql.Open("sqlite3", plainDB)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sdb.Exec(`CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	sdb.Close()
	oldDB := filepath.Join(dir, "old.db")
	copyFile(t, refDB(t, "etcd.replaces.db"), oldDB)
	sdb, err = sql.Open("sqlite3", oldDB)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sdb.Exec(`UPDATE schema_migrations SET version = 12`); err != nil {
		t.Fatal(err)
	}
	sdb.Close()

	cases := []struct {
		name, path string
		is         error
		says       string
	}{
		{"missing", filepath.Join(dir, "nope.db"), os.ErrNotExist, "nope.db"},
		{"directory", dir, index.ErrNotIndex, "it is a directory"},
		{"text file", write("text.db", []byte("hello, not a database\n")), index.ErrNotIndex, "not an SQLite database"},
		{"empty file", write("empty.db", nil), index.ErrNotIndex, "no schema_migrations"},
		{"other sqlite database", plainDB, index.ErrNotIndex, "no schema_migrations"},
		{"old schema", oldDB, index.ErrSchemaVersion, "schema version 12"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tlog := filepath.Join(t.TempDir(), "termination-log")
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer lis.Close()
			err = Serve(context.Background(), Options{DB: c.path, Listener: lis, TerminationLog: tlog, Logger: discardLogger})
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("Serve(%s): %v; want %v saying %q", c.path, err, c.is, c.says)
			}
			data, rerr := os.ReadFile(tlog)
			if rerr != nil || strings.TrimSpace(string(data)) != err.Error() {
				t.Errorf("termination log: %q (%v), want the error", data, rerr)
			}
		})
	}
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestProbeReasons(t *testing.T) {
	srv := startServer(t, Options{DB: refDB(t, "etcd.replaces.db")})

	// Every service name is answered with the server's status, as
	// upstream answers it: OLM's client asks for "Registry".
	for _, svc := range []string{"", "Registry", "api.Registry", "no.such.Service"} {
		if err := Probe(context.Background(), ProbeOptions{Addr: srv.addr, Service: svc}); err != nil {
			t.Errorf("service %q: %v", svc, err)
		}
	}

	// The probe's word for a server that does not know the name.
	var pe *ProbeError
	lis0, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	plain := grpc.NewServer()
	healthpb.RegisterHealthServer(plain, health.NewServer())
	go func() { _ = plain.Serve(lis0) }()
	defer plain.Stop()
	err = Probe(context.Background(), ProbeOptions{Addr: lis0.Addr().String(), Service: "no.such.Service"})
	if !errors.As(err, &pe) || pe.Failure != ProbeRPCFailed || !strings.Contains(err.Error(), `no health status for service "no.such.Service"`) {
		t.Errorf("unknown service: %v", err)
	}

	// A server that is up but not serving, and one without health.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g, h := NewGRPCServer(openRef(t, "etcd.replaces.db"))
	h.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	go func() { _ = g.Serve(lis) }()
	defer g.Stop()
	for _, svc := range []string{"", "Registry"} {
		err = Probe(context.Background(), ProbeOptions{Addr: lis.Addr().String(), Service: svc})
		if !errors.As(err, &pe) || pe.Failure != ProbeNotServing || pe.ExitCode() != 4 || !strings.Contains(err.Error(), "NOT_SERVING") {
			t.Errorf("not serving, service %q: %v", svc, err)
		}
	}

	lis2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bare := grpc.NewServer()
	go func() { _ = bare.Serve(lis2) }()
	defer bare.Stop()
	err = Probe(context.Background(), ProbeOptions{Addr: lis2.Addr().String()})
	if !errors.As(err, &pe) || pe.Failure != ProbeRPCFailed || !strings.Contains(err.Error(), "does not implement the gRPC health protocol") {
		t.Errorf("no health service: %v", err)
	}

	err = Probe(context.Background(), ProbeOptions{Addr: srv.addr, TLS: true, TLSCACert: filepath.Join(t.TempDir(), "missing.pem")})
	if !errors.As(err, &pe) || pe.Failure != ProbeInvalidOptions || !strings.Contains(err.Error(), "read CA certificates") {
		t.Errorf("missing CA file: %v", err)
	}
}

// openRef opens a reference database as a Backend for the test.
func openRef(t testing.TB, name string) *SQLite {
	t.Helper()
	b, err := OpenSQLite(context.Background(), refDB(t, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestSIGTERMStopsGracefully runs the server as its own process, the way a
// pod does, and stops it with SIGTERM: exit status 0 and the stop line.
func TestSIGTERMStopsGracefully(t *testing.T) {
	p := startServerProcess(t, refDB(t, "etcd.replaces.db"))
	if err := Probe(context.Background(), ProbeOptions{Addr: p.addr, ConnectTimeout: 5 * time.Second}); err != nil {
		t.Fatalf("probe: %v", err)
	}
	if err := p.terminate(t); err != nil {
		t.Fatalf("after SIGTERM: %v\n%s", err, p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), `msg="stopped serving registry"`) || !strings.Contains(p.stderr.String(), "reason=signal") {
		t.Errorf("no stop line:\n%s", p.stderr.String())
	}
}
