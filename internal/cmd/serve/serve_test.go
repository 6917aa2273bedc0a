package serve_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
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
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/serve"
	"github.com/opmkit/opm/internal/iostreams"
	"github.com/opmkit/opm/internal/registry/replay"
	"github.com/opmkit/opm/internal/selfexec"
	"github.com/opmkit/opm/internal/shareddata"
)

func sharedDir(t *testing.T) string {
	t.Helper()
	shareddata.Require(t, "reference", "grpc", "README.md")
	return shareddata.Root()
}

// catalogDir lays out an upstream render as a catalog directory.
func catalogDir(t *testing.T, render string) string {
	t.Helper()
	data, err := os.ReadFile(render)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pkg := strings.SplitN(filepath.Base(render), ".", 2)[0]
	if err := os.MkdirAll(filepath.Join(dir, pkg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, pkg, "catalog.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// start runs opm serve on a free loopback port until the test ends.
func start(t *testing.T, opts serve.Options) *grpc.ClientConn {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan net.Addr, 1)
	opts.Listener, opts.OnServing = lis, func(a net.Addr) { ready <- a }
	opts.TerminationLog = ""
	s, _, _, _ := iostreams.Test()
	f := factory.NewWithEnv(s, map[string]string{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve.Run(ctx, f, &opts) }()
	select {
	case a := <-ready:
		conn, err := grpc.NewClient(a.String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			conn.Close()
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
		return conn
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v", err)
	case <-time.After(2 * time.Minute):
		cancel()
		t.Fatal("not serving after 2 minutes")
	}
	return nil
}

// TestServeAnswersAsUpstreamServe: each fixture catalog of
// testdata/serve-fbc (cross-channel replaces and skips, skipRanges,
// deprecations, several packages, CSVs as manifests, as olm.csv.metadata
// and none), served by opm serve, answers every query recorded from
// upstream's opm serve (hack/record-serve.sh) exactly: every field of
// every message, streams as multisets, errors' codes and words.
func TestServeAnswersAsUpstreamServe(t *testing.T) {
	recs, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "serve-fbc", "*.grpc.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 {
		t.Fatal("no recordings under testdata/serve-fbc")
	}
	for _, file := range recs {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".grpc.json"), func(t *testing.T) {
			t.Parallel()
			conn := start(t, serve.Options{Dir: strings.TrimSuffix(file, ".grpc.json")})
			replay.Check(t, conn, replay.Load(t, file))
		})
	}
}

// TestServeAnswersAsRegistryServe: upstream's render of each reference
// database, served by opm serve, lists its packages and bundles and
// answers each package as opm registry serve (and upstream) answers them
// on the database, with the catalog's requirement properties as upstream's
// opm serve adds them. (The other methods answer as upstream's opm serve,
// which differs from its registry serve: TestServeAnswersAsUpstreamServe.)
func TestServeAnswersAsRegistryServe(t *testing.T) {
	shared := sharedDir(t)
	for _, file := range replay.Files(t, shared) {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			t.Parallel()
			rec := replay.Load(t, file)
			queries := rec.Queries[:0]
			for _, q := range rec.Queries {
				switch q.Method {
				case "grpc.health.v1.Health/Check", "api.Registry/ListPackages", "api.Registry/ListBundles":
				case "api.Registry/GetPackage":
					if !q.OK {
						continue // upstream's opm serve quotes the name
					}
				default:
					continue
				}
				queries = append(queries, q)
			}
			rec.Queries = queries
			render := filepath.Join(shared, "reference", "index", strings.TrimSuffix(rec.DB, ".db")+".fbc.json")
			conn := start(t, serve.Options{Dir: catalogDir(t, render)})
			// Upstream's opm serve answers the render's requirements
			// among the properties too (OLM stamps them on the CSV).
			replay.CheckWith(t, conn, rec, replay.Options{UnorderedLists: true, MissingPlurals: true, CatalogProperties: true})
		})
	}
}

