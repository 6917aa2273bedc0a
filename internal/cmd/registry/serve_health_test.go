package registry_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/registry"
)

const tags = "containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub"

// buildOpm builds cmd/opm into a temporary directory: the multi-call
// dispatch and the signal handling live in main, which only the real
// binary runs.
func buildOpm(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "opm")
	cmd := exec.Command("go", "build", "-tags", tags, "-o", bin, "../../../cmd/opm")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// newIndex writes an index database of the valid test bundle.
func newIndex(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "index.db")
	r := cmdtest.Run(t, "index", "add", "--database", db, "--bundles", validBundle)
	require.Equal(t, 0, r.Code, r.ErrOut)
	return db
}

// serveInProcess runs registry.Serve on a free loopback port until the
// test ends and returns its address.
func serveInProcess(t *testing.T, db string) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- registry.Serve(ctx, registry.Options{DB: db, Listener: lis, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnServing: func(net.Addr) { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v", err)
	}
	t.Cleanup(func() { cancel(); <-done })
	return lis.Addr().String()
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := lis.Addr().String()
	require.NoError(t, lis.Close())
	return addr
}

func run(bin string, args ...string) (code int, stdout, stderr string) {
	cmd := exec.Command(bin, args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), errOut.String()
	}
	if err != nil {
		return -1, out.String(), err.Error()
	}
	return 0, out.String(), errOut.String()
}

// TestBinary runs the built opm: as grpc_health_probe through a link, as
// OLM's pod probes do, and as `registry serve` stopped by SIGTERM.
func TestBinary(t *testing.T) {
	bin := buildOpm(t)
	probe := filepath.Join(t.TempDir(), "grpc_health_probe")
	require.NoError(t, os.Symlink(bin, probe))
	db := newIndex(t)
	addr := serveInProcess(t, db)
	_, port, _ := net.SplitHostPort(addr)
	closed := closedPort(t)

	t.Run("probe", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			args   []string
			code   int
			stdout string
			stderr string
		}{
			{"single dash, as OLM", []string{"-addr=:" + port}, 0, "status: SERVING\n", ""},
			{"double dash", []string{"--addr", addr, "--service", "api.Registry", "--connect-timeout", "5s", "--rpc-timeout=5s"}, 0, "status: SERVING\n", ""},
			{"single dash with values apart", []string{"-addr", addr, "-service", "", "-connect-timeout", "2s", "-rpc-timeout", "2s"}, 0, "status: SERVING\n", ""},
			{"closed port", []string{"-addr=" + closed}, 2, "", "error: cannot connect to " + closed + " within 1s"},
			// Every name is answered, as upstream does: OLM's client asks for "Registry".
			{"OLM client's service name", []string{"-addr=" + addr, "-service=Registry"}, 0, "status: SERVING\n", ""},
			{"any service name", []string{"-addr=" + addr, "-service=nope"}, 0, "status: SERVING\n", ""},
			{"no address", nil, 1, "", "-addr is required"},
			{"unknown flag", []string{"-bogus"}, 1, "", "flag provided but not defined: -bogus"},
			{"bad duration", []string{"-addr=" + addr, "-rpc-timeout=soon"}, 1, "", "invalid value \"soon\""},
			{"missing TLS file", []string{"-addr=" + addr, "-tls", "-tls-ca-cert=/nonexistent/ca.pem"}, 1, "", "/nonexistent/ca.pem"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				code, out, errOut := run(probe, tc.args...)
				assert.Equal(t, tc.code, code, "stderr: %s", errOut)
				assert.Equal(t, tc.stdout, out)
				if tc.stderr == "" {
					assert.Empty(t, errOut)
				} else {
					assert.Contains(t, errOut, tc.stderr)
				}
			})
		}
	})

	t.Run("opm is not the probe under its own name", func(t *testing.T) {
		code, _, errOut := run(bin, "-addr=:"+port)
		assert.Equal(t, exit.Usage, code)
		assert.Contains(t, errOut, "unknown shorthand flag")
	})

	t.Run("serve stops on SIGTERM with status 0", func(t *testing.T) {
		free := closedPort(t)
		_, port, _ := net.SplitHostPort(free)
		cmd := exec.Command(bin, "registry", "serve", "-d", db, "-p", port, "-t", "")
		stderr, err := cmd.StderrPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		lines := bufio.NewScanner(stderr)
		require.True(t, lines.Scan(), "no start line")
		start := lines.Text()
		assert.Contains(t, start, `msg="serving registry"`)
		assert.Contains(t, start, "database="+db)
		assert.Contains(t, start, "address=[::]:"+port)
		assert.Contains(t, start, "packages=1 bundles=1")

		code, out, errOut := run(probe, "-addr=127.0.0.1:"+port)
		assert.Equal(t, 0, code, errOut)
		assert.Equal(t, "status: SERVING\n", out)

		require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		require.True(t, lines.Scan(), "no stop line")
		assert.Contains(t, lines.Text(), `msg="stopped serving registry"`)
		assert.Contains(t, lines.Text(), "reason=signal")
		for lines.Scan() {
			t.Errorf("unexpected output after stopping: %s", lines.Text())
		}
		assert.NoError(t, cmd.Wait(), "exit status after SIGTERM")
	})

	t.Run("serve of a missing database fails and writes the termination log", func(t *testing.T) {
		dir := t.TempDir()
		tlog := filepath.Join(dir, "termination-log")
		code, _, errOut := run(bin, "registry", "serve", "-d", filepath.Join(dir, "none.db"), "-p", "0", "-t", tlog)
		assert.Equal(t, 1, code)
		assert.Contains(t, errOut, "none.db")
		msg, err := os.ReadFile(tlog)
		require.NoError(t, err)
		assert.Contains(t, string(msg), "none.db")
	})

	t.Run("serve --timeout-seconds stops by itself", func(t *testing.T) {
		start := time.Now()
		code, _, errOut := run(bin, "registry", "serve", "-d", db, "-p", "0", "-t", "", "--timeout-seconds", "1")
		assert.Equal(t, 0, code, errOut)
		assert.Contains(t, errOut, "reason=timeout")
		assert.GreaterOrEqual(t, time.Since(start), time.Second)
	})
}

// TestHealthCommand runs `opm registry health` in process.
func TestHealthCommand(t *testing.T) {
	t.Parallel()
	addr := serveInProcess(t, newIndex(t))
	closed := closedPort(t)
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"serving", []string{"--addr", addr}, 0, addr + " is serving\n"},
		{"serving service", []string{"--addr", addr, "--service", "api.Registry"}, 0, `service "api.Registry" at ` + addr + " is serving\n"},
		{"closed port", []string{"--addr", closed, "--connect-timeout", "300ms"}, 2, "error: cannot connect to " + closed + " within 300ms"},
		{"OLM client's service name", []string{"--addr", addr, "--service", "Registry"}, 0, `service "Registry" at ` + addr + " is serving\n"},
		// Usage errors get the status of every command under opm registry.
		{"no address", nil, exit.UpstreamUsage, "error: --addr is required"},
		{"single dash is not opm's", []string{"-addr=" + addr}, exit.UpstreamUsage, "unknown shorthand flag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := cmdtest.Run(t, append([]string{"registry", "health"}, tc.args...)...)
			assert.Equal(t, tc.code, r.Code, r.ErrOut)
			assert.Empty(t, r.Out)
			if tc.code == 0 {
				assert.Equal(t, tc.stderr, r.ErrOut)
			} else {
				assert.Contains(t, r.ErrOut, tc.stderr)
			}
		})
	}
}
