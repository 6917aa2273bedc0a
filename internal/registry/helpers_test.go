package registry

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/opmkit/opm/internal/shareddata"
)

var discardLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// sharedDir is ../shared beside the checkout. Tests that need it skip, with
// the reason printed, when it is absent, and fail when it is absent under CI.
func sharedDir(t testing.TB) string {
	t.Helper()
	shareddata.Require(t, "reference", "grpc", "README.md")
	return shareddata.Root()
}

// server is a Serve running on 127.0.0.1 in the background.
type server struct {
	addr   string
	conn   *grpc.ClientConn
	cancel context.CancelFunc
	done   chan error
}

// startServer serves opts (DB or Backend) on a free loopback port and
// connects a client; both stop when the test ends.
func startServer(t testing.TB, opts Options) *server {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts.Listener = lis
	if opts.Logger == nil {
		opts.Logger = discardLogger
	}
	ready := make(chan net.Addr, 1)
	opts.OnServing = func(a net.Addr) { ready <- a }
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- Serve(ctx, opts) }()
	select {
	case a := <-ready:
		s.addr = a.String()
	case err := <-s.done:
		cancel()
		t.Fatalf("serve: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("server did not start within 60s")
	}
	s.conn, err = grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stop(t) })
	return s
}

// stop cancels Serve and waits for it; it returns Serve's error.
func (s *server) stop(t testing.TB) error {
	if s.cancel == nil {
		return nil
	}
	s.cancel()
	s.cancel = nil
	s.conn.Close()
	select {
	case err := <-s.done:
		return err
	case <-time.After(30 * time.Second):
		t.Error("server did not stop within 30s")
		return nil
	}
}

func newClient(addr string) (*grpc.ClientConn, error) {
	return grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
}

// cleanupBenchFn removes what benchmarks built for the whole process (set
// by bench_test.go).
var cleanupBenchFn = func() {}

func cleanupBench() { cleanupBenchFn() }