// TestServeCache: --cache-only builds the cache; serving with it uses it;
// a changed catalog fails with the enforced integrity check, and is
// rebuilt when it is not enforced.
func TestServeCache(t *testing.T) {
	t.Parallel()
	shared := sharedDir(t)
	dir := catalogDir(t, filepath.Join(shared, "reference", "index", "etcd.replaces.fbc.json"))
	cache := filepath.Join(t.TempDir(), "cache")
	o := cmdtest.New(t)
	r := o.Run("serve", dir, "--cache-dir", cache, "--cache-only")
	if r.Code != 0 || !strings.Contains(r.ErrOut, "how=converted") {
		t.Fatalf("--cache-only: exit %d: %s", r.Code, r.ErrOut)
	}
	if r := o.Run("serve", dir, "--cache-dir", cache, "--cache-only"); r.Code != 0 || !strings.Contains(r.ErrOut, `how="cache used"`) {
		t.Fatalf("second --cache-only: exit %d: %s", r.Code, r.ErrOut)
	}
	conn := start(t, serve.Options{Dir: dir, CacheDir: cache})
	if _, err := replay.Call(t, conn, "api.Registry/GetPackage", []byte(`{"name":"etcd"}`)); err != nil {
		t.Fatalf("served from the cache: %v", err)
	}

	if err := os.WriteFile(filepath.Join(dir, "etcd", "extra.json"), []byte(`{"schema":"olm.package","name":"other","defaultChannel":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tlog := filepath.Join(t.TempDir(), "termination-log")
	r = o.Run("serve", dir, "--cache-dir", cache, "-p", "0", "--termination-log", tlog)
	if r.Code != 1 || !strings.Contains(r.ErrOut, "does not match the catalog") || !strings.Contains(r.ErrOut, "--cache-only") {
		t.Fatalf("stale cache: exit %d: %s", r.Code, r.ErrOut)
	}
	if data, err := os.ReadFile(tlog); err != nil || !strings.Contains(string(data), "does not match") {
		t.Errorf("termination log: %q, %v", data, err)
	}
	// Not enforced: rebuilt (the new package has no channel, so the
	// catalog is refused with what to fix).
	r = o.Run("serve", dir, "--cache-dir", cache, "--cache-enforce-integrity=false", "--cache-only")
	if r.Code != 1 || !strings.Contains(r.ErrOut, "other") {
		t.Fatalf("invalid catalog: exit %d: %s", r.Code, r.ErrOut)
	}
	if err := os.Remove(filepath.Join(dir, "etcd", "extra.json")); err != nil {
		t.Fatal(err)
	}
	if r := o.Run("serve", dir, "--cache-dir", cache, "--cache-only"); r.Code != 0 {
		t.Fatalf("restored catalog: exit %d: %s", r.Code, r.ErrOut)
	}
	if r := o.Run("serve", dir, "--cache-only"); r.Code != 2 || !strings.Contains(r.ErrOut, "--cache-dir") {
		t.Errorf("--cache-only without --cache-dir: exit %d: %s", r.Code, r.ErrOut)
	}
}

func TestServeFlags(t *testing.T) {
	opts, err := cmdtest.Parse(t, serve.NewCmd, "/configs", "-p", "50052", "--cache-dir", "/tmp/cache", "--cache-only", "-t", "/tmp/tl", "--debug", "--cache-enforce-integrity=false")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Dir != "/configs" || opts.Port != "50052" || opts.CacheDir != "/tmp/cache" || !opts.CacheOnly || opts.TerminationLog != "/tmp/tl" || !opts.Debug || !opts.EnforceSet || opts.CacheEnforceIntegrity {
		t.Errorf("parsed %+v", opts)
	}
}

// roHelperEnv makes the test binary serve a catalog with its cache (the
// value: DIR, a tab, CACHE-DIR) as an image's command does, report that it
// reached SERVING, and stop: TestServeReadOnlyCacheAsOtherUser runs it as
// another user.
const roHelperEnv = "OPM_SERVE_READONLY_HELPER"

func TestMain(m *testing.M) {
	if v := os.Getenv(roHelperEnv); v != "" {
		dir, cache, _ := strings.Cut(v, "\t")
		os.Exit(serveOnce(dir, cache, os.Stdout))
	}
	cmdtest.Main(m)
}

// serveOnce serves dir from cache with the integrity enforced, writes the
// log and "SERVING" once it answers to w, and stops.
func serveOnce(dir, cache string, w io.Writer) int {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(w, err)
		return 1
	}
	s, _, _, errOut := iostreams.Test()
	f := factory.NewWithEnv(s, map[string]string{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	serving := false
	opts := &serve.Options{Dir: dir, CacheDir: cache, CacheEnforceIntegrity: true, EnforceSet: true, Listener: lis,
		OnServing: func(a net.Addr) {
			defer cancel()
			conn, err := grpc.NewClient(a.String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				return
			}
			defer conn.Close()
			resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
			serving = err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING
		}}
	err = serve.Run(ctx, f, opts)
	fmt.Fprint(w, errOut.String())
	if err != nil {
		fmt.Fprintln(w, err)
		return 1
	}
	if serving {
		fmt.Fprintln(w, "SERVING")
	}
	return 0
}

// TestServeReadOnlyCacheAsOtherUser serves a catalog and its cache (built
// with --cache-only, as opm does when it writes an fbc index image) from
// directories nobody may write, as a user who owns neither (uid 65534 when
// the test runs as root, else the test's own user): as a pod with a
// read-only root file system and an arbitrary UID runs an fbc image. The
// cache is used, nothing is written beside it.
func TestServeReadOnlyCacheAsOtherUser(t *testing.T) {
	t.Parallel()
	shared := sharedDir(t)
	data, err := os.ReadFile(filepath.Join(shared, "reference", "index", "etcd.replaces.fbc.json"))
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir, cache := filepath.Join(base, "configs"), filepath.Join(base, "cache")
	if err := os.MkdirAll(filepath.Join(dir, "etcd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "etcd", "catalog.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := cmdtest.New(t).Run("serve", dir, "--cache-dir", cache, "--cache-only"); r.Code != 0 {
		t.Fatalf("--cache-only: exit %d: %s", r.Code, r.ErrOut)
	}
	var readOnly []string
	for _, d := range []string{dir, cache} {
		err := filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err == nil {
				readOnly = append(readOnly, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := len(readOnly) - 1; i >= 0; i-- { // files before their directories
		p := readOnly[i]
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o444)
		if st.IsDir() {
			mode = 0o555
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, p := range readOnly {
			_ = os.Chmod(p, 0o755)
		}
	})
	before := listDir(t, cache)

	var out []byte
	if os.Geteuid() != 0 {
		var b strings.Builder
		code := serveOnce(dir, cache, &b)
		out = []byte(b.String())
		if code != 0 {
			t.Fatalf("serve read-only: exit %d\n%s", code, out)
		}
	} else {
		bin, err := selfexec.Copy(base, "serve.test")
		if err != nil {
			t.Fatal(err)
		}
		out, err = selfexec.CombinedOutput(func() *exec.Cmd {
			cmd := exec.Command(bin)
			cmd.Env = []string{roHelperEnv + "=" + dir + "\t" + cache, "PATH=/usr/bin:/bin", "HOME=/nonexistent"}
			cmd.Dir = "/"
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			return cmd
		})
		if err != nil {
			t.Fatalf("serve read-only as uid 65534: %v\n%s", err, out)
		}
	}
	if !strings.Contains(string(out), `how="cache used"`) || !strings.Contains(string(out), "SERVING") {
		t.Fatalf("want the cache used and SERVING:\n%s", out)
	}
	if after := listDir(t, cache); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Errorf("the cache directory changed: %v -> %v", before, after)
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// startHTTP runs opm serve with HTTP on a free loopback port (and gRPC,
// unless opts.NoGRPC) until the test ends; it returns the HTTP base URL.
func startHTTP(t *testing.T, opts serve.Options) string {
	t.Helper()
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan net.Addr, 2)
	opts.HTTPListener, opts.OnHTTPServing = hl, func(a net.Addr) { ready <- a }
	if !opts.NoGRPC {
		gl, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		opts.Listener, opts.OnServing = gl, func(a net.Addr) { ready <- a }
	}
	opts.TerminationLog = ""
	s, _, _, _ := iostreams.Test()
	f := factory.NewWithEnv(s, map[string]string{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve.Run(ctx, f, &opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	want := 2
	if opts.NoGRPC {
		want = 1
	}
	for range want {
		select {
		case <-ready:
		case err := <-done:
			t.Fatalf("serve: %v", err)
		case <-time.After(2 * time.Minute):
			t.Fatal("not serving after 2 minutes")
		}
	}
	return "http://" + hl.Addr().String()
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestServeHTTP: --http beside gRPC answers catalogd's API with the
// catalog that gRPC serves; --grpc=false serves HTTP alone.
func TestServeHTTP(t *testing.T) {
	t.Parallel()
	shared := sharedDir(t)
	dir := catalogDir(t, filepath.Join(shared, "reference", "index", "etcd.replaces.fbc.json"))
	base := startHTTP(t, serve.Options{Dir: dir, HTTPMetas: true, HTTPCatalogName: "etcd-catalog"})
	code, body := httpGet(t, base+"/catalogs/etcd-catalog/api/v1/metas?schema=olm.package")
	if code != 200 || !strings.Contains(body, `"name":"etcd"`) || strings.Count(body, "\n") != 1 {
		t.Fatalf("metas: %d %q", code, body)
	}
	if code, _ := httpGet(t, base+"/catalogs/other/api/v1/all"); code != 404 {
		t.Errorf("another catalog name: %d, want 404", code)
	}

	base = startHTTP(t, serve.Options{Dir: dir, NoGRPC: true})
	code, body = httpGet(t, base+"/api/v1/all")
	if code != 200 || !strings.Contains(body, `"schema":"olm.bundle"`) {
		t.Fatalf("all: %d %q", code, body)
	}
	if code, _ := httpGet(t, base+"/api/v1/metas"); code != 404 {
		t.Errorf("metas without --http-metas: %d, want 404", code)
	}
}

func TestServeHTTPFlags(t *testing.T) {
	t.Parallel()
	opts, err := cmdtest.Parse(t, serve.NewCmd, "/configs", "--http", ":8080", "--http-metas", "--grpc=false", "--http-catalog-name", "c")
	if err != nil {
		t.Fatal(err)
	}
	if opts.HTTP != ":8080" || !opts.HTTPMetas || !opts.NoGRPC || opts.HTTPCatalogName != "c" {
		t.Errorf("parsed %+v", opts)
	}
	o := cmdtest.New(t)
	dir := t.TempDir()
	if r := o.Run("serve", dir, "--grpc=false"); r.Code != 2 || !strings.Contains(r.ErrOut, "--http") {
		t.Errorf("--grpc=false alone: exit %d: %s", r.Code, r.ErrOut)
	}
	if r := o.Run("serve", dir, "--http", "127.0.0.1:0", "--http-catalog-name", "Bad_Name"); r.Code != 2 || !strings.Contains(r.ErrOut, "RFC 1123") {
		t.Errorf("bad catalog name: exit %d: %s", r.Code, r.ErrOut)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"schema":`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := o.Run("serve", dir, "--http", "127.0.0.1:0", "--grpc=false", "-t", ""); r.Code != 1 || !strings.Contains(r.ErrOut, "bad.json") {
		t.Errorf("bad catalog: exit %d: %s", r.Code, r.ErrOut)
	}
}
