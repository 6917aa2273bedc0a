package registry

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/opmkit/opm/internal/registry/api"
)

// endlessBackend answers ListBundles with 32 KiB bundles until the send
// fails (or n of them, when n is set): an answer no client window holds,
// so an unread stream makes the server wait in Send.
type endlessBackend struct {
	*SQLite
	n int
}

func (b endlessBackend) ListBundles(ctx context.Context, send func(*api.Bundle) error) error {
	csv := strings.Repeat("x", 32<<10)
	for i := 0; b.n == 0 || i < b.n; i++ {
		if err := send(&api.Bundle{CsvName: "b", CsvJson: csv}); err != nil {
			return err
		}
	}
	return nil
}

// stalledStream opens a ListBundles stream on srv and never reads it.
func stalledStream(t *testing.T, srv *server) api.Registry_ListBundlesClient {
	t.Helper()
	s, err := api.NewRegistryClient(srv.conn).ListBundles(context.Background(), &api.ListBundlesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Header(); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStopEndsDespiteStalledStream: a client holding a stream unread used to
// keep the server alive after SIGTERM for as long as it liked. Serve must
// return nil once the grace has passed.
func TestStopEndsDespiteStalledStream(t *testing.T) {
	log := &syncBuffer{}
	srv := startServer(t, Options{Backend: endlessBackend{SQLite: openRef(t, "etcd.replaces.db")}, StopGrace: 200 * time.Millisecond,
		Limits: Limits{StallTimeout: -1}, Logger: slogTo(log)})
	s := stalledStream(t, srv)
	srv.cancel()
	select {
	case err := <-srv.done:
		if err != nil {
			t.Errorf("Serve: %v, want nil", err)
		}
	case <-time.After(2 * time.Minute): // only a hang
		t.Fatal("Serve still running 2 minutes after the stop with a stalled client")
	}
	srv.cancel = nil
	if !strings.Contains(log.String(), "cancelled") || !strings.Contains(log.String(), "stopped serving registry") {
		t.Errorf("log does not say the stalled call was cancelled:\n%s", log.String())
	}
	for {
		if _, err := s.Recv(); err != nil {
			if status.Code(err) == codes.OK {
				t.Errorf("stalled stream ended without error")
			}
			break
		}
	}
}

// TestStopWithoutGraceEndsStalledStream: with no grace (the flag's 0), a
// stop used to wait for every call, so a client that never read its stream
// kept the server for as long as it liked. The stop waits for calls that
// make progress and then cancels what waits only for clients that read
// nothing; a client that reads gets its whole answer.
func TestStopWithoutGraceEndsStalledStream(t *testing.T) {
	log := &syncBuffer{}
	const want = 200 // 6.4 MB: far more than the windows hold
	srv := startServer(t, Options{Backend: endlessBackend{SQLite: openRef(t, "etcd.replaces.db"), n: want}, StopGrace: -1,
		Limits: Limits{StallTimeout: -1}, Logger: slogTo(log)})
	reader, err := api.NewRegistryClient(srv.conn).ListBundles(context.Background(), &api.ListBundlesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Recv(); err != nil {
		t.Fatal(err)
	}
	stalled, err := newClient(srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	ss, err := api.NewRegistryClient(stalled).ListBundles(context.Background(), &api.ListBundlesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.Header(); err != nil {
		t.Fatal(err)
	}
	w, err := healthpb.NewHealthClient(stalled).Watch(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	srv.cancel()
	time.Sleep(200 * time.Millisecond)
	n, err := drain(reader, nil)
	if err != nil || n+1 != want {
		t.Errorf("reader during the stop: %d messages, %v; want %d", n+1, err, want)
	}
	select {
	case err := <-srv.done:
		if err != nil {
			t.Errorf("Serve: %v, want nil", err)
		}
	case <-time.After(2 * time.Minute):
		// Without a stall timeout the unread stream and the health watch
		// would hold the stop forever: that it ends, and the log line
		// below, are the check; the minutes only catch that hang.
		t.Fatal("Serve still running 2 minutes after a stop without grace, with one unread stream")
	}
	srv.cancel = nil
	if !strings.Contains(log.String(), "read nothing were cancelled") {
		t.Errorf("log does not say the stalled call was cancelled:\n%s", log.String())
	}
	_ = w
}

// TestStallTimeoutEndsUnreadStream: a stream whose client reads nothing is
// ended (with its connection, see TestStallTimeoutClosesConnection; the
// log says why), while the server keeps serving others.
func TestStallTimeoutEndsUnreadStream(t *testing.T) {
	log := &syncBuffer{}
	srv := startServer(t, Options{Backend: endlessBackend{SQLite: openRef(t, "etcd.replaces.db")}, Limits: Limits{StallTimeout: 200 * time.Millisecond}, Logger: slogTo(log)})
	s := stalledStream(t, srv)
	time.Sleep(time.Second) // longer than the stall timeout, unread
	var err error
	for err == nil {
		_, err = s.Recv()
	}
	if c := status.Code(err); c != codes.ResourceExhausted && c != codes.Unavailable {
		t.Errorf("stalled stream ended with %v, want RESOURCE_EXHAUSTED or its connection closed", err)
	}
	if !strings.Contains(log.String(), "ended a stream whose client read nothing") || !strings.Contains(log.String(), "connection-closed=true") {
		t.Errorf("log does not say why the stream ended:\n%s", log.String())
	}
	pkgs, err := drain(api.NewRegistryClient(srv.conn).ListPackages(context.Background(), &api.ListPackageRequest{}))
	if err != nil || pkgs != 1 {
		t.Errorf("ListPackages after the stall: %d packages, %v", pkgs, err)
	}
}

// TestMaxWaitingStreamsBoundsUnreadStreams: unread streams beyond
// MaxWaitingStreams end, and their connections are closed: gRPC keeps what
// it queued for an ended stream (up to 64 KiB, and the status behind it)
// until the client reads or the connection closes, so ending them alone
// bounded nothing. The server keeps answering meanwhile, health watches
// (which wait for their client by design) are not counted, and the
// streams within the bound are untouched.
func TestMaxWaitingStreamsBoundsUnreadStreams(t *testing.T) {
	srv := startServer(t, Options{Backend: endlessBackend{SQLite: openRef(t, "etcd.replaces.db")}, Limits: Limits{MaxWaitingStreams: 2, StallTimeout: -1}})
	w, err := healthpb.NewHealthClient(srv.conn).Watch(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := w.Recv(); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health watch: %v, %v", r, err)
	}
	var conns []*grpc.ClientConn
	var streams []api.Registry_ListBundlesClient
	for range 4 {
		c, err := newClient(srv.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		s, err := api.NewRegistryClient(c).ListBundles(context.Background(), &api.ListBundlesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Header(); err != nil {
			t.Fatal(err)
		}
		conns, streams = append(conns, c), append(streams, s)
		time.Sleep(time.Second) // the guard sees it wait
	}
	// A closed connection is no longer READY; a live stream answers 200
	// messages (6.4 MB) in a row.
	ended := 0
	for i, s := range streams {
		var err error
		for n := 0; n < 200 && err == nil; n++ {
			_, err = s.Recv()
		}
		switch st := conns[i].GetState(); {
		case err == nil && st == connectivity.Ready:
		case err != nil && st != connectivity.Ready:
			ended++
		default:
			t.Errorf("stream %d: %v, its connection %v", i, err, st)
		}
	}
	if ended != 2 {
		t.Errorf("%d of 4 unread streams ended with their connections for the bound of 2 waiting streams, want 2", ended)
	}
	if _, err := api.NewRegistryClient(srv.conn).GetPackage(context.Background(), &api.GetPackageRequest{Name: "etcd"}); err != nil {
		t.Errorf("GetPackage beside the unread streams: %v", err)
	}
}

// TestStallTimeoutClosesConnection: gRPC keeps what it queued for a stream
// (up to 64 KiB, and the status behind it) until the client reads or the
// connection closes; a client that never reads must not keep it, so a
// stream ended for stalling takes its connection with it.
func TestStallTimeoutClosesConnection(t *testing.T) {
	srv := startServer(t, Options{Backend: endlessBackend{SQLite: openRef(t, "etcd.replaces.db")}, Limits: Limits{StallTimeout: 200 * time.Millisecond}})
	stalledStream(t, srv)
	// Without the close it stays open for good: minutes only catch that.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for st := srv.conn.GetState(); st == connectivity.Ready; st = srv.conn.GetState() {
		if !srv.conn.WaitForStateChange(ctx, st) {
			t.Fatal("the connection of a stream ended for stalling is still open 2 minutes later")
		}
	}
	if _, err := api.NewRegistryClient(srv.conn).GetPackage(context.Background(), &api.GetPackageRequest{Name: "etcd"}); err != nil {
		t.Errorf("GetPackage after reconnecting: %v", err)
	}
}

// TestMaxConcurrentStreamsQueuesInClient: streams beyond the limit of one
// connection wait in the client and run once earlier ones end.
func TestMaxConcurrentStreamsQueuesInClient(t *testing.T) {
	srv := startServer(t, Options{Backend: endlessBackend{SQLite: openRef(t, "etcd.replaces.db")}, Limits: Limits{MaxConcurrentStreams: 1, StallTimeout: -1}})
	ctx, cancel := context.WithCancel(context.Background())
	s, err := api.NewRegistryClient(srv.conn).ListBundles(ctx, &api.ListBundlesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Header(); err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() {
		_, err := drain(api.NewRegistryClient(srv.conn).ListPackages(context.Background(), &api.ListPackageRequest{}))
		second <- err
	}()
	select {
	case err := <-second:
		t.Fatalf("a second call ran beside the first on a 1-stream connection (err %v)", err)
	case <-time.After(500 * time.Millisecond):
	}
	cancel()
	if err := <-second; err != nil {
		t.Errorf("queued call: %v", err)
	}
}

func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// TestHugeRequestNameIsNotEchoed: a 4 MB package name came back whole in
// the not-found error; the answer keeps upstream's words, cut to 1 KiB.
func TestHugeRequestNameIsNotEchoed(t *testing.T) {
	srv := startServer(t, Options{DB: refDB(t, "etcd.replaces.db")})
	name := strings.Repeat("n", 4<<20-64)
	_, err := api.NewRegistryClient(srv.conn).GetPackage(context.Background(), &api.GetPackageRequest{Name: name})
	st, _ := status.FromError(err)
	if st.Code() != codes.Unknown || len(st.Message()) > 2048 || !strings.Contains(st.Message(), "bytes in all") {
		t.Errorf("GetPackage of a 4 MB name: %v, %d bytes: %.100s", st.Code(), len(st.Message()), st.Message())
	}
	_, err = api.NewRegistryClient(srv.conn).GetPackage(context.Background(), &api.GetPackageRequest{Name: "nope"})
	if st, _ := status.FromError(err); strings.Contains(st.Message(), "bytes in all") || !strings.Contains(st.Message(), "nope") {
		t.Errorf("short name: %q", st.Message())
	}
}

// TestIdleConnectionsAreClosed: a connection without calls for the idle
// timeout is closed by the server (GOAWAY); the client reconnects on its
// next call.
func TestIdleConnectionsAreClosed(t *testing.T) {
	srv := startServer(t, Options{DB: refDB(t, "etcd.replaces.db"), Limits: Limits{IdleTimeout: 300 * time.Millisecond}})
	c := api.NewRegistryClient(srv.conn)
	if _, err := drain(c.ListPackages(context.Background(), &api.ListPackageRequest{})); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // only a hang
	defer cancel()
	for st := srv.conn.GetState(); st != connectivity.Idle; st = srv.conn.GetState() {
		if !srv.conn.WaitForStateChange(ctx, st) {
			t.Fatalf("connection still %v 2 minutes after its last call; want it closed as idle", st)
		}
	}
	if n, err := drain(c.ListPackages(context.Background(), &api.ListPackageRequest{})); err != nil || n != 1 {
		t.Errorf("call after the idle close: %d, %v", n, err)
	}
}

// TestMaxWaitingStreamsClosesTheBusiestConnection: beyond the bound, the
// connection with the most unread streams goes, not the stream that came
// last (a client that reads, slow for a moment, beside one that holds
// many unread streams).
func TestMaxWaitingStreamsClosesTheBusiestConnection(t *testing.T) {
	srv := startServer(t, Options{Backend: endlessBackend{SQLite: openRef(t, "etcd.replaces.db")}, Limits: Limits{MaxWaitingStreams: 2, StallTimeout: -1}})
	open := func(c *grpc.ClientConn) api.Registry_ListBundlesClient {
		s, err := api.NewRegistryClient(c).ListBundles(context.Background(), &api.ListBundlesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Header(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second) // the guard sees it wait
		return s
	}
	busy, err := newClient(srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyStreams := []api.Registry_ListBundlesClient{open(busy), open(busy)}
	late := open(srv.conn)
	// The late stream's client reads now: 200 messages (6.4 MB) in a row.
	for n := range 200 {
		if _, err := late.Recv(); err != nil {
			t.Fatalf("the stream beyond the bound, on a connection with no other waiting: message %d: %v", n, err)
		}
	}
	for i, s := range busyStreams {
		var err error
		for n := 0; n < 200 && err == nil; n++ {
			_, err = s.Recv()
		}
		if err == nil || busy.GetState() == connectivity.Ready {
			t.Errorf("stream %d of the connection with two unread: %v, its connection %v; want it closed", i, err, busy.GetState())
		}
	}
}
