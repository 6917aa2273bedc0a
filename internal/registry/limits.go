package registry

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Defaults of Limits and of Options.StopGrace.
const (
	DefaultStopGrace            = 5 * time.Second
	DefaultMaxConcurrentStreams = 0 // no limit, as upstream (grpc-go's default)
	DefaultMaxWaitingStreams    = 128
	DefaultKeepaliveTime        = time.Minute
	DefaultKeepaliveTimeout     = 20 * time.Second
	DefaultIdleTimeout          = 15 * time.Minute
	DefaultStallTimeout         = 30 * time.Second
)

// Limits bound what one client can make the server hold. A zero field takes
// its default; a negative one turns the limit off.
type Limits struct {
	// MaxConcurrentStreams is the number of calls one connection may have
	// open at once; more wait in the client (HTTP/2 SETTINGS), costing the
	// server nothing. By default there is no limit, as on upstream's
	// servers: what unread streams hold is bounded by MaxWaitingStreams
	// and StallTimeout instead.
	MaxConcurrentStreams int
	// MaxWaitingStreams bounds the catalog's streams (ListBundles and the
	// other server-streaming calls of api.Registry), on all connections,
	// whose server waits to send to a client that does not read: each
	// holds up to gRPC's 64 KiB write quota and one message. A stream that
	// would exceed it makes the server close the connection with the most
	// waiting streams, its own on a tie, which ends them (only that
	// releases what gRPC queued for them). NewStreams(MaxWaitingStreams)
	// streams may be new at once (in their first moments, before the
	// server can tell whether their clients read); more wait to start.
	MaxWaitingStreams int
	// KeepaliveTime: a connection silent this long is pinged, and closed
	// when the ping is not answered within KeepaliveTimeout (dead peers,
	// half-open connections).
	KeepaliveTime, KeepaliveTimeout time.Duration
	// IdleTimeout closes (GOAWAY) a connection with no call for this long;
	// gRPC clients reconnect when they next call.
	IdleTimeout time.Duration
	// StallTimeout ends, with RESOURCE_EXHAUSTED, a streaming call whose
	// client has read nothing for this long while the server waits to send,
	// and closes its connection: only that releases what gRPC queued for
	// the stream.
	StallTimeout time.Duration
}

func pick(v, def time.Duration) time.Duration {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// serverOptions turns the limits into gRPC server options; g (made by
// newGuard) enforces the stream limits and counts the calls running.
func (l Limits) serverOptions(g *guard) []grpc.ServerOption {
	// gRPC shares its write buffers between connections (its default);
	// clients send small requests, pings and window updates, so 8 KiB read
	// buffers (of gRPC's 32 KiB) make 625 connections cost 5 MB instead of
	// 20.
	opts := []grpc.ServerOption{grpc.ForceServerCodecV2(newExactCodec()), grpc.ReadBufferSize(8 << 10)}
	if n := l.MaxConcurrentStreams; n > 0 {
		opts = append(opts, grpc.MaxConcurrentStreams(uint32(n)))
	}
	kp := keepalive.ServerParameters{
		Time:              pick(l.KeepaliveTime, DefaultKeepaliveTime),
		Timeout:           pick(l.KeepaliveTimeout, DefaultKeepaliveTimeout),
		MaxConnectionIdle: pick(l.IdleTimeout, DefaultIdleTimeout),
	}
	if kp.Time == 0 {
		kp.Time = 100 * 365 * 24 * time.Hour // off: gRPC's own default is 2h
	}
	opts = append(opts, grpc.KeepaliveParams(kp),
		// Clients may ping every 10 s, even between calls (gRPC's default
		// policy closes a connection pinged more often than every 5 min).
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}))
	return append(opts, grpc.ChainUnaryInterceptor(g.unaryCall), grpc.ChainStreamInterceptor(g.streamCall))
}

// guard bounds what streams whose clients do not read can make the server
// hold, and counts the calls that still make progress (for a stop without
// grace).
type guard struct {
	stall      time.Duration // 0: no stall timeout
	maxWaiting int64         // 0: no bound
	newSlots   *fairSlots    // NewStreams(maxWaiting); nil: no bound
	stopping   chan struct{} // closed when the server stops
	stopOnce   sync.Once
	tick       time.Duration
	conns      *connSet // nil: connections cannot be closed
	log        *slog.Logger

	unary   atomic.Int64 // unary calls running
	streams atomic.Int64 // catalog streams running (api.*)
	blocked atomic.Int64 // catalog streams whose send has waited a tick

	waitMu sync.Mutex
	// waitingBy counts the waiting (blocked) streams by connection;
	// closingWaiting is how many of them are on connections being closed
	// (their streams end soon, and count no more against maxWaiting).
	waitingBy      map[string]*connWaiting
	closingWaiting int64
}

