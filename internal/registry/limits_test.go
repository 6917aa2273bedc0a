package registry

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	"github.com/opmkit/opm/internal/registry/api"
)

// endlessBackend answers ListBundles with 32 KiB bundles until the send
// fails: an answer no client window holds, so an unread stream makes the
// server wait in Send.
type endlessBackend struct{ *SQLite }

func (b endlessBackend) ListBundles(ctx context.Context, send func(*api.Bundle) error) error {
	csv := strings.Repeat("x", 32<<10)
	for {
		if err := send(&api.Bundle{CsvName: "b", CsvJson: csv}); err != nil {
			return err
		}
	}
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
	srv := startServer(t, Options{Backend: endlessBackend{openRef(t, "etcd.replaces.db")}, StopGrace: 200 * time.Millisecond,
		Limits: Limits{StallTimeout: -1}, Logger: slogTo(log)})
	s := stalledStream(t, srv)
	srv.cancel()
	select {
	case err := <-srv.done:
		if err != nil {
			t.Errorf("Serve: %v, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve still running 30 s after the stop with a stalled client")
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

// TestStallTimeoutEndsUnreadStream: a stream whose client reads nothing is
// ended with RESOURCE_EXHAUSTED and a message saying why, while the server
// keeps serving others.
func TestStallTimeoutEndsUnreadStream(t *testing.T) {
	srv := startServer(t, Options{Backend: endlessBackend{openRef(t, "etcd.replaces.db")}, Limits: Limits{StallTimeout: 200 * time.Millisecond}})
	s := stalledStream(t, srv)
	time.Sleep(time.Second) // longer than the stall timeout, unread
	var err error
	for err == nil {
		_, err = s.Recv()
	}
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "read nothing") {
		t.Errorf("stalled stream ended with %v, want RESOURCE_EXHAUSTED saying the client read nothing", err)
	}
	pkgs, err := drain(api.NewRegistryClient(srv.conn).ListPackages(context.Background(), &api.ListPackageRequest{}))
	if err != nil || pkgs != 1 {
		t.Errorf("ListPackages after the stall: %d packages, %v", pkgs, err)
	}
}

// TestMaxWaitingStreamsBoundsUnreadStreams: with no limit on the calls of
// a connection (the default, as upstream), unread streams beyond
// MaxWaitingStreams end with RESOURCE_EXHAUSTED, and the server keeps
// answering calls that are read.
func TestMaxWaitingStreamsBoundsUnreadStreams(t *testing.T) {
	srv := startServer(t, Options{Backend: endlessBackend{openRef(t, "etcd.replaces.db")}, Limits: Limits{MaxWaitingStreams: 2, StallTimeout: -1}})
	var streams []api.Registry_ListBundlesClient
	for range 4 {
		streams = append(streams, stalledStream(t, srv)) // all on one connection: no per-connection limit
	}
	time.Sleep(2 * time.Second) // several ticks of the guard
	// An ended stream fails after what the windows held (a few messages);
	// a live one answers 200 messages (6.4 MB) in a row.
	ended := 0
	for i, s := range streams {
		var err error
		for n := 0; n < 200 && err == nil; n++ {
			_, err = s.Recv()
		}
		switch {
		case err == nil:
		case status.Code(err) == codes.ResourceExhausted && strings.Contains(err.Error(), "do not read"):
			ended++
		default:
			t.Errorf("stream %d: %v", i, err)
		}
	}
	if ended != 2 {
		t.Errorf("%d of 4 unread streams ended for the bound of 2 waiting streams, want 2", ended)
	}
	if _, err := drain(api.NewRegistryClient(srv.conn).ListPackages(context.Background(), &api.ListPackageRequest{})); err != nil {
		t.Errorf("ListPackages beside the unread streams: %v", err)
	}
}

// TestMaxConcurrentStreamsQueuesInClient: streams beyond the limit of one
// connection wait in the client and run once earlier ones end.
func TestMaxConcurrentStreamsQueuesInClient(t *testing.T) {
	srv := startServer(t, Options{Backend: endlessBackend{openRef(t, "etcd.replaces.db")}, Limits: Limits{MaxConcurrentStreams: 1, StallTimeout: -1}})
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for st := srv.conn.GetState(); st != connectivity.Idle; st = srv.conn.GetState() {
		if !srv.conn.WaitForStateChange(ctx, st) {
			t.Fatalf("connection still %v 30 s after its last call; want it closed as idle", st)
		}
	}
	if n, err := drain(c.ListPackages(context.Background(), &api.ListPackageRequest{})); err != nil || n != 1 {
		t.Errorf("call after the idle close: %d, %v", n, err)
	}
}
