package httpcatalog

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/opmkit/opm/internal/catalogql"
	"github.com/opmkit/opm/internal/fbc"
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
	// Limits bound what is read of the catalog (zero: the defaults).
	Limits fbc.Limits
	// GraphQL builds the catalog's GraphQL schema with the store and
	// serves it (Handler.GraphQL).
	GraphQL bool
}

// Server is a catalog directory stored in catalogd's form and listening.
type Server struct {
	store *Store
	dir   string
	lis   net.Listener
	h     http.Handler
	// graphQL is the schema --http-graphql serves, nil without.
	graphQL *catalogql.Schema
}

// Listen stores the catalog in dir (in a temporary directory of its own)
// and opens the listener, so that a bad catalog or a busy address fails
// before anything is served.
func Listen(dir string, o ServerOptions) (*Server, error) {
	s, err := stored(dir, o.Limits, o.GraphQL)
	if err != nil {
		return nil, err
	}
	return s.listen(o)
}

// stored is a server of the catalog in dir, not listening yet, read
// within lim, with its GraphQL schema when graphQL is set.
func stored(dir string, lim fbc.Limits, graphQL bool) (*Server, error) {
	fsys, root, err := fbc.OpenDir(dir)
	if err != nil {
		return nil, fmt.Errorf("http: %w", err)
	}
	defer func() { _ = root.Close() }() // read-only
	tmp, err := os.MkdirTemp("", "opm-http-catalog-")
	if err != nil {
		return nil, fmt.Errorf("http: %w", err)
	}
	st, err := BuildWith(fsys, tmp, lim)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("http: %w", err)
	}
	srv := &Server{store: st, dir: tmp}
	if graphQL {
		if srv.graphQL, err = catalogql.Build(st); err != nil {
			_ = srv.Close()
			return nil, fmt.Errorf("http: %w", err)
		}
	}
	return srv, nil
}

// listen opens the listener of o (closing the store when it cannot).
func (s *Server) listen(o ServerOptions) (*Server, error) {
	lis := o.Listener
	if lis == nil {
		var err error
		if lis, err = net.Listen("tcp", o.Addr); err != nil {
			_ = s.store.Close()
			_ = os.RemoveAll(s.dir)
			return nil, fmt.Errorf("http: %w", err)
		}
	}
	ho := o.Handler
	if s.graphQL != nil {
		ho.GraphQL = s.graphQL
	}
	s.lis, s.h = lis, Handler(s.store, ho)
	return s, nil
}

// Addr is where the server listens.
func (s *Server) Addr() net.Addr { return s.lis.Addr() }

// Store is what the server answers from.
func (s *Server) Store() *Store { return s.store }

// Serve answers until ctx ends.
func (s *Server) Serve(ctx context.Context) error { return Serve(ctx, s.lis, s.h) }

// Close releases the stored catalog (and the listener, if Serve never ran).
func (s *Server) Close() error {
	if s.lis != nil {
		_ = s.lis.Close() // already closed once Serve has run
	}
	return errors.Join(s.store.Close(), os.RemoveAll(s.dir))
}

// Pending is a Listen whose catalog is stored in the background.
type Pending struct {
	o    ServerOptions
	done chan struct{}
	srv  *Server
	err  error
	took time.Duration
	used bool
}

// Start stores the catalog in dir in the background, so that a caller with
// other work on the same catalog (opm serve's gRPC conversion) does both at
// once; Wait then opens the listener. Close releases what nobody waited for.
func Start(dir string, o ServerOptions) *Pending {
	p := &Pending{o: o, done: make(chan struct{})}
	start := time.Now()
	go func() {
		defer close(p.done)
		p.srv, p.err = stored(dir, o.Limits, o.GraphQL)
		p.took = time.Since(start)
	}()
	return p
}

// Wait is Listen's result: it waits for the store and opens the listener;
// the caller then owns the server. It also says how long storing took.
func (p *Pending) Wait() (*Server, time.Duration, error) {
	<-p.done
	p.used = true
	if p.err != nil {
		return nil, p.took, p.err
	}
	srv, err := p.srv.listen(p.o)
	return srv, p.took, err
}

// Close waits for the store and releases it unless Wait handed it out.
func (p *Pending) Close() {
	<-p.done
	if !p.used && p.srv != nil {
		_ = p.srv.Close()
	}
}
