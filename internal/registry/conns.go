package registry

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/peer"
)

// connSet is what the server knows of its connections beyond what gRPC
// tells it: when any of them last wrote (a stop with no grace waits while
// clients are still being sent to), and which connection a call came on,
// so that a stream gRPC cannot reset can be dropped with its connection.
//
// gRPC queues up to 64 KiB of a stream's answer for its client and, once
// the stream ends, its status behind that; a client that never reads keeps
// both, and the stream, until the connection closes. Closing the
// connection is the only way a server has to release them.
type connSet struct {
	mu        sync.Mutex
	byRemote  map[string]*trackedConn
	lastWrite atomic.Int64 // unix nanoseconds of the last write on any connection
}

func newConnSet() *connSet { return &connSet{byRemote: map[string]*trackedConn{}} }

// listener wraps lis so that its connections are tracked.
func (s *connSet) listener(lis net.Listener) net.Listener {
	return &trackedListener{Listener: lis, set: s}
}

// closeConnOf closes the connection the call of ctx came on, and reports
// whether it found it.
func (s *connSet) closeConnOf(ctx context.Context) bool {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return false
	}
	return s.closeConn(p.Addr.String())
}

// closeConn closes the connection from the remote address key (connKey),
// and reports whether it found it.
func (s *connSet) closeConn(key string) bool {
	s.mu.Lock()
	c := s.byRemote[key]
	s.mu.Unlock()
	if c == nil {
		return false
	}
	_ = c.Close() // gRPC sees the connection end and cancels its calls
	return true
}

// quietFor reports whether no connection has written for d.
func (s *connSet) quietFor(d time.Duration) bool {
	return time.Since(time.Unix(0, s.lastWrite.Load())) >= d
}

type trackedListener struct {
	net.Listener
	set *connSet
}

func (l *trackedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	t := &trackedConn{Conn: c, set: l.set}
	if a := c.RemoteAddr(); a != nil {
		t.key = a.String()
		l.set.mu.Lock()
		l.set.byRemote[t.key] = t
		l.set.mu.Unlock()
	}
	return t, nil
}

type trackedConn struct {
	net.Conn
	set  *connSet
	key  string
	once sync.Once
}

func (c *trackedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if n > 0 {
		c.set.lastWrite.Store(time.Now().UnixNano())
	}
	return n, err
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		if c.key == "" {
			return
		}
		c.set.mu.Lock()
		if c.set.byRemote[c.key] == c {
			delete(c.set.byRemote, c.key)
		}
		c.set.mu.Unlock()
	})
	return c.Conn.Close()
}