// newGuard is the guard of l; conns may be nil.
func (l Limits) newGuard(conns *connSet, log *slog.Logger) *guard {
	g := &guard{stall: pick(l.StallTimeout, DefaultStallTimeout), conns: conns, log: log, tick: 250 * time.Millisecond, stopping: make(chan struct{})}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	switch w := l.MaxWaitingStreams; {
	case w == 0:
		g.maxWaiting = DefaultMaxWaitingStreams
	case w > 0:
		g.maxWaiting = int64(w)
	}
	if g.maxWaiting > 0 {
		g.newSlots = newFairSlots(NewStreams(int(g.maxWaiting)))
	}
	if g.stall > 0 {
		g.tick = max(min(g.stall/4, g.tick), 10*time.Millisecond)
	}
	return g
}

// drop closes the connection of the call of ctx, which ends the call and
// releases what gRPC queued for it.
func (g *guard) drop(ctx context.Context, method, why string) {
	closed := g.conns != nil && g.conns.closeConnOf(ctx)
	g.log.Warn(why, "method", method, "connection-closed", closed)
}

// stop makes streams waiting to start give up: the server is stopping.
func (g *guard) stop() { g.stopOnce.Do(func() { close(g.stopping) }) }

// working is the number of calls running that do not wait for a client:
// unary calls, and catalog streams not blocked on a client that does not
// read. (Health watches and reflection wait for their client by design.)
func (g *guard) working() int64 { return g.unary.Load() + g.streams.Load() - g.blocked.Load() }

func (g *guard) unaryCall(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	g.unary.Add(1)
	defer g.unary.Add(-1)
	return handler(ctx, req)
}

// watchedStream records since when a SendMsg has been waiting.
type watchedStream struct {
	grpc.ServerStream
	since atomic.Int64 // unix nanoseconds; 0 when not sending
}

func (w *watchedStream) SendMsg(m any) error {
	w.since.Store(time.Now().UnixNano())
	defer w.since.Store(0)
	return w.ServerStream.SendMsg(m)
}

type connWaiting struct {
	n       int64
	closing bool
}

// wait counts a stream of the connection key as waiting. Over maxWaiting,
// it names the connection to close: the one with the most streams waiting
// (key itself on a tie), so that a client that reads but was slow for a
// moment (a loaded server, a slow network) is not what goes when another
// holds many unread streams.
func (g *guard) wait(key string) (victim string, over bool) {
	g.waitMu.Lock()
	defer g.waitMu.Unlock()
	n := g.blocked.Add(1)
	if g.waitingBy == nil {
		g.waitingBy = map[string]*connWaiting{}
	}
	c := g.waitingBy[key]
	if c == nil {
		c = &connWaiting{}
		g.waitingBy[key] = c
	}
	c.n++
	if c.closing {
		g.closingWaiting++
		return "", false
	}
	if g.maxWaiting <= 0 || n-g.closingWaiting <= g.maxWaiting {
		return "", false
	}
	victim, most := key, c.n
	for k, o := range g.waitingBy {
		if !o.closing && o.n > most {
			victim, most = k, o.n
		}
	}
	v := g.waitingBy[victim]
	v.closing = true
	g.closingWaiting += v.n
	return victim, true
}

// unwait counts a stream of the connection key as waiting no more.
func (g *guard) unwait(key string) {
	g.waitMu.Lock()
	defer g.waitMu.Unlock()
	g.blocked.Add(-1)
	c := g.waitingBy[key]
	if c == nil {
		return
	}
	c.n--
	if c.closing {
		g.closingWaiting--
	}
	if c.n <= 0 {
		delete(g.waitingBy, key)
	}
}

// NewStreams is how many catalog streams may be new at once (in their
// first ticks, before the guard can tell whether their clients read) for
// maxWaiting streams waiting for clients that do not read: a quarter.
func NewStreams(maxWaiting int) int { return max(1, maxWaiting/4) }

