package httpcatalog

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// Serve answers h on lis until ctx ends, then stops taking requests and
// gives those under way a few seconds to finish. Its timeouts are
// catalogd's: 5 s to read a request, 5 min to write a (large) catalog.
func Serve(ctx context.Context, lis net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       5 * time.Second,
		WriteTimeout:      5 * time.Minute,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close() // grace ran out: drop what is left
		}
	}()
	err := srv.Serve(lis)
	if errors.Is(err, http.ErrServerClosed) {
		<-done
		return nil
	}
	return fmt.Errorf("http server on %s: %w", lis.Addr(), err)
}

// ServerOptions say where to serve a catalog directory.
type ServerOptions struct {
	// Addr is host:port to listen on, unless Listener is set.
	Addr     string
	Listener net.Listener
	Handler  Options
}

// Server is a catalog directory stored in catalogd's form and listening.
type Server struct {
	store *Store
	dir   string
	lis   net.Listener
	h     http.Handler
}

// Listen stores the catalog in dir (in a temporary directory of its own)
// and opens the listener, so that a bad catalog or a busy address fails
// before anything is served.
func Listen(dir string, o ServerOptions) (*Server, error) {
	tmp, err := os.MkdirTemp("", "opm-http-catalog-")
	if err != nil {
		return nil, fmt.Errorf("http: %w", err)
	}
	st, err := Build(os.DirFS(dir), tmp)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("http: %w", err)
	}
	lis := o.Listener
	if lis == nil {
		if lis, err = net.Listen("tcp", o.Addr); err != nil {
			_ = st.Close()
			_ = os.RemoveAll(tmp)
			return nil, fmt.Errorf("http: %w", err)
		}
	}
	return &Server{store: st, dir: tmp, lis: lis, h: Handler(st, o.Handler)}, nil
}

// Addr is where the server listens.
func (s *Server) Addr() net.Addr { return s.lis.Addr() }

// Store is what the server answers from.
func (s *Server) Store() *Store { return s.store }

// Serve answers until ctx ends.
func (s *Server) Serve(ctx context.Context) error { return Serve(ctx, s.lis, s.h) }

// Close releases the stored catalog (and the listener, if Serve never ran).
func (s *Server) Close() error {
	_ = s.lis.Close() // already closed once Serve has run
	return errors.Join(s.store.Close(), os.RemoveAll(s.dir))
}
