package registry

import (
	"fmt"
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
	DefaultMaxWaitingStreams    = 1024
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
	// MaxWaitingStreams bounds the streams, on all connections, whose
	// server waits to send to a client that does not read: each holds up
	// to gRPC's 64 KiB write quota and one message. A stream that would
	// exceed it ends with RESOURCE_EXHAUSTED.
	MaxWaitingStreams int
	// KeepaliveTime: a connection silent this long is pinged, and closed
	// when the ping is not answered within KeepaliveTimeout (dead peers,
	// half-open connections).
	KeepaliveTime, KeepaliveTimeout time.Duration
	// IdleTimeout closes (GOAWAY) a connection with no call for this long;
	// gRPC clients reconnect when they next call.
	IdleTimeout time.Duration
	// StallTimeout ends, with RESOURCE_EXHAUSTED, a streaming call whose
	// client has read nothing for this long while the server waits to send.
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

// serverOptions turns the limits into gRPC server options.
func (l Limits) serverOptions() []grpc.ServerOption {
	opts := []grpc.ServerOption{grpc.ForceServerCodecV2(newExactCodec())}
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
	waiting := l.MaxWaitingStreams
	switch {
	case waiting == 0:
		waiting = DefaultMaxWaitingStreams
	case waiting < 0:
		waiting = 0
	}
	if stall := pick(l.StallTimeout, DefaultStallTimeout); stall > 0 || waiting > 0 {
		opts = append(opts, grpc.ChainStreamInterceptor(stallGuard(stall, waiting)))
	}
	return opts
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

// stallGuard ends streaming calls that cannot send for stall. gRPC gives a
// handler no way to abandon a Send that waits for the client's flow-control
// window, and a stream is cancelled only when its handler returns: so the
// handler runs on its own goroutine and the interceptor returns the status
// in its place. Returning ends the stream (its context is cancelled), which
// releases the waiting Send; the handler then returns on its own.
//
// It also bounds the streams waiting to send at once, on all connections,
// to maxWaiting (0: no bound): a send counts once it has waited a tick
// (a stream its client reads never waits that long), and a stream that
// would exceed the bound ends at once. So the server holds at most
// maxWaiting streams' write quotas for clients that do not read, however
// many calls each connection may open.
func stallGuard(stall time.Duration, maxWaiting int) grpc.StreamServerInterceptor {
	tick := 250 * time.Millisecond
	if stall > 0 {
		tick = max(min(stall/4, tick), 10*time.Millisecond)
	}
	var waiting atomic.Int64
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if !info.IsServerStream {
			return handler(srv, ss)
		}
		w := &watchedStream{ServerStream: ss}
		done := make(chan error, 1)
		go func() { done <- handler(srv, w) }()
		t := time.NewTicker(tick)
		defer t.Stop()
		counted := false
		defer func() {
			if counted {
				waiting.Add(-1)
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
				blocked := s != 0 && now.Sub(time.Unix(0, s)) >= tick
				if stall > 0 && s != 0 && now.Sub(time.Unix(0, s)) >= stall {
					return status.Error(codes.ResourceExhausted, fmt.Sprintf(
						"%s: the client read nothing for %s while the server had more to send; read the stream, or raise the server's --stall-timeout", info.FullMethod, stall))
				}
				switch {
				case blocked && !counted && maxWaiting > 0:
					counted = true
					if waiting.Add(1) > int64(maxWaiting) {
						return status.Error(codes.ResourceExhausted, fmt.Sprintf(
							"%s: the server already holds %d streams whose clients do not read them; read the stream, or raise the server's --max-waiting-streams", info.FullMethod, maxWaiting))
					}
				case !blocked && counted:
					counted = false
					waiting.Add(-1)
				}
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
