package serve_test

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/registry/serve"
	"github.com/opmkit/opm/internal/iostreams"
	"github.com/opmkit/opm/internal/registry"
)

func TestFlags(t *testing.T) {
	t.Parallel()
	opts, err := cmdtest.Parse(t, serve.NewCmd)
	require.NoError(t, err)
	// Upstream opm's defaults.
	assert.Equal(t, "bundles.db", opts.Database)
	assert.Equal(t, "50051", opts.Port)
	assert.Equal(t, "/dev/termination-log", opts.TerminationLog)
	assert.Equal(t, "infinite", opts.TimeoutSeconds)
	assert.False(t, opts.SkipMigrate)
	assert.False(t, opts.Debug)

	// Ours: bounds on what clients can hold.
	// No limit on the calls of a connection, as upstream: unread streams
	// are bounded by what they hold (--max-waiting-streams).
	assert.Equal(t, serve.ServerFlags{StopGrace: registry.DefaultStopGrace, MaxConcurrentStreams: 0, MaxWaitingStreams: registry.DefaultMaxWaitingStreams,
		KeepaliveTime: registry.DefaultKeepaliveTime, IdleTimeout: registry.DefaultIdleTimeout, StallTimeout: registry.DefaultStallTimeout}, opts.Server)
	assert.Equal(t, registry.Limits{MaxConcurrentStreams: -1, MaxWaitingStreams: 128, KeepaliveTime: time.Minute, IdleTimeout: 15 * time.Minute, StallTimeout: 30 * time.Second}, opts.Server.Limits())

	opts, err = cmdtest.Parse(t, serve.NewCmd, "-d", "x.db", "-p", "6000", "-t", "/tmp/tl", "--timeout-seconds", "30", "--skip-migrate", "--debug",
		"--stop-grace", "2s", "--max-concurrent-streams", "8", "--max-waiting-streams", "0", "--keepalive-time", "0", "--idle-timeout", "1h", "--stall-timeout", "0")
	require.NoError(t, err)
	assert.Equal(t, serve.Options{Database: "x.db", Port: "6000", TerminationLog: "/tmp/tl", TimeoutSeconds: "30", SkipMigrate: true, Debug: true,
		Server: serve.ServerFlags{StopGrace: 2 * time.Second, MaxConcurrentStreams: 8, IdleTimeout: time.Hour}}, *opts)
	// 0 on the command line turns a limit off (negative in the library,
	// where 0 is the default).
	assert.Equal(t, registry.Limits{MaxConcurrentStreams: 8, MaxWaitingStreams: -1, KeepaliveTime: -1, IdleTimeout: time.Hour, StallTimeout: -1}, opts.Server.Limits())
	assert.Equal(t, 2*time.Second, opts.Server.Grace())
}

func TestParseTimeout(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"infinite": 0, "1": time.Second, "600": 10 * time.Minute} {
		got, err := serve.ParseTimeout(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"0", "-1", "1.5", "10s", "forever", ""} {
		_, err := serve.ParseTimeout(in)
		assert.Error(t, err, in)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-p", "http"}, `--port "http": want a TCP port number`},
		{[]string{"-p", "70000"}, `--port "70000"`},
		{[]string{"--timeout-seconds", "10s"}, `--timeout-seconds "10s": want a positive whole number of seconds, or infinite`},
		{[]string{"-d", ""}, "--database is empty"},
		{[]string{"extra"}, "opm registry serve takes no arguments, got \"extra\"\nUsage: opm registry serve"},
	} {
		r := cmdtest.Run(t, append([]string{"registry", "serve"}, tc.args...)...)
		assert.Equal(t, exit.UpstreamUsage, r.Code, "%v: %s", tc.args, r.ErrOut)
		assert.Contains(t, r.ErrOut, tc.want, tc.args)
	}
}

// TestRunServesUntilCancelled serves an index through Run: the logger goes
// to the error stream, cancelling the context stops it without an error.
func TestRunServesUntilCancelled(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "index.db")
	r := cmdtest.Run(t, "index", "add", "--database", db, "--bundles", "../../../../testdata/bundles/valid")
	require.Equal(t, 0, r.Code, r.ErrOut)

	io, _, _, errOut := iostreams.Test()
	f := factory.NewWithEnv(io, map[string]string{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve.Run(ctx, f, &serve.Options{Database: db, Port: "0", TimeoutSeconds: "infinite", Debug: true,
			OnServing: func(a net.Addr) { served <- a }})
	}()
	var addr net.Addr
	select {
	case addr = <-served:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	_, port, _ := net.SplitHostPort(addr.String())
	require.NoError(t, registry.Probe(ctx, registry.ProbeOptions{Addr: "127.0.0.1:" + port, Service: "api.Registry"}))
	cancel()
	require.NoError(t, <-done)

	log := errOut.String()
	lines := strings.Split(strings.TrimSpace(log), "\n")
	assert.Contains(t, lines[0], `msg="serving registry"`)
	assert.Contains(t, log, `msg=call method=/grpc.health.v1.Health/Check`, "--debug logs calls")
	assert.Contains(t, lines[len(lines)-1], `msg="stopped serving registry"`)
}
