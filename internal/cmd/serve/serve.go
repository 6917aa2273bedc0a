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
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/opmkit/opm/internal/catalogui"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/fbcflags"
	registryserve "github.com/opmkit/opm/internal/cmd/registry/serve"
	"github.com/opmkit/opm/internal/cmd/rootflags"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbccache"
	"github.com/opmkit/opm/internal/gcbudget"
	"github.com/opmkit/opm/internal/httpcatalog"
	"github.com/opmkit/opm/internal/pprofhttp"
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

	// The OLM v1 (catalogd) HTTP API: see internal/httpcatalog.
	HTTP            string // --http address; "" serves no HTTP
	HTTPMetas       bool
	HTTPCatalogName string
	HTTPUI          catalogui.Flags // --http-ui: a web UI of the catalog at / (internal/catalogui)
	HTTPGraphQL     bool            // catalogd's GraphQL endpoint (internal/catalogql)
	// HTTPGraphQLConcurrency is --http-graphql-concurrency: queries
	// answered at once.
	HTTPGraphQLConcurrency int
	// HTTPGzipEncoders is --http-gzip-encoders as httpcatalog's
	// Options.GzipEncoders: 0 is the default, negative no compression
	// (the flag's 0).
	HTTPGzipEncoders int
	NoGRPC           bool // --grpc=false
	// HTTPListener, when set, is served instead of --http, and
	// OnHTTPServing is called with its address once it answers (tests).
	HTTPListener  net.Listener
	OnHTTPServing func(net.Addr)
}

// NewCmd is `opm serve`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "serve DIR",
		Short: "Serve a file-based catalog over gRPC (OLM v0, as an FBC index image does) and HTTP (OLM v1 catalogd's API)",
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

