package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// DefaultAddr is where a CatalogSource pod's registry listens.
const DefaultAddr = ":50051"

// Options configure Serve.
type Options struct {
	// DB is the index database to serve (opened read-only). Ignored when
	// Backend is set.
	DB string
	// Backend serves instead of DB; Serve does not close it.
	Backend Backend
	// Listener to serve on; when nil, Serve listens on Addr.
	Listener net.Listener
	// Addr is the TCP address to listen on when Listener is nil
	// (default DefaultAddr, ":50051"; "127.0.0.1:0" picks a free port).
	Addr string
	// TerminationLog is a file (Kubernetes' terminationMessagePath,
	// /dev/termination-log) that receives the error when Serve fails, so
	// that `kubectl describe pod` shows it. Empty: none. Failing to write
	// it is logged, never fatal.
	TerminationLog string
	// Timeout stops serving (gracefully, returning nil) after this long;
	// 0 serves until ctx ends.
	Timeout time.Duration
	// StopGrace bounds the graceful stop: calls still running after it are
	// cancelled and Serve returns, whatever the clients do (a client that
	// stops reading a stream must not keep a pod alive until SIGKILL).
	// 0 means DefaultStopGrace; negative sets no time limit but still ends
	// what only a client holds: the stop waits while calls run or clients
	// are being sent to, and once for StopQuiet nothing but clients that
	// read nothing (or idle watches) remain, it cancels them and returns.
	StopGrace time.Duration
	// Limits bound what clients can make the server hold.
	Limits Limits
	// Debug logs every call (method, duration, status code) at debug level.
	Debug bool
	// Logger receives the start and stop lines (default: slog.Default()).
	Logger *slog.Logger
	// OnServing, when set, is called with the listening address once the
	// database is open and checked and the health service answers SERVING.
	OnServing func(net.Addr)
	// Catalog says the database was made from a file-based catalog
	// (opm serve): it is answered as upstream's opm serve answers the
	// catalog (see Catalog), and api.ExperimentalRegistry is served, as
	// upstream's opm serve does. Without it, the database is answered as
	// upstream's opm registry serve answers it, and the experimental
	// service is served only for a database that keeps a catalog's blobs.
	Catalog bool
}

