package serve_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	registryserve "github.com/opmkit/opm/internal/cmd/registry/serve"
	"github.com/opmkit/opm/internal/cmd/serve"
	"github.com/opmkit/opm/internal/iostreams"
	"github.com/opmkit/opm/internal/registry/api"
)

// bigCatalog writes a catalog of one package with n bundles, each with a
// 1 KiB property: a ListBundles answer far larger than a client's window.
func bigCatalog(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"schema":"olm.package","name":"p","defaultChannel":"stable"}` + "\n")
	b.WriteString(`{"schema":"olm.channel","name":"stable","package":"p","entries":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		if i == 0 {
			fmt.Fprintf(&b, `{"name":"p.v0.0.%d"}`, i)
		} else {
			fmt.Fprintf(&b, `{"name":"p.v0.0.%d","replaces":"p.v0.0.%d"}`, i, i-1)
		}
	}
	b.WriteString("]}\n")
	pad := strings.Repeat("x", 1024)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"schema":"olm.bundle","name":"p.v0.0.%d","package":"p","image":"example.com/p:%d","properties":[{"type":"olm.package","value":{"packageName":"p","version":"0.0.%d"}},{"type":"example.com/pad","value":%q}]}`+"\n", i, i, i, pad)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p", "catalog.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestStopEndsDespiteStalledClient: opm serve, told to stop while a client
// holds a ListBundles stream unread, exits 0 within its grace and removes
// the database it converted into a temporary directory. With --stop-grace
// 0 (no time limit) it used to wait for that client for as long as the
// client liked; it now cancels what waits only for clients that read
// nothing once nothing else is left.
func TestStopEndsDespiteStalledClient(t *testing.T) {
	dir := bigCatalog(t, 2000)
	for _, grace := range []time.Duration{300 * time.Millisecond, 0} {
		t.Run("grace="+grace.String(), func(t *testing.T) { stopWithStalledClient(t, dir, grace) })
	}
}

func stopWithStalledClient(t *testing.T, dir string, grace time.Duration) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan net.Addr, 1)
	s, _, _, errOut := iostreams.Test()
	f := factory.NewWithEnv(s, map[string]string{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	opts := &serve.Options{Dir: dir, Listener: lis, OnServing: func(a net.Addr) { ready <- a },
		Server: registryserve.ServerFlags{StopGrace: grace}}
	go func() { done <- serve.Run(ctx, f, opts) }()
	var addr net.Addr
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	conn, err := grpc.NewClient(addr.String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := api.NewRegistryClient(conn).ListBundles(context.Background(), &api.ListBundlesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Header(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) == 0 {
		t.Fatal("no temporary database while serving: the test does not test the cleanup")
	}
	cancel() // SIGTERM
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v, want nil (exit 0)", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("opm serve still running 2 minutes after the stop, held by a stalled client")
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("temporary files left after the stop: %v", entries)
	}
	// Events, not time: the stop cancelled the stalled call; the stall
	// timeout (30 s) did not end it first.
	if !strings.Contains(errOut.String(), "were cancelled") || strings.Contains(errOut.String(), "for the stall timeout") {
		t.Errorf("log does not say the stop cancelled the stalled call:\n%s", errOut.String())
	}
}

// TestServeRefusesBadPortBeforeConverting: a port that cannot be served is
// refused at once (a usage error), before the catalog is read.
func TestServeRefusesBadPortBeforeConverting(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "p")
	if err := os.MkdirAll(missing, 0o755); err != nil {
		t.Fatal(err)
	}
	// Not a catalog at all: reading it would fail differently.
	if err := os.WriteFile(filepath.Join(missing, "catalog.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := cmdtest.New(t)
	r := o.Run("serve", filepath.Dir(missing), "-p", "99999", "-t", "")
	if r.Code != exit.Usage || !strings.Contains(r.ErrOut, `--port "99999"`) {
		t.Errorf("opm serve -p 99999: exit %d: %s", r.Code, r.ErrOut)
	}
}

// TestSignalRemovesTemporaryDatabase stops a real opm serve process (no
// cache: it converts the catalog into a temporary directory) with SIGTERM
// or SIGINT, once while it serves and once as soon as that directory
// appears (most likely while converting): either way it exits by itself and
// leaves nothing in TMPDIR.
func TestSignalRemovesTemporaryDatabase(t *testing.T) {
	t.Parallel()
	dir := bigCatalog(t, 2000)
	for _, tc := range []struct {
		name    string
		sig     syscall.Signal
		serving bool
	}{
		{"SIGTERM serving", syscall.SIGTERM, true},
		{"SIGINT serving", syscall.SIGINT, true},
		{"SIGTERM converting", syscall.SIGTERM, false},
		{"SIGINT converting", syscall.SIGINT, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := cmdtest.New(t)
			o.Dir = t.TempDir()
			tmp := t.TempDir()
			o.ProcEnv["TMPDIR"] = tmp
			port := freePort(t)
			cmd := o.Command("serve", dir, "-p", port, "-t", "")
			var errOut strings.Builder
			cmd.Stderr = &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			ready := func() bool {
				if !tc.serving {
					entries, _ := os.ReadDir(tmp)
					return len(entries) > 0
				}
				return healthy("127.0.0.1:" + port)
			}
			deadline := time.Now().Add(2 * time.Minute)
			for !ready() {
				select {
				case err := <-exited:
					t.Fatalf("opm serve exited (%v) before the signal:\n%s", err, errOut.String())
				case <-time.After(5 * time.Millisecond):
				}
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("opm serve not ready after 2 minutes:\n%s", errOut.String())
				}
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				// Stopped while serving, opm exits 0 as a pod's server
				// should; stopped earlier, with the signal's status.
				var ee *exec.ExitError
				if err != nil && !errors.As(err, &ee) {
					t.Fatalf("opm serve: %v", err)
				}
				if tc.serving && err != nil {
					t.Errorf("opm serve stopped while serving: %v, want exit 0\n%s", err, errOut.String())
				}
			case <-time.After(time.Minute):
				_ = cmd.Process.Kill()
				t.Fatalf("opm serve still running a minute after %v", tc.sig)
			}
			if left, err := os.ReadDir(tmp); err != nil || len(left) > 0 {
				t.Errorf("opm serve left temporary files after %v: %v %v\n%s", tc.sig, left, err, errOut.String())
			}
		})
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// healthy reports whether the gRPC health service at addr answers SERVING.
func healthy(addr string) bool {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return false
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	return err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING
}