// streamCall guards the catalog's server streams (api.Registry and
// api.ExperimentalRegistry; health watches and reflection send little and
// wait for their client by design).
//
// Each such stream may leave up to gRPC's 64 KiB write quota and one
// message queued for its client, and gRPC keeps them (and the stream's
// status behind them) until the client reads or the connection closes:
// ending a stream does not release them, closing its connection does. So
// what clients that do not read make the server hold is bounded by
// bounding the streams that may hold them:
//
//   - at most NewStreams(maxWaiting) streams are new at once (in their
//     first 3 ticks, unless their send waits sooner): more wait to start,
//     holding nothing, each connection's in turn (fairSlots);
//   - a stream whose send has waited a tick (which a client that reads
//     seldom makes it do) counts as waiting; with one more than
//     maxWaiting waiting, on all connections together, the connection
//     with the most waiting streams is closed (the stream's own on a tie:
//     it is dropped, ended with its connection);
//   - a stream whose send has waited stall is dropped.
//
// gRPC gives a handler no way to abandon a Send that waits for the
// client's flow-control window: so the handler runs on its own goroutine,
// the interceptor returns the status in its place, and closing the
// connection releases the waiting Send and what was queued.
func (g *guard) streamCall(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if !info.IsServerStream || info.IsClientStream || !strings.HasPrefix(info.FullMethod, "/api.") {
		return handler(srv, ss)
	}
	isNew := false
	if g.newSlots != nil {
		if err := g.newSlots.acquire(ss.Context(), connKey(ss.Context()), g.stopping); err != nil {
			return err
		}
		isNew = true
	}
	// Counted as working once started: a stream waiting to start holds
	// nothing and does not delay a stop.
	g.streams.Add(1)
	defer g.streams.Add(-1)
	endNew := func() {
		if isNew {
			isNew = false
			g.newSlots.release()
		}
	}
	defer endNew()
	w := &watchedStream{ServerStream: ss}
	done := make(chan error, 1)
	go func() { done <- handler(srv, w) }()
	start := time.Now()
	t := time.NewTicker(g.tick)
	defer t.Stop()
	blocked := false
	key := connKey(ss.Context())
	defer func() {
		if blocked {
			g.unwait(key)
		}
	}()
	for {
		select {
		case err := <-done:
			return err
		case <-ss.Context().Done():
			return <-done
		case now := <-t.C:
			s := w.since.Load()
			waited := time.Duration(0)
			if s != 0 {
				waited = now.Sub(time.Unix(0, s))
			}
			if g.stall > 0 && waited >= g.stall {
				g.drop(ss.Context(), info.FullMethod, "ended a stream whose client read nothing for the stall timeout, and its connection")
				return status.Error(codes.ResourceExhausted, fmt.Sprintf(
					"%s: the client read nothing for %s while the server had more to send; read the stream, or raise the server's --stall-timeout", info.FullMethod, g.stall))
			}
			switch b := waited >= g.tick; {
			case b && !blocked:
				blocked = true
				endNew()
				switch victim, over := g.wait(key); {
				case !over:
				case victim == key || g.conns == nil:
					g.drop(ss.Context(), info.FullMethod, "ended a stream beyond --max-waiting-streams waiting for clients that do not read, and its connection")
					return status.Error(codes.ResourceExhausted, fmt.Sprintf(
						"%s: the server already holds %d streams whose clients do not read them; read the stream, or raise the server's --max-waiting-streams", info.FullMethod, g.maxWaiting))
				default:
					closed := g.conns.closeConn(victim)
					g.log.Warn("more than --max-waiting-streams streams wait for clients that do not read: closed the connection with the most of them", "method", info.FullMethod, "connection-closed", closed)
				}
			case !b && blocked:
				blocked = false
				g.unwait(key)
			case isNew && now.Sub(start) >= 3*g.tick:
				endNew() // its client reads, or it has not had much to send yet
			}
		}
	}
}

// exactCodec is gRPC's proto codec but for one thing: a message is marshalled
// into a buffer close to its own size, where gRPC's takes one from pools of
// 4, 16, 32 KiB and 1 MiB. Messages queued for a client that does not read
// stay in memory up to gRPC's 64 KiB write quota per stream; with gRPC's
// pools a 1.1 KiB bundle held 4 KiB, so an unread stream cost about four
// times its quota. Buffers still come from pools (tiers an eighth apart):
// a fresh allocation for every whole-bundle answer of a few hundred KiB
// kept the collector busy enough to cost a tenth of the calls per second.
type exactCodec struct{ encoding.CodecV2 }

// codecPool's tiers run from 1 KiB to 16 MiB, each an eighth larger than the
// one before (rounded up to 64 bytes): a buffer wastes at most an eighth.
var codecPool = func() mem.BufferPool {
	var sizes []int
	for n := 1 << 10; n <= 16<<20; n += n / 8 {
		n = (n + 63) &^ 63
		sizes = append(sizes, n)
	}
	return mem.NewTieredBufferPool(sizes...)
}()

func (exactCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("proto: cannot marshal %T, want proto.Message", v)
	}
	size := proto.Size(m)
	// UseCachedSize: Size just computed it, and answers are not shared
	// while being sent.
	opts := proto.MarshalOptions{UseCachedSize: true}
	if size <= 1<<10 {
		b, err := opts.Marshal(m)
		if err != nil {
			return nil, err
		}
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	buf := codecPool.Get(size)
	b, err := opts.MarshalAppend((*buf)[:0], m)
	if err != nil {
		codecPool.Put(buf)
		return nil, err
	}
	*buf = b
	return mem.BufferSlice{mem.NewBuffer(buf, codecPool)}, nil
}

func newExactCodec() exactCodec { return exactCodec{encoding.GetCodecV2(grpcproto.Name)} }