// Serve serves the api.Registry service, health and reflection until ctx is
// cancelled (SIGTERM in a pod) or Timeout passes, then stops gracefully:
// new calls are refused, health answers NOT_SERVING, and calls in flight
// finish, or are cancelled once StopGrace has passed. It returns nil after a graceful stop and an error when the
// database cannot be served or the listener fails. It logs one line when it
// starts serving (database, address, package and bundle counts) and one when
// it stops.
func Serve(ctx context.Context, opts Options) (err error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	defer func() {
		if err != nil && opts.TerminationLog != "" {
			if werr := os.WriteFile(opts.TerminationLog, []byte(err.Error()+"\n"), 0o644); werr != nil {
				log.Warn("cannot write the termination log", "path", opts.TerminationLog, "error", werr)
			}
		}
	}()

	start := time.Now()
	b, source := opts.Backend, "backend"
	if b == nil {
		if opts.DB == "" {
			return errors.New("serve: no database given")
		}
		s, err := OpenSQLite(ctx, opts.DB)
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		var open Backend = s
		defer func() { _ = open.Close() }() // read-only: closing loses nothing
		b, source = s, opts.DB
		if opts.Catalog {
			c, err := NewCatalog(ctx, s)
			if err != nil {
				return fmt.Errorf("serve: %w", err)
			}
			b, open = c, c
		}
		if s.RolledBack() {
			log.Warn("the database has the journal of a write that never committed (a killed writer): serving the committed content from a private rolled-back copy; open it once with write access to roll the file itself back",
				"database", opts.DB, "journal", opts.DB+"-journal")
		}
		if s.CheckpointedWAL() {
			log.Info("the database has a write-ahead log: serving its committed content from a private copy with the log checkpointed in",
				"database", opts.DB, "wal", opts.DB+"-wal")
		}
	}
	stats, err := b.Stats(ctx)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}

	lis := opts.Listener
	if lis == nil {
		addr := opts.Addr
		if addr == "" {
			addr = DefaultAddr
		}
		if lis, err = net.Listen("tcp", addr); err != nil {
			return fmt.Errorf("serve: listen on %s: %w", addr, err)
		}
	}
	conns := newConnSet()
	lis = conns.listener(lis)
	g := opts.Limits.newGuard(conns, log)
	sopts := opts.Limits.serverOptions(g)
	if opts.Debug {
		sopts = append(sopts, grpc.ChainUnaryInterceptor(logUnary(log)), grpc.ChainStreamInterceptor(logStream(log)))
	}
	srv, health := NewGRPCServer(b, sopts...)
	if cs, ok := b.(CustomSchemaBackend); ok && (opts.Catalog || cs.HasCatalogMetas()) {
		RegisterExperimental(srv, cs)
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	log.Info("serving registry", "database", source, "address", lis.Addr().String(),
		"packages", stats.Packages, "bundles", stats.Bundles, "startup", time.Since(start).Round(time.Millisecond).String())
	if opts.OnServing != nil {
		opts.OnServing(lis.Addr())
	}

	var timeout <-chan time.Time
	if opts.Timeout > 0 {
		t := time.NewTimer(opts.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	reason := ""
	select {
	case err := <-served:
		return fmt.Errorf("serve on %s: %w", lis.Addr(), err)
	case <-ctx.Done():
		reason = "signal"
	case <-timeout:
		reason = "timeout"
	}
	health.Shutdown()
	g.stop()
	stopped := make(chan struct{})
	go func() { srv.GracefulStop(); close(stopped) }()
	grace, cancelled := opts.StopGrace, false
	if grace == 0 {
		grace = DefaultStopGrace
	}
	if grace > 0 {
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-stopped:
		case <-t.C:
			// Stop closes every connection, which cancels the calls'
			// contexts and releases sends waiting for a client.
			cancelled = true
			srv.Stop()
			<-stopped
		}
	} else {
		cancelled = stopWhenStalled(srv, stopped, g, conns)
	}
	switch {
	case cancelled && grace > 0:
		log.Warn("calls still running after the stop grace were cancelled", "grace", grace.String())
	case cancelled:
		log.Warn("calls waiting only for clients that read nothing were cancelled", "quiet", StopQuiet.String())
	}
	log.Info("stopped serving registry", "database", source, "address", lis.Addr().String(), "reason", reason)
	return nil
}

// StopQuiet is how long a stop without grace waits with no call working
// and nothing sent to any client before it cancels what is left.
const StopQuiet = 2 * time.Second

// stopWhenStalled waits for the graceful stop of srv (stopped closes when
// it ends) for as long as calls work or clients receive data; once neither
// has happened for StopQuiet, what is left waits only for clients that do
// not read (or watch health), so it stops srv, closing every connection.
// It reports whether it had to.
func stopWhenStalled(srv *grpc.Server, stopped <-chan struct{}, g *guard, conns *connSet) bool {
	t := time.NewTicker(StopQuiet / 8)
	defer t.Stop()
	for {
		select {
		case <-stopped:
			return false
		case <-t.C:
			if g.working() == 0 && conns.quietFor(StopQuiet) {
				srv.Stop()
				<-stopped
				return true
			}
		}
	}
}

func logUnary(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := handler(ctx, req)
		log.Debug("call", "method", info.FullMethod, "duration", time.Since(start), "code", status.Code(err).String())
		return resp, err
	}
}

func logStream(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		start := time.Now()
		err := handler(srv, ss)
		log.Debug("call", "method", info.FullMethod, "duration", time.Since(start), "code", status.Code(err).String())
		return err
	}
}
