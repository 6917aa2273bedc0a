package registry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// ProbeOptions configure Probe. The defaults are grpc_health_probe's.
type ProbeOptions struct {
	// Addr is HOST:PORT of the server (":50051" means localhost).
	Addr string
	// Service is the health service name to check; "" asks about the
	// server as a whole.
	Service string
	// ConnectTimeout bounds establishing the connection (default 1s).
	ConnectTimeout time.Duration
	// RPCTimeout bounds the health check call (default 1s).
	RPCTimeout time.Duration
	// UserAgent sent with the call (default "grpc_health_probe").
	UserAgent string

	// TLS connects with TLS instead of plaintext.
	TLS bool
	// TLSNoVerify skips verifying the server's certificate.
	TLSNoVerify bool
	// TLSCACert is a PEM file of CAs to verify the server with (default:
	// the system's).
	TLSCACert string
	// TLSClientCert and TLSClientKey are PEM files of a client certificate.
	TLSClientCert, TLSClientKey string
	// TLSServerName overrides the name verified in the server certificate.
	TLSServerName string
}

// ProbeFailure says which step of a probe failed; its values are
// grpc_health_probe's exit codes.
type ProbeFailure int

// Probe failures.
const (
	ProbeInvalidOptions ProbeFailure = 1 // bad options (TLS files)
	ProbeConnectFailed  ProbeFailure = 2 // no connection within ConnectTimeout
	ProbeRPCFailed      ProbeFailure = 3 // the health call failed
	ProbeNotServing     ProbeFailure = 4 // the server answered, not SERVING
)

// ProbeError is why a probe failed: Reason is one line for a human.
type ProbeError struct {
	Failure ProbeFailure
	Reason  string
}

func (e *ProbeError) Error() string { return e.Reason }

// ExitCode is the exit code grpc_health_probe uses for this failure.
func (e *ProbeError) ExitCode() int { return int(e.Failure) }

// Probe checks a gRPC server's health (grpc.health.v1.Health/Check) and
// returns nil when it answers SERVING, else a *ProbeError saying what failed.
func Probe(ctx context.Context, opts ProbeOptions) error {
	if opts.Addr == "" {
		return &ProbeError{ProbeInvalidOptions, "no address to probe (give HOST:PORT)"}
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = time.Second
	}
	if opts.RPCTimeout <= 0 {
		opts.RPCTimeout = time.Second
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "grpc_health_probe"
	}
	creds := insecure.NewCredentials()
	if opts.TLS {
		cfg, err := probeTLS(opts)
		if err != nil {
			return &ProbeError{ProbeInvalidOptions, err.Error()}
		}
		creds = credentials.NewTLS(cfg)
	}
	conn, err := grpc.NewClient(opts.Addr, grpc.WithTransportCredentials(creds), grpc.WithUserAgent(opts.UserAgent))
	if err != nil {
		return &ProbeError{ProbeInvalidOptions, fmt.Sprintf("probe %s: %v", opts.Addr, err)}
	}
	defer func() { _ = conn.Close() }()

	cctx, cancel := context.WithTimeout(ctx, opts.ConnectTimeout)
	defer cancel()
	conn.Connect()
	for st := conn.GetState(); st != connectivity.Ready; st = conn.GetState() {
		if !conn.WaitForStateChange(cctx, st) {
			return &ProbeError{ProbeConnectFailed, fmt.Sprintf("cannot connect to %s within %s (last state %s)", opts.Addr, opts.ConnectTimeout, st)}
		}
	}

	rctx, rcancel := context.WithTimeout(ctx, opts.RPCTimeout)
	defer rcancel()
	resp, err := healthpb.NewHealthClient(conn).Check(rctx, &healthpb.HealthCheckRequest{Service: opts.Service})
	if err != nil {
		st := status.Convert(err)
		switch st.Code() {
		case codes.Unimplemented:
			return &ProbeError{ProbeRPCFailed, fmt.Sprintf("%s does not implement the gRPC health protocol (grpc.health.v1.Health)", opts.Addr)}
		case codes.NotFound:
			return &ProbeError{ProbeRPCFailed, fmt.Sprintf("%s has no health status for service %q", opts.Addr, opts.Service)}
		case codes.DeadlineExceeded:
			return &ProbeError{ProbeRPCFailed, fmt.Sprintf("health check of %s timed out after %s", opts.Addr, opts.RPCTimeout)}
		}
		return &ProbeError{ProbeRPCFailed, fmt.Sprintf("health check of %s failed: %s: %s", opts.Addr, st.Code(), st.Message())}
	}
	if s := resp.GetStatus(); s != healthpb.HealthCheckResponse_SERVING {
		what := opts.Addr
		if opts.Service != "" {
			what = fmt.Sprintf("service %q at %s", opts.Service, opts.Addr)
		}
		return &ProbeError{ProbeNotServing, fmt.Sprintf("%s is not serving (health status %s)", what, s)}
	}
	return nil
}

func probeTLS(opts ProbeOptions) (*tls.Config, error) {
	cfg := &tls.Config{InsecureSkipVerify: opts.TLSNoVerify, ServerName: opts.TLSServerName} //nolint:gosec // skipping verification is the user's explicit choice
	if opts.TLSCACert != "" {
		pem, err := os.ReadFile(opts.TLSCACert)
		if err != nil {
			return nil, fmt.Errorf("read CA certificates: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("read CA certificates %s: no PEM certificate found", opts.TLSCACert)
		}
		cfg.RootCAs = pool
	}
	if (opts.TLSClientCert == "") != (opts.TLSClientKey == "") {
		return nil, errors.New("a client certificate needs both its certificate and its key file")
	}
	if opts.TLSClientCert != "" {
		cert, err := tls.LoadX509KeyPair(opts.TLSClientCert, opts.TLSClientKey)
		if err != nil {
			return nil, fmt.Errorf("load client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
