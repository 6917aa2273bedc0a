// Package serve is `opm registry serve`: the gRPC server of a CatalogSource
// pod, with upstream opm's flags.
package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/rootflags"
	"github.com/opmkit/opm/internal/registry"
)

// Infinite is --timeout-seconds' value for serving until a signal.
const Infinite = "infinite"

// Options are the flags of opm registry serve.
type Options struct {
	Database       string
	Port           string
	TerminationLog string
	TimeoutSeconds string
	SkipMigrate    bool
	Debug          bool
	Server         ServerFlags
	// OnServing, when set (tests), is called once the server answers.
	OnServing func(net.Addr)
}

// NewCmd is `opm registry serve`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "serve [-d DATABASE] [-p PORT]",
		Short: "Serve an index database over gRPC (the program of a CatalogSource pod)",
		Long: `Serve a sqlite index database to OLM: the api.Registry gRPC service,
gRPC health (grpc.health.v1.Health) and reflection, on every interface at
--port.

The database is opened read-only and immutable: nothing is ever written
next to it, so the server runs on a read-only root file system and as any
user that can read the file. Upstream opm migrated the database to the
latest schema on start; opm serves schema 13 databases (every opm and
upstream v1.x since 2020 writes them) and refuses older ones with a
message saying how to convert them, so --skip-migrate changes nothing.

On start it logs one line (database, address, package and bundle counts)
to stderr. SIGTERM or SIGINT (or --timeout-seconds passing) stops it
gracefully: health turns NOT_SERVING, calls in flight finish, it logs one
line and exits 0. Calls still running --stop-grace after the signal are
cancelled, so a client that never reads its stream cannot hold the pod
until SIGKILL. When the database cannot be served, the error also goes
to --termination-log, which Kubernetes shows in the pod's status.`,
		Example: `  opm registry serve -d database/index.db -p 50051
  opm registry health --addr localhost:50051`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	// --timeout stops a server with exit status 124 (internal/cmd/root).
	cmd.Annotations = map[string]string{rootflags.Server: "true"}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Database, "database", "d", "bundles.db", "the sqlite index database to serve")
	fl.StringVarP(&opts.Port, "port", "p", "50051", "TCP port to serve on, on every interface, or HOST:PORT to listen on one address")
	fl.StringVarP(&opts.TerminationLog, "termination-log", "t", "/dev/termination-log", "file that receives the error when the database cannot be served (Kubernetes' terminationMessagePath); empty for none")
	fl.StringVar(&opts.TimeoutSeconds, "timeout-seconds", Infinite, "stop serving gracefully after this many seconds, or "+Infinite)
	fl.BoolVar(&opts.SkipMigrate, "skip-migrate", false, "accepted for compatibility with upstream opm: opm never migrates, it serves the database read-only")
	fl.BoolVar(&opts.Debug, "debug", false, "log every gRPC call (method, duration, status code)")
	opts.Server.AddFlags(fl)
	return cmd
}

// Run serves the database until ctx ends or the timeout passes.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	addr, err := ListenAddr(opts.Port)
	if err != nil {
		return exit.Usagef("--port %q%s: %v", opts.Port, f.From("port"), err)
	}
	timeout, err := ParseTimeout(opts.TimeoutSeconds)
	if err != nil {
		return exit.Usagef("--timeout-seconds %q%s: %v", opts.TimeoutSeconds, f.From("timeout-seconds"), err)
	}
	if opts.Database == "" {
		return exit.Usagef("--database%s is empty: name the index database to serve", f.From("database"))
	}
	level := slog.LevelInfo
	if opts.Debug {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(f.IO.ErrOut, &slog.HandlerOptions{Level: level}))
	err = registry.Serve(ctx, registry.Options{
		DB:             opts.Database,
		Addr:           addr,
		TerminationLog: opts.TerminationLog,
		Timeout:        timeout,
		StopGrace:      opts.Server.Grace(),
		Limits:         opts.Server.Limits(),
		Debug:          opts.Debug,
		Logger:         log,
		OnServing:      opts.OnServing,
	})
	if err != nil {
		return exit.With(exit.Failed, err)
	}
	return nil
}

