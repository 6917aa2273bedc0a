// Package serve is `opm serve`: a file-based catalog directory served
// through the same gRPC api.Registry, health and reflection as
// `opm registry serve`.
package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/fbcflags"
	registryserve "github.com/opmkit/opm/internal/cmd/registry/serve"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbccache"
	"github.com/opmkit/opm/internal/registry"
)

// Options are the flags and argument of opm serve (upstream's flags).
type Options struct {
	Dir                   string
	Port                  string
	CacheDir              string
	CacheOnly             bool
	CacheEnforceIntegrity bool
	// EnforceSet says --cache-enforce-integrity was given; its default
	// depends on the other cache flags.
	EnforceSet     bool
	TerminationLog string
	Debug          bool
	PprofAddr      string
	Server         registryserve.ServerFlags
	Limits         fbc.Limits
	// Listener, when set, is served instead of --port, and OnServing is
	// called with its address once the catalog answers (tests).
	Listener  net.Listener
	OnServing func(net.Addr)
}

// NewCmd is `opm serve`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "serve DIR",
		Short: "Serve a file-based catalog over gRPC, as an FBC index image does",
		Long: `Serve the file-based catalog in DIR on --port with the api.Registry gRPC
service, grpc.health.v1.Health and server reflection: what OLM's catalog pods
query, answering as opm registry serve answers for the same content in sqlite.

The catalog is converted, at start-up, into a sqlite index database. With
--cache-dir the database is kept there together with a digest of the catalog
files: build it when building the image (opm serve /configs --cache-dir
/tmp/cache --cache-only) and serving starts without reading the catalog. By
default, serving with --cache-dir fails when the cache is missing or does not
match the catalog (--cache-enforce-integrity, as upstream); set it to false to
rebuild the cache instead.

The catalog is read once: later changes to DIR are not served.`,
		Example: `  opm serve catalog/
  opm serve /configs --cache-dir /tmp/cache --cache-only   # at image build time
  opm serve /configs --cache-dir /tmp/cache                # in the image`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			opts.EnforceSet = cmd.Flags().Changed("cache-enforce-integrity")
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Port, "port", "p", "50051", "port to serve on")
	fl.StringVar(&opts.CacheDir, "cache-dir", "", "keep the converted catalog and its digest in this directory, and serve from it when it matches")
	fl.BoolVar(&opts.CacheOnly, "cache-only", false, "build the cache in --cache-dir and exit without serving")
	fl.BoolVar(&opts.CacheEnforceIntegrity, "cache-enforce-integrity", false, "fail when the cache is missing or does not match the catalog (default: true with --cache-dir unless --cache-only)")
	fl.StringVarP(&opts.TerminationLog, "termination-log", "t", "/dev/termination-log", "file that receives the error when serving fails (Kubernetes' terminationMessagePath)")
	fl.BoolVar(&opts.Debug, "debug", false, "log every call")
	fl.StringVar(&opts.PprofAddr, "pprof-addr", "", "serve Go's pprof HTTP endpoints on this address (host:port)")
	opts.Server.AddFlags(fl)
	fbcflags.AddLimitFlags(fl, &opts.Limits)
	return cmd
}

// Run prepares the catalog and serves it until the context ends.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if opts.CacheOnly && opts.CacheDir == "" {
		return exit.Usagef("--cache-only needs --cache-dir: where to build the cache")
	}
	enforce := opts.CacheEnforceIntegrity
	if !opts.EnforceSet {
		enforce = opts.CacheDir != "" && !opts.CacheOnly
	}
	level := slog.LevelInfo
	if opts.Debug {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(f.IO.ErrOut, &slog.HandlerOptions{Level: level}))
	fail := func(err error) error {
		if opts.TerminationLog != "" && !opts.CacheOnly {
			if werr := os.WriteFile(opts.TerminationLog, []byte(err.Error()+"\n"), 0o644); werr != nil {
				log.Debug("cannot write the termination log", "path", opts.TerminationLog, "error", werr)
			}
		}
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return exit.Interrupt()
		}
		return exit.With(exit.Failed, err)
	}
	if st, err := os.Stat(opts.Dir); err != nil {
		return exit.With(exit.Usage, fmt.Errorf("serve %s: %w", opts.Dir, err))
	} else if !st.IsDir() {
		return exit.Usagef("serve %s: not a directory (give the catalog's root directory)", opts.Dir)
	}
	lis := opts.Listener
	if lis == nil && !opts.CacheOnly {
		// Refuse a bad or busy port before converting the catalog, which
		// can take minutes.
		port, err := strconv.ParseUint(opts.Port, 10, 16)
		if err != nil {
			return exit.Usagef("--port %q%s: want a TCP port number (0 to 65535)", opts.Port, f.From("port"))
		}
		if lis, err = net.Listen("tcp", net.JoinHostPort("", strconv.FormatUint(port, 10))); err != nil {
			return fail(fmt.Errorf("serve: %w", err))
		}
		defer func() { _ = lis.Close() }() // closed already once served
	}
	if opts.PprofAddr != "" {
		stop, err := servePprof(opts.PprofAddr, log)
		if err != nil {
			return exit.With(exit.Usage, fmt.Errorf("--pprof-addr: %w", err))
		}
		defer stop()
	}
	start := time.Now()
	res, cleanup, err := fbccache.Prepare(ctx, opts.Dir, fbccache.Options{CacheDir: opts.CacheDir, EnforceIntegrity: enforce, Load: fbc.LoadOptions{Limits: opts.Limits}})
	defer cleanup()
	if err != nil {
		return fail(fmt.Errorf("serve %s: %w", opts.Dir, err))
	}
	how := "cache used"
	if res.Built {
		how = "converted"
	}
	log.Info("catalog ready", "configs", opts.Dir, "digest", res.Digest, "how", how, "took", time.Since(start).Round(time.Millisecond).String())
	if opts.CacheOnly {
		return nil
	}
	err = registry.Serve(ctx, registry.Options{
		DB:             res.Database,
		Listener:       lis,
		TerminationLog: opts.TerminationLog,
		StopGrace:      opts.Server.Grace(),
		Limits:         opts.Server.Limits(),
		Debug:          opts.Debug,
		Logger:         log,
		OnServing:      opts.OnServing,
		Catalog:        true,
	})
	if err != nil {
		return exit.With(exit.Failed, err)
	}
	return nil
}

func servePprof(addr string, log *slog.Logger) (func(), error) {
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
