// Package health is `opm registry health`, and grpc_health_probe: the same
// check when opm runs under that name (the serving image links
// /bin/grpc_health_probe to opm, and OLM's pod probes run it).
package health

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/registry"
)

// Options are the flags of opm registry health.
type Options struct {
	registry.ProbeOptions
}

// NewCmd is `opm registry health`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "health --addr HOST:PORT",
		Short: "Check that a registry server answers SERVING (as grpc_health_probe)",
		Long: `Ask a gRPC server for its health (grpc.health.v1.Health/Check) and exit 0
when it answers SERVING. This is grpc_health_probe's check, with its exit
statuses: 1 bad options, 2 no connection within --connect-timeout, 3 the
health call failed (timeout, no health service, unknown --service), 4 the
server answered but is not SERVING. A bad command line exits 64, as on
every opm registry command.

Run under the name grpc_health_probe (the serving image's
/bin/grpc_health_probe is a link to opm), opm is that probe, with its
single-dash flags: grpc_health_probe -addr=:50051.`,
		Example: `  opm registry health --addr localhost:50051
  opm registry health --addr localhost:50051 --service api.Registry --rpc-timeout 5s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	addFlags(cmd.Flags(), &opts.ProbeOptions)
	return cmd
}

// addFlags defines the probe's flags, named as grpc_health_probe's.
func addFlags(fl *pflag.FlagSet, o *registry.ProbeOptions) {
	fl.StringVar(&o.Addr, "addr", "", "HOST:PORT of the server (:50051 is this host)")
	fl.StringVar(&o.Service, "service", "", "health service name to check (default: the server as a whole)")
	fl.DurationVar(&o.ConnectTimeout, "connect-timeout", time.Second, "how long to wait for a connection")
	fl.DurationVar(&o.RPCTimeout, "rpc-timeout", time.Second, "how long to wait for the health answer")
	fl.StringVar(&o.UserAgent, "user-agent", "grpc_health_probe", "user agent sent with the call")
	fl.BoolVar(&o.TLS, "tls", false, "connect with TLS")
	fl.BoolVar(&o.TLSNoVerify, "tls-no-verify", false, "with --tls, do not verify the server's certificate")
	fl.StringVar(&o.TLSCACert, "tls-ca-cert", "", "with --tls, PEM file of the CAs to verify the server with (default: the system's)")
	fl.StringVar(&o.TLSClientCert, "tls-client-cert", "", "with --tls, PEM file of a client certificate")
	fl.StringVar(&o.TLSClientKey, "tls-client-key", "", "with --tls, PEM file of the client certificate's key")
	fl.StringVar(&o.TLSServerName, "tls-server-name", "", "with --tls, the name to verify in the server's certificate")
}

// Run probes the server and says whether it is serving.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if opts.Addr == "" {
		return exit.Usagef("--addr is required: HOST:PORT of the server to probe")
	}
	err := registry.Probe(ctx, opts.ProbeOptions)
	var pe *registry.ProbeError
	switch {
	case err == nil:
		fmt.Fprintln(f.IO.ErrOut, servingLine(opts.ProbeOptions))
		return nil
	case ctx.Err() != nil:
		return exit.Interrupt()
	case errors.As(err, &pe):
		// grpc_health_probe's statuses, kept on this upstream-style path.
		return exit.Exactly(pe.ExitCode(), err)
	}
	return exit.With(exit.Failed, err)
}

func servingLine(o registry.ProbeOptions) string {
	if o.Service != "" {
		return fmt.Sprintf("service %q at %s is serving", o.Service, o.Addr)
	}
	return o.Addr + " is serving"
}
