package registry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/opmkit/opm/internal/registry/api"
	"github.com/opmkit/opm/internal/selfexec"
)

// helperEnv makes the test binary serve a read-only database instead of
// running tests (TestServesReadOnlyDirectoryAsOtherUser runs it as another
// user).
const helperEnv = "OPM_REGISTRY_READONLY_HELPER"

func TestMain(m *testing.M) {
	if db := os.Getenv(helperEnv); db != "" {
		n, err := serveAndListBundles(db)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("bundles=%d\n", n)
		os.Exit(0)
	}
	if db := os.Getenv(serveHelperEnv); db != "" {
		os.Exit(serveHelper(db))
	}
	code := m.Run()
	cleanupBench()
	os.Exit(code)
}

// serveAndListBundles serves db on loopback, lists its bundles through a
// gRPC client, and stops.
func serveAndListBundles(db string) (int, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n, callErr := 0, error(nil)
	err = Serve(ctx, Options{DB: db, Listener: lis, Logger: discardLogger, OnServing: func(a net.Addr) {
		defer cancel()
		conn, err := newClient(a.String())
		if err != nil {
			callErr = err
			return
		}
		defer conn.Close()
		stream, err := api.NewRegistryClient(conn).ListBundles(ctx, &api.ListBundlesRequest{})
		if err != nil {
			callErr = err
			return
		}
		for {
			_, err := stream.Recv()
			if err == io.EOF {
				return
			}
			if err != nil {
				callErr = err
				return
			}
			n++
		}
	}})
	if err != nil {
		return 0, err
	}
	return n, callErr
}

func listDir(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// TestServesReadOnlyDirectoryAsOtherUser serves a database in a directory
// nobody may write (mode 0555, file 0444), as a user who owns neither (uid
// 65534 when the test runs as root, else the test's own user, for whom the
// modes bind): serving works and leaves nothing beside the database.
func TestServesReadOnlyDirectoryAsOtherUser(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	roDir := filepath.Join(base, "database")
	if err := os.Mkdir(roDir, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(roDir, "index.db")
	copyFile(t, refDB(t, "skupper-operator.replaces.db"), db)
	if err := os.Chmod(db, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(roDir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(roDir, 0o755) })
	before := listDir(t, roDir)

	if os.Geteuid() != 0 {
		n, err := serveAndListBundles(db)
		if err != nil || n != 75 {
			t.Fatalf("serve read-only: %d bundles, %v; want 75", n, err)
		}
	} else {
		bin, err := selfexec.Copy(base, "registry.test")
		if err != nil {
			t.Fatal(err)
		}
		out, err := selfexec.CombinedOutput(func() *exec.Cmd {
			cmd := exec.Command(bin)
			cmd.Env = []string{helperEnv + "=" + db, "PATH=/usr/bin:/bin", "HOME=/nonexistent"}
			cmd.Dir = "/"
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			return cmd
		})
		if err != nil || strings.TrimSpace(string(out)) != "bundles=75" {
			t.Fatalf("serve read-only as uid 65534: %v\n%s", err, out)
		}
	}
	if after := listDir(t, roDir); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Errorf("files beside the database changed: %v -> %v", before, after)
	}
}

// serveHelper serves db until SIGTERM or SIGINT, printing the address on
// stdout and the log on stderr, as a CatalogSource pod's process would.
func serveHelper(db string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if addr := os.Getenv("OPM_REGISTRY_SERVE_PPROF"); addr != "" {
		// Profiling the helper while a benchmark drives it (debugging aid).
		go func() { _ = http.ListenAndServe(addr, nil) }() //nolint:gosec // loopback, test only
	}
	err := Serve(ctx, Options{DB: db, Addr: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
		OnServing: func(a net.Addr) { fmt.Println(a.String()) }})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