// ListenAddr reads --port of the gRPC servers: a bare port listens on
// every interface, as upstream's -p did; HOST:PORT (127.0.0.1:50051,
// [::1]:50051, localhost:50051) listens on that address only.
func ListenAddr(s string) (string, error) {
	host, port := "", s
	if strings.ContainsRune(s, ':') {
		var err error
		if host, port, err = net.SplitHostPort(s); err != nil {
			return "", fmt.Errorf("want a TCP port number (0 to 65535) or HOST:PORT (an IPv6 host in brackets: [::1]:50051): %v", err)
		}
		if host == "" {
			return "", errors.New("want a TCP port number (0 to 65535) or HOST:PORT: the host is empty (give the port alone to listen on every interface)")
		}
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return "", errors.New("want a TCP port number (0 to 65535) or HOST:PORT")
	}
	return net.JoinHostPort(host, strconv.FormatUint(n, 10)), nil
}

// ParseTimeout reads --timeout-seconds: a whole number of seconds, or
// "infinite" (0: no timeout).
func ParseTimeout(s string) (time.Duration, error) {
	if s == Infinite {
		return 0, nil
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 0 {
		return 0, errors.New("want a positive whole number of seconds, or " + Infinite)
	}
	return time.Duration(n) * time.Second, nil
}

// ServerFlags bound what clients can make a server hold and how long a stop
// may take; opm serve has them too. Zero turns a limit off.
type ServerFlags struct {
	StopGrace            time.Duration
	MaxConcurrentStreams int
	MaxWaitingStreams    int
	KeepaliveTime        time.Duration
	IdleTimeout          time.Duration
	StallTimeout         time.Duration
}

// AddFlags adds the server flags to fl.
func (s *ServerFlags) AddFlags(fl *pflag.FlagSet) {
	fl.DurationVar(&s.StopGrace, "stop-grace", registry.DefaultStopGrace, "after SIGTERM or the timeout, wait this long for calls in flight, then cancel them and exit (0: no time limit for calls whose clients read; once for 2s nothing but clients that read nothing remain, cancel them)")
	fl.IntVar(&s.MaxConcurrentStreams, "max-concurrent-streams", registry.DefaultMaxConcurrentStreams, "calls one client connection may have open at once; more wait in the client (0: no limit, as upstream)")
	fl.IntVar(&s.MaxWaitingStreams, "max-waiting-streams", registry.DefaultMaxWaitingStreams, "catalog streams (ListBundles, ...) running at once on all connections, each holding at most 64 KiB for a client that does not read; beyond it the connection holding the most waiting streams is closed (0: no limit)")
	fl.DurationVar(&s.KeepaliveTime, "keepalive-time", registry.DefaultKeepaliveTime, "ping a connection silent this long, and close it when the ping is not answered (0: never)")
	fl.DurationVar(&s.IdleTimeout, "idle-timeout", registry.DefaultIdleTimeout, "close connections without a call for this long; clients reconnect when they next call (0: never)")
	fl.DurationVar(&s.StallTimeout, "stall-timeout", registry.DefaultStallTimeout, "end a stream whose client has read nothing for this long, and close its connection (0: never)")
}

// off maps a flag's 0 (off) to the library's negative (off; 0 is default).
func off(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// Grace is --stop-grace as registry.Options.StopGrace.
func (s ServerFlags) Grace() time.Duration { return off(s.StopGrace) }

// Limits are the limit flags as registry.Options.Limits.
func (s ServerFlags) Limits() registry.Limits {
	n := s.MaxConcurrentStreams
	if n <= 0 {
		n = -1
	}
	w := s.MaxWaitingStreams
	if w <= 0 {
		w = -1
	}
	return registry.Limits{MaxConcurrentStreams: n, MaxWaitingStreams: w, KeepaliveTime: off(s.KeepaliveTime), IdleTimeout: off(s.IdleTimeout), StallTimeout: off(s.StallTimeout)}
}