With --http ADDR the catalog is also served over OLM v1's catalogd HTTP API:
GET /api/v1/all (the whole catalog as JSON lines; zstd/gzip, Last-Modified and
If-Modified-Since as catalogd answers them) and, with --http-metas,
GET /api/v1/metas?schema=&package=&name=; with --http-graphql, POST
/api/v1/graphql (catalogd's GraphQL queries); the same paths answer under
/catalogs/NAME/ as a ClusterCatalog's status.urls.base gives them.
--grpc=false serves HTTP alone (and skips the sqlite conversion).
See docs/olmv1.md.

The catalog is read once: later changes to DIR are not served.`,
		Example: `  opm serve catalog/
  opm serve /configs --cache-dir /tmp/cache --cache-only   # at image build time
  opm serve /configs --cache-dir /tmp/cache                # in the image
  opm serve catalog/ --http 127.0.0.1:8080 --grpc=false --http-metas
  curl -s localhost:8080/api/v1/metas?schema=olm.package | jq .name`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			opts.EnforceSet = cmd.Flags().Changed("cache-enforce-integrity")
			grpcOn, _ := cmd.Flags().GetBool("grpc")
			opts.NoGRPC = !grpcOn
			if opts.HTTPGzipEncoders <= 0 {
				opts.HTTPGzipEncoders = -1 // the flag's 0: no compression
			}
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	// --timeout stops a server with exit status 124 (internal/cmd/root).
	cmd.Annotations = map[string]string{rootflags.Server: "true"}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Port, "port", "p", "50051", "port to serve on, on every interface, or HOST:PORT to listen on one address")
	fl.StringVar(&opts.CacheDir, "cache-dir", "", "keep the converted catalog and its digest in this directory, and serve from it when it matches")
	fl.BoolVar(&opts.CacheOnly, "cache-only", false, "build the cache in --cache-dir and exit without serving")
	fl.BoolVar(&opts.CacheEnforceIntegrity, "cache-enforce-integrity", false, "fail when the cache is missing or does not match the catalog (default: true with --cache-dir unless --cache-only)")
	fl.StringVarP(&opts.TerminationLog, "termination-log", "t", "/dev/termination-log", "file that receives the error when serving fails (Kubernetes' terminationMessagePath)")
	fl.BoolVar(&opts.Debug, "debug", false, "log every call")
	fl.StringVar(&opts.PprofAddr, "pprof-addr", "", "serve Go's pprof HTTP endpoints on this address (host:port)")
	opts.Server.AddFlags(fl)
	fbcflags.AddLimitFlags(fl, &opts.Limits)
	fl.StringVar(&opts.HTTP, "http", "", "also serve OLM v1's catalogd HTTP API (/api/v1/all) on this address (host:port)")
	fl.BoolVar(&opts.HTTPMetas, "http-metas", false, "serve /api/v1/metas too (catalogd's APIV1MetasHandler feature gate)")
	fl.StringVar(&opts.HTTPCatalogName, "http-catalog-name", "", "answer /catalogs/NAME/api/v1/... only for this name (default: any name)")
	opts.HTTPUI.AddFlags(fl)
	fl.BoolVar(&opts.HTTPGraphQL, "http-graphql", false, "serve POST /api/v1/graphql too (catalogd's GraphQLCatalogQueries feature gate)")
	fl.IntVar(&opts.HTTPGraphQLConcurrency, "http-graphql-concurrency", 0, "GraphQL queries answered at once, each within a 5 s deadline and a 64 MiB memory budget (0: two for each CPU); another waits up to a second for a turn, then is answered 429 Too Many Requests")
	fl.IntVar(&opts.HTTPGzipEncoders, "http-gzip-encoders", httpcatalog.DefaultGzipEncoders, "gzip compressors (about 800 KiB each; zstd states alike) shared by all HTTP responses, each used for 32 KiB at a time; a slow client holds one compressed chunk, never a compressor (0: no compression)")
	fl.Bool("grpc", true, "serve the gRPC api.Registry on --port; --grpc=false serves --http alone")
	return cmd
}

// Run prepares the catalog and serves it until the context ends.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if opts.CacheOnly && opts.CacheDir == "" {
		return exit.Usagef("--cache-only needs --cache-dir: where to build the cache")
	}
	web := opts.HTTP != "" || opts.HTTPListener != nil
	if opts.NoGRPC && !web {
		return exit.Usagef("--grpc=false needs --http: nothing else would be served")
	}
	if err := opts.HTTPUI.Check(); err != nil {
		return exit.Usagef("%v", err)
	}
	if (opts.HTTPUI.On || opts.HTTPGraphQL) && !web {
		return exit.Usagef("--http-ui and --http-graphql serve beside the HTTP API: add --http ADDR")
	}
	if opts.HTTPGraphQLConcurrency < 0 {
		return exit.Usagef("--http-graphql-concurrency %d: give at least 1 (0: the default, two for each CPU)", opts.HTTPGraphQLConcurrency)
	}
	if opts.HTTPCatalogName != "" {
		if errs := validation.IsDNS1123Subdomain(opts.HTTPCatalogName); len(errs) > 0 {
			return exit.Usagef("--http-catalog-name %q: %s", opts.HTTPCatalogName, strings.Join(errs, "; "))
		}
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
	if lis == nil && !opts.CacheOnly && !opts.NoGRPC {
		// Refuse a bad or busy port before converting the catalog, which
		// can take minutes.
		addr, err := registryserve.ListenAddr(opts.Port)
		if err != nil {
			return exit.Usagef("--port %q%s: %v", opts.Port, f.From("port"), err)
		}
		if lis, err = net.Listen("tcp", addr); err != nil {
			return fail(fmt.Errorf("serve: %w", err))
		}
		defer func() { _ = lis.Close() }() // closed already once served
	}
	if opts.PprofAddr != "" {
		stop, err := pprofhttp.Serve(opts.PprofAddr, log)
		if err != nil {
			return exit.With(exit.Usage, fmt.Errorf("--pprof-addr: %w", err))
		}
		defer stop()
	}
	if opts.NoGRPC && opts.CacheOnly {
		return exit.Usagef("--cache-only builds the gRPC cache: drop --grpc=false")
	}
	var store *httpcatalog.Pending
	if web && !opts.CacheOnly {
		// The HTTP store reads the same files as the gRPC conversion: both at once.
		store = httpcatalog.Start(opts.Dir, httpcatalog.ServerOptions{Addr: opts.HTTP, Listener: opts.HTTPListener, GraphQL: opts.HTTPGraphQL,
			Handler: httpcatalog.Options{Name: opts.HTTPCatalogName, Metas: opts.HTTPMetas, Logger: log, UI: catalogui.For[*httpcatalog.Store](opts.HTTPUI, opts.HTTPCatalogName), GzipEncoders: opts.HTTPGzipEncoders, GraphQLConcurrency: opts.HTTPGraphQLConcurrency}, Limits: opts.Limits})
		defer store.Close()
	}
	if opts.NoGRPC {
		return serveHTTP(ctx, opts, log, fail, store, nil)
	}
	start := time.Now()
	restoreGC := gcbudget.Batch()
	res, cleanup, err := fbccache.Prepare(ctx, opts.Dir, fbccache.Options{CacheDir: opts.CacheDir, EnforceIntegrity: enforce, Load: fbc.LoadOptions{Limits: opts.Limits}})
	restoreGC()
	defer cleanup()
	if err != nil {
		return fail(fmt.Errorf("serve %s: %w", opts.Dir, err))
	}
	how := "cache used"
	if res.Built {
		how = "converted"
	}
	attrs := []any{"configs", opts.Dir}
	if res.Digest != "" {
		attrs = append(attrs, "digest", res.Digest)
	}
	attrs = append(attrs, "how", how, "took", time.Since(start).Round(time.Millisecond).String())
	log.Info("catalog ready", attrs...)
	if opts.CacheOnly {
		return nil
	}
	grpcServe := func(ctx context.Context) error {
		return registry.Serve(ctx, registry.Options{
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
	}
	if web {
		return serveHTTP(ctx, opts, log, fail, store, grpcServe)
	}
	if err := grpcServe(ctx); err != nil {
		return exit.With(exit.Failed, err)
	}
	return nil
}

// serveHTTP serves the catalogd HTTP API from store, beside grpcServe when
// it is not nil; either one stopping stops both.
func serveHTTP(ctx context.Context, opts *Options, log *slog.Logger, fail func(error) error, store *httpcatalog.Pending, grpcServe func(context.Context) error) error {
	srv, took, err := store.Wait()
	if err != nil {
		return fail(fmt.Errorf("serve %s: %w", opts.Dir, err))
	}
	defer func() { _ = srv.Close() }() // a temporary copy
	log.Info("serving HTTP", "address", srv.Addr().String(), "blobs", srv.Store().Blobs(), "metas", opts.HTTPMetas, "graphql", opts.HTTPGraphQL,
		"took", took.Round(time.Millisecond).String())
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 2)
	go func() { defer cancel(); errs <- srv.Serve(ctx) }()
	if opts.OnHTTPServing != nil {
		opts.OnHTTPServing(srv.Addr())
	}
	n := 1
	if grpcServe != nil {
		n++
		go func() { defer cancel(); errs <- grpcServe(ctx) }()
	}
	var all []error
	for range n {
		all = append(all, <-errs)
	}
	if err := errors.Join(all...); err != nil {
		return exit.With(exit.Failed, err)
	}
	return nil
}
