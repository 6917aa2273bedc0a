package registry

import (
	"context"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// fairSlots counts the slots of streams new at once (guard.newSlots) and
// serves the streams waiting for one a connection at a time, in turn. One
// queue for all made a call on another connection wait behind every stream
// a client had opened: behind 2,000 unread ListBundles streams on 20
// connections (issue 40), an ordinary ListPackages waited 40–50 s for its
// slot; in turn, it waits for one slot of each connection with streams
// waiting.
type fairSlots struct {
	mu     sync.Mutex
	free   int
	queues map[string][]*slotWaiter // by connection
	turn   []string                 // the connections with streams waiting, the next served first
}

type slotWaiter struct {
	ready   chan struct{} // closed when granted
	granted bool
}

func newFairSlots(n int) *fairSlots {
	return &fairSlots{free: n, queues: map[string][]*slotWaiter{}}
}

// connKey names the connection of a call.
func connKey(ctx context.Context) string {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		return p.Addr.String()
	}
	return ""
}

// acquire takes a slot for a call on the connection named key, waiting for
// its turn; it gives up with the status to answer when ctx ends or
// stopping closes first.
func (f *fairSlots) acquire(ctx context.Context, key string, stopping <-chan struct{}) error {
	f.mu.Lock()
	if f.free > 0 {
		f.free--
		f.mu.Unlock()
		return nil
	}
	w := &slotWaiter{ready: make(chan struct{})}
	if len(f.queues[key]) == 0 {
		f.turn = append(f.turn, key)
	}
	f.queues[key] = append(f.queues[key], w)
	f.mu.Unlock()
	var err error
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		err = status.FromContextError(ctx.Err()).Err()
	case <-stopping:
		err = status.Error(codes.Unavailable, "the server is stopping")
	}
	f.mu.Lock()
	if w.granted {
		// Granted as it gave up: the slot goes to the next in turn.
		f.mu.Unlock()
		f.release()
		return err
	}
	f.remove(key, w)
	f.mu.Unlock()
	return err
}

// release gives a slot back: to the first stream waiting on the connection
// whose turn it is, or to the free ones.
func (f *fairSlots) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.turn) == 0 {
		f.free++
		return
	}
	key := f.turn[0]
	f.turn[0] = ""
	f.turn = f.turn[1:]
	q := f.queues[key]
	w := q[0]
	q[0] = nil
	if q = q[1:]; len(q) == 0 {
		delete(f.queues, key)
	} else {
		f.queues[key] = q
		f.turn = append(f.turn, key) // its next waits for the others' turns
	}
	w.granted = true
	close(w.ready)
}

// remove takes a waiter that gave up out of its connection's queue. The
// caller holds f.mu.
func (f *fairSlots) remove(key string, w *slotWaiter) {
	q := f.queues[key]
	for i, x := range q {
		if x == w {
			q = append(q[:i], q[i+1:]...)
			break
		}
	}
	if len(q) > 0 {
		f.queues[key] = q
		return
	}
	delete(f.queues, key)
	for i, k := range f.turn {
		if k == key {
			f.turn = append(f.turn[:i], f.turn[i+1:]...)
			break
		}
	}
}
