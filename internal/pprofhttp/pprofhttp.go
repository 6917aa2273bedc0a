// Package pprofhttp serves Go's pprof endpoints on an address of their own
// (opm serve --pprof-addr), apart from what the server answers clients.
package pprofhttp

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// Serve listens on addr and serves /debug/pprof/ until the returned stop
// is called.
func Serve(addr string, log *slog.Logger) (stop func(), err error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(lis) }()
	log.Info("serving pprof", "address", lis.Addr().String())
	return func() { _ = srv.Close() }, nil
}
