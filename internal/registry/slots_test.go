package registry

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/opmkit/opm/internal/registry/api"
)

// waiting is how many calls wait for a slot, on all connections.
func (f *fairSlots) waiting() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, q := range f.queues {
		n += len(q)
	}
	return n
}

// awaitWaiting waits until n calls wait for a slot.
func awaitWaiting(t *testing.T, f *fairSlots, n int) {
	t.Helper()
	for f.waiting() != n {
		select {
		case <-t.Context().Done():
			t.Fatalf("%d calls waiting, want %d", f.waiting(), n)
		case <-time.After(time.Millisecond):
		}
	}
}

// TestFairSlotsServeConnectionsInTurn: five calls of connection a wait for
// the one slot, then one of b; slots given back go to a, b, then the rest
// of a, in the order they came.
func TestFairSlotsServeConnectionsInTurn(t *testing.T) {
	f := newFairSlots(1)
	if err := f.acquire(context.Background(), "a", nil); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 6)
	wait := func(key, name string) {
		go func() {
			if err := f.acquire(context.Background(), key, nil); err != nil {
				got <- err.Error()
				return
			}
			got <- name
		}()
	}
	for i, name := range []string{"a1", "a2", "a3", "a4", "a5"} {
		wait("a", name)
		awaitWaiting(t, f, i+1)
	}
	wait("b", "b1")
	awaitWaiting(t, f, 6)
	var order []string
	for range 6 {
		f.release()
		order = append(order, <-got)
	}
	want := []string{"a1", "b1", "a2", "a3", "a4", "a5"}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("slots went to %v, want %v", order, want)
		}
	}
	f.release()
	if f.free != 1 || len(f.turn) != 0 || len(f.queues) != 0 {
		t.Errorf("after the last release: %d free, turn %v, queues %v; want 1 free, none waiting", f.free, f.turn, f.queues)
	}
}

// TestFairSlotsGiveUp: a call that gives up leaves its connection's queue
// (and the turn, when it was the last), and the slot count stays right.
func TestFairSlotsGiveUp(t *testing.T) {
	f := newFairSlots(1)
	if err := f.acquire(context.Background(), "a", nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopping := make(chan struct{})
	errs := make(chan error, 2)
	go func() { errs <- f.acquire(ctx, "b", nil) }()
	awaitWaiting(t, f, 1)
	go func() { errs <- f.acquire(context.Background(), "c", stopping) }()
	awaitWaiting(t, f, 2)
	cancel()
	if err := <-errs; status.Code(err) != codes.Canceled {
		t.Errorf("cancelled call: %v, want Canceled", err)
	}
	close(stopping)
	if err := <-errs; status.Code(err) != codes.Unavailable {
		t.Errorf("call waiting when the server stops: %v, want Unavailable", err)
	}
	if len(f.turn) != 0 || len(f.queues) != 0 {
		t.Errorf("turn %v, queues %v after both gave up", f.turn, f.queues)
	}
	f.release()
	if err := f.acquire(context.Background(), "d", nil); err != nil || f.free != 0 {
		t.Errorf("acquire after the release: %v, %d free", err, f.free)
	}
}

// heldBackend's ListBundles counts its calls and sends nothing until its
// call ends: each holds a new stream's slot for its first ticks.
type heldBackend struct {
	*SQLite
	started *atomic.Int64
}

func (b heldBackend) ListBundles(ctx context.Context, _ func(*api.Bundle) error) error {
	b.started.Add(1)
	<-ctx.Done()
	return ctx.Err()
}

// TestNewStreamsServedByConnection: thirty ListBundles streams of one
// connection wait to start (one new stream at a time); a ListPackages on
// another connection is answered after a few of them, not after all.
func TestNewStreamsServedByConnection(t *testing.T) {
	var started atomic.Int64
	// MaxWaitingStreams 4: one stream new at once. A stall timeout of
	// 80 ms makes the guard's tick 20 ms: a stream that sends nothing
	// holds its slot 60 ms.
	srv := startServer(t, Options{Backend: heldBackend{SQLite: openRef(t, "etcd.replaces.db"), started: &started},
		Limits: Limits{MaxWaitingStreams: 4, StallTimeout: 80 * time.Millisecond}})
	hostile, err := newClient(srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer hostile.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 30
	for range n {
		if _, err := api.NewRegistryClient(hostile).ListBundles(ctx, &api.ListBundlesRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	for started.Load() < 2 {
		select {
		case <-t.Context().Done():
			t.Fatal("the streams did not start")
		case <-time.After(time.Millisecond):
		}
	}
	s, err := api.NewRegistryClient(srv.conn).ListPackages(context.Background(), &api.ListPackageRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	// In one queue for all connections it came after the 28 still
	// waiting.
	if got := started.Load(); got > 6 {
		t.Errorf("ListPackages on another connection answered after %d of the %d streams waiting before it had started, want a few", got, n)
	}
}
