// Package serving runs index images end to end with real parts: opm's
// serving image built from a static opm, a real registry, bundle images of
// real bundles, an index image written by opm index add, and containers
// started by podman serving it, as a CatalogSource pod and as
// operator-sdk run bundle's pod do.
package serving

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/registry/api"
	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/internal/servingimage"

	"github.com/opmkit/opm/internal/shareddata"
)

// buildTags are the Makefile's TAGS; staticTags add the release's (no glibc
// NSS, no dlopen), as hack/make-serving-image builds the image's opm.
const (
	buildTags  = "containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub"
	staticTags = buildTags + " osusergo netgo sqlite_omit_load_extension"
)

var repoRoot = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}()

// need returns the path of tool, skipping the test (failing under CI) when
// it is not installed.
func need(t *testing.T, tool, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed, and CI=true requires this test to run (apt-get install -y %s)", tool, pkg)
		}
		t.Skipf("skipping: %s is not installed (apt-get install -y %s)", tool, pkg)
	}
	return p
}

// corpusDir is the etcd bundles of ../shared beside the checkout; absent,
// the test skips saying why (and fails under CI=true).
func corpusDir(t *testing.T) string {
	t.Helper()
	return filepath.Dir(shareddata.Require(t, "corpus", "real", "etcd", "0.9.4"))
}

// sourceHash identifies the sources a build of cmd/opm depends on: every
// non-test Go file, go.mod and go.sum.
func sourceHash(t *testing.T) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != repoRoot && (strings.HasPrefix(name, ".") || name == "testdata" || name == "build" || name == "dist" || name == "bin" || name == "docs") {
				return filepath.SkipDir
			}
			return nil
		}
		source := strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go")
		if !source && name != "go.mod" && name != "go.sum" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, p)
		fmt.Fprintf(h, "%s %d\n", rel, len(data))
		h.Write(data)
		return nil
	})
	require.NoError(t, err)
	fmt.Fprintf(h, "tags %s %s/%s\n", staticTags, runtime.GOOS, runtime.GOARCH)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// staticOpm builds a statically linked opm as the serving image's is
// built, and keeps it under the temporary directory keyed by the sources'
// hash: a cold static build takes minutes, an unchanged tree none.
func staticOpm(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(os.TempDir(), "opm-serving-e2e", sourceHash(t))
	bin := filepath.Join(dir, "opm")
	if _, err := os.Stat(bin); err == nil {
		now := time.Now()
		_ = os.Chtimes(bin, now, now) // used: keep it past pruneCache
		t.Logf("static opm from the cache: %s", bin)
		return bin
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	tmp, err := os.CreateTemp(dir, "opm-*")
	require.NoError(t, err)
	require.NoError(t, tmp.Close())
	defer func() { _ = os.Remove(tmp.Name()) }()
	start := time.Now()
	cmd := exec.Command("go", "build", "-tags", staticTags, "-trimpath",
		"-ldflags", "-s -w -X github.com/opmkit/opm/internal/version.Version=e2e -extldflags -static",
		"-o", tmp.Name(), "./cmd/opm")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "static build of opm: %s", out)
	require.NoError(t, os.Rename(tmp.Name(), bin))
	t.Logf("built static opm in %s: %s", time.Since(start).Round(time.Second), bin)
	pruneCache(filepath.Dir(dir), dir)
	return bin
}

// pruneCache removes the builds of other sources not used for a day (a
// build of other sources may be in use by another checkout's test run).
func pruneCache(root, keep string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		info, err := os.Stat(filepath.Join(p, "opm"))
		if p == keep || err != nil || time.Since(info.ModTime()) < 24*time.Hour {
			continue
		}
		_ = os.RemoveAll(p)
	}
}

// run runs a command and fails the test when it fails.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	for attempt := 1; ; attempt++ {
		cmd := exec.Command(name, args...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err == nil {
			return stdout.String()
		}
		// containers/storage loses a race when two processes (other test
		// packages) pull the same layer at once: "layer not known". The
		// failed pull created no container, so trying again is safe.
		if attempt < 4 && strings.Contains(stderr.String(), "layer not known") {
			t.Logf("%s %s: %s; trying again", name, strings.Join(args, " "), strings.TrimSpace(stderr.String()))
			time.Sleep(time.Duration(attempt) * time.Second)
			continue
		}
		t.Fatalf("%s %s: %v\nstdout: %s\nstderr: %s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// podmanRunFlags are what makes podman run containers on this kind of
// machine (../shared/TOOLING.md): runc, and limits the nested runtime allows.
var podmanRunFlags = []string{"run", "-d", "--runtime", "runc", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024", "--tls-verify=false"}

// startContainer runs podman with args after podmanRunFlags and removes
// the container when the test ends.
func startContainer(t *testing.T, podman string, args ...string) string {
	t.Helper()
	cid := strings.TrimSpace(run(t, podman, append(append([]string{}, podmanRunFlags...), args...)...))
	t.Cleanup(func() { _ = exec.Command(podman, "rm", "-f", "-t", "2", cid).Run() })
	return cid
}

// waitServing waits until grpc_health_probe inside the container (a link to
// opm) says SERVING, as OLM's readiness probe does.
func waitServing(t *testing.T, podman, cid string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err := exec.Command(podman, "exec", cid, "grpc_health_probe", "-addr=:50051").CombinedOutput()
		if err == nil {
			require.Equal(t, "status: SERVING\n", string(out))
			return
		}
		if time.Now().After(deadline) {
			logs, _ := exec.Command(podman, "logs", cid).CombinedOutput()
			t.Fatalf("container %s not serving within 2m: last probe %v: %s\ncontainer log:\n%s", cid, err, out, logs)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// copyOut copies a file out of a container.
func copyOut(t *testing.T, podman, cid, path string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(path))
	run(t, podman, "cp", cid+":"+path, dst)
	return dst
}

// proxy forwards connections from the podman network's gateway address to
// the test registry, which listens on the host's loopback only: a
// container reaches the registry through it.
//
// The gateway's bridge exists only once a container has used the network
// (and netavark removes it again when the last one stops), so when its
// address is not there, a container of keeper (an image that serves) is
// started to bring the bridge up for the rest of the test.
func proxy(t *testing.T, podman, target, keeper string) string {
	t.Helper()
	gw := strings.TrimSpace(run(t, podman, "network", "inspect", "podman", "--format", "{{range .Subnets}}{{.Gateway}}{{end}}"))
	require.NotEmpty(t, gw, "gateway of podman's default network")
	l, err := net.Listen("tcp", net.JoinHostPort(gw, "0"))
	if err != nil {
		startContainer(t, podman, "--read-only", keeper)
		for deadline := time.Now().Add(30 * time.Second); err != nil && time.Now().Before(deadline); {
			time.Sleep(200 * time.Millisecond)
			l, err = net.Listen("tcp", net.JoinHostPort(gw, "0"))
		}
	}
	require.NoError(t, err, "listen on the podman network's gateway")
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				u, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer func() { _ = u.Close() }()
				done := make(chan struct{}, 2)
				go func() { _, _ = io.Copy(u, c); done <- struct{}{} }()
				go func() { _, _ = io.Copy(c, u); done <- struct{}{} }()
				<-done
			}()
		}
	}()
	return l.Addr().String()
}

// TestIndexImageServes builds opm's serving image, an index image on it with
// opm index add, and runs it with podman: read-only and as an arbitrary user,
// as a CatalogSource pod does, and with operator-sdk run bundle's command.
// Each container is probed with its own grpc_health_probe and queried over
// gRPC; the answers must match the database it serves.
func TestIndexImageServes(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: -short (builds a static opm and runs containers)")
	}
	podman := need(t, "podman", "podman")
	need(t, "runc", "runc")
	need(t, registrytest.Binary, "docker-registry")
	if _, err := os.Stat("/bin/busybox"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("busybox-static is not installed, and CI=true requires this test to run")
		}
		t.Skip("skipping: /bin/busybox is missing (apt-get install -y busybox-static)")
	}
	etcd := corpusDir(t)
	start := time.Now()
	opm := staticOpm(t)
	t.Logf("static opm ready after %s", time.Since(start).Round(time.Millisecond))

	ctx := context.Background()
	reg := registrytest.Start(t)
	client, err := image.NewClient(image.Options{UseHTTP: true})
	require.NoError(t, err)
	plat := image.Platform{OS: "linux", Architecture: runtime.GOARCH}
	servingRef := reg.Ref("opm:e2e")
	dst, err := image.ParseReference(servingRef)
	require.NoError(t, err)
	_, err = servingimage.Write(ctx, client, dst, servingimage.Options{
		Binaries: map[image.Platform]string{plat: opm},
		Busybox:  map[image.Platform]string{plat: "/bin/busybox"},
		Version:  "e2e",
	})
	require.NoError(t, err)

	// Bundle images of real bundles, built and pushed by opm (--permissive:
	// etcd 0.6.1's default channel is not one of its channels, an error opm
	// reports and upstream let through).
	var bundles []string
	for _, v := range []string{"0.6.1", "0.9.0", "0.9.2", "0.9.4"} {
		ref := reg.Ref("etcd-bundle:" + v)
		run(t, opm, "bundle", "build", "-d", filepath.Join(etcd, v), "-t", ref, "--use-http", "--permissive")
		bundles = append(bundles, ref)
	}
	indexRef := reg.Ref("idx:1")
	run(t, opm, "index", "add", "--bundles", strings.Join(bundles[:3], ","), "-i", servingRef, "-t", indexRef, "--use-http")
	// podman pulls the index image into the machine's storage: remove it
	// (the last container using it is removed first: cleanups run last in,
	// first out).
	t.Cleanup(func() { _ = exec.Command(podman, "rmi", "-f", indexRef).Run() })
	t.Logf("images built and pushed after %s", time.Since(start).Round(time.Millisecond))

	t.Run("CatalogSource pod", func(t *testing.T) {
		port := freePort(t)
		cid := startContainer(t, podman, "--read-only", "--user", "12345", "-p", fmt.Sprintf("127.0.0.1:%d:50051", port), indexRef)
		waitServing(t, podman, cid)
		db := copyOut(t, podman, cid, "/database/index.db")
		got := query(t, fmt.Sprintf("127.0.0.1:%d", port))
		want := fromDB(t, db)
		assert.Equal(t, want, got)
		assert.Contains(t, got.heads["etcd/alpha"].csvJSON, `"name":"etcdoperator.v0.6.1"`, "GetBundleForChannel carries the CSV")
		assert.Equal(t, []string{"etcdoperator.v0.6.1", "etcdoperator.v0.9.0", "etcdoperator.v0.9.2"}, csvNames(got.bundles))

		// A pod's deletion: SIGTERM, a graceful stop, exit status 0.
		run(t, podman, "stop", "-t", "20", cid)
		assert.Equal(t, "0", strings.TrimSpace(run(t, podman, "inspect", "--format", "{{.State.ExitCode}}", cid)))
		logs, err := exec.Command(podman, "logs", cid).CombinedOutput()
		require.NoError(t, err)
		assert.Contains(t, string(logs), `msg="serving registry" database=/database/index.db address=[::]:50051 packages=1 bundles=3`)
		assert.Contains(t, string(logs), `msg="stopped serving registry" database=/database/index.db address=[::]:50051 reason=signal`)
		t.Logf("CatalogSource container served and answered after %s", time.Since(start).Round(time.Millisecond))
	})

	t.Run("FBC CatalogSource pod", func(t *testing.T) {
		// An fbc index image serves its catalog from the cache opm built
		// into its catalog layer: read-only, as an arbitrary user, with
		// no conversion at start-up.
		fbcRef := reg.Ref("idx:fbc")
		run(t, opm, "index", "add", "--bundles", strings.Join(bundles[:3], ","), "-i", servingRef, "-t", fbcRef, "--use-http", "--catalog-format", "fbc")
		t.Cleanup(func() { _ = exec.Command(podman, "rmi", "-f", fbcRef).Run() })
		port := freePort(t)
		cid := startContainer(t, podman, "--read-only", "--user", "12345", "-p", fmt.Sprintf("127.0.0.1:%d:50051", port), fbcRef)
		waitServing(t, podman, cid)
		db := copyOut(t, podman, cid, "/var/cache/opm/index.db")
		got := query(t, fmt.Sprintf("127.0.0.1:%d", port))
		assert.Equal(t, asOPMServe(fromDB(t, db)), got)
		assert.Equal(t, []string{"etcdoperator.v0.6.1", "etcdoperator.v0.9.0", "etcdoperator.v0.9.2"}, csvNames(got.bundles))
		run(t, podman, "stop", "-t", "20", cid)
		assert.Equal(t, "0", strings.TrimSpace(run(t, podman, "inspect", "--format", "{{.State.ExitCode}}", cid)))
		logs, err := exec.Command(podman, "logs", cid).CombinedOutput()
		require.NoError(t, err)
		assert.Contains(t, string(logs), `how="cache used"`)
		assert.Contains(t, string(logs), `msg="serving registry" database=/var/cache/opm/index.db`)
		t.Logf("FBC CatalogSource container served and answered after %s", time.Since(start).Round(time.Millisecond))
	})

	t.Run("generated Dockerfile", func(t *testing.T) {
		// The authoring path: a basic template rendered into a catalog
		// directory, opm generate dockerfile, podman build; the image
		// serves the catalog from the cache its build stage made, as
		// opm's own FBC images do.
		dir := t.TempDir()
		tmpl := filepath.Join(dir, "etcd.yaml")
		require.NoError(t, os.WriteFile(tmpl, []byte("schema: olm.template.basic\nentries:\n"+
			"- {schema: olm.package, name: etcd, defaultChannel: singlenamespace-alpha}\n"+
			"- {schema: olm.channel, package: etcd, name: singlenamespace-alpha, entries: [{name: etcdoperator.v0.9.0}, {name: etcdoperator.v0.9.2, replaces: etcdoperator.v0.9.0}]}\n"+
			"- {schema: olm.bundle, image: "+bundles[1]+"}\n- {schema: olm.bundle, image: "+bundles[2]+"}\n"), 0o644))
		catalogDir := filepath.Join(dir, "catalog", "etcd")
		require.NoError(t, os.MkdirAll(catalogDir, 0o755))
		rendered := run(t, opm, "alpha", "render-template", tmpl, "--use-http")
		require.NoError(t, os.WriteFile(filepath.Join(catalogDir, "catalog.json"), []byte(rendered), 0o644))
		run(t, opm, "validate", filepath.Join(dir, "catalog"))
		run(t, opm, "generate", "dockerfile", filepath.Join(dir, "catalog"), "-i", servingRef, "-b", servingRef)
		dockerfile := filepath.Join(dir, "catalog.Dockerfile")

		tag := fmt.Sprintf("localhost/opm-e2e-generated:%d", time.Now().UnixNano())
		t.Cleanup(func() { _ = exec.Command(podman, "rmi", "-f", tag).Run() })
		run(t, podman, "build", "--isolation", "chroot", "--tls-verify=false", "-f", dockerfile, "-t", tag, dir)
		label := run(t, podman, "image", "inspect", "--format", `{{index .Config.Labels "operators.operatorframework.io.index.configs.v1"}}`, tag)
		assert.Equal(t, "/configs\n", label)

		// Read-only, as an arbitrary user (/tmp, where the cache is, is
		// not replaced by a tmpfs: a pod's /tmp is the image's).
		port := freePort(t)
		cid := startContainer(t, podman, "--read-only", "--read-only-tmpfs=false", "--user", "12345", "-p", fmt.Sprintf("127.0.0.1:%d:50051", port), tag)
		waitServing(t, podman, cid)
		db := copyOut(t, podman, cid, "/tmp/cache/index.db")
		got := query(t, fmt.Sprintf("127.0.0.1:%d", port))
		assert.Equal(t, asOPMServe(fromDB(t, db)), got)
		assert.Equal(t, []string{"etcdoperator.v0.9.0", "etcdoperator.v0.9.2"}, csvNames(got.bundles))
		run(t, podman, "stop", "-t", "20", cid)
		assert.Equal(t, "0", strings.TrimSpace(run(t, podman, "inspect", "--format", "{{.State.ExitCode}}", cid)))
		logs, err := exec.Command(podman, "logs", cid).CombinedOutput()
		require.NoError(t, err)
		assert.Contains(t, string(logs), `how="cache used"`)

		// -i scratch: the catalog and its cache, no opm (OLM v1).
		require.NoError(t, os.Remove(dockerfile))
		run(t, opm, "generate", "dockerfile", filepath.Join(dir, "catalog"), "-i", "scratch", "-b", servingRef)
		scratchTag := tag + "-scratch"
		t.Cleanup(func() { _ = exec.Command(podman, "rmi", "-f", scratchTag).Run() })
		run(t, podman, "build", "--isolation", "chroot", "--tls-verify=false", "-f", dockerfile, "-t", scratchTag, dir)
		sid := strings.TrimSpace(run(t, podman, "create", scratchTag, "/bin/opm"))
		t.Cleanup(func() { _ = exec.Command(podman, "rm", "-f", sid).Run() })
		configs := copyOut(t, podman, sid, "/configs")
		data, err := os.ReadFile(filepath.Join(configs, "etcd", "catalog.json"))
		require.NoError(t, err)
		assert.Equal(t, rendered, string(data))
		copyOut(t, podman, sid, "/tmp/cache/index.db")
		out, err := exec.Command(podman, "cp", sid+":/bin/opm", t.TempDir()).CombinedOutput()
		assert.Error(t, err, "a scratch catalog image has no opm: %s", out)
		t.Logf("generated Dockerfile images built and served after %s", time.Since(start).Round(time.Millisecond))
	})

	t.Run("operator-sdk run bundle", func(t *testing.T) {
		// The bundle as the container sees the registry: through the proxy.
		via := proxy(t, podman, reg.Addr, indexRef)
		bundle := via + "/etcd-bundle:0.9.4"
		port := freePort(t)
		script := "[[ -f /database/index.db ]] && cp /database/index.db /tmp/tmp.db; " +
			"opm registry add -d /tmp/tmp.db -b " + bundle + " --mode=semver --skip-tls-verify=false --use-http=true && " +
			"exec opm registry serve -d /tmp/tmp.db -p 50051"
		cid := startContainer(t, podman, "--user", "12345", "-w", "/tmp", "-p", fmt.Sprintf("127.0.0.1:%d:50051", port),
			"--entrypoint", "sh", indexRef, "-c", script)
		waitServing(t, podman, cid)
		db := copyOut(t, podman, cid, "/tmp/tmp.db")
		got := query(t, fmt.Sprintf("127.0.0.1:%d", port))
		want := fromDB(t, db)
		assert.Equal(t, want, got)
		assert.Contains(t, got.bundles, bundleRow{"etcdoperator.v0.9.4", "etcd", "singlenamespace-alpha", bundle, "0.9.4"}, "the bundle registry add added")
		t.Logf("run bundle container served and answered after %s", time.Since(start).Round(time.Millisecond))
	})
}

// catalog is what the tests compare: from gRPC and from the database.
type catalog struct {
	packages []string
	// pkgs is each package's default channel and channel heads.
	pkgs map[string]pkgInfo
	// heads is GetBundleForChannel's answer per package/channel: the head's
	// CSV name and the CSV itself, as upstream answers it.
	heads   map[string]headRow
	bundles []bundleRow
}

type pkgInfo struct {
	defaultChannel string
	channels       map[string]string // channel -> head CSV
}

type headRow struct {
	csv, csvJSON string
}

type bundleRow struct {
	csv, pkg, channel, path, version string
}

func query(t *testing.T, addr string) catalog {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	c := api.NewRegistryClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	out := catalog{pkgs: map[string]pkgInfo{}, heads: map[string]headRow{}}
	lp, err := c.ListPackages(ctx, &api.ListPackageRequest{})
	require.NoError(t, err)
	for {
		p, err := lp.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		out.packages = append(out.packages, p.GetName())
	}
	sort.Strings(out.packages)
	for _, name := range out.packages {
		p, err := c.GetPackage(ctx, &api.GetPackageRequest{Name: name})
		require.NoError(t, err)
		info := pkgInfo{defaultChannel: p.GetDefaultChannelName(), channels: map[string]string{}}
		for _, ch := range p.GetChannels() {
			info.channels[ch.GetName()] = ch.GetCsvName()
			// Deprecated upstream, still called by OLM's older clients.
			b, err := c.GetBundleForChannel(ctx, //nolint:staticcheck // the call under test
				&api.GetBundleInChannelRequest{PkgName: name, ChannelName: ch.GetName()})
			require.NoError(t, err)
			out.heads[name+"/"+ch.GetName()] = headRow{b.GetCsvName(), b.GetCsvJson()}
		}
		out.pkgs[name] = info
	}
	lb, err := c.ListBundles(ctx, &api.ListBundlesRequest{})
	require.NoError(t, err)
	for {
		b, err := lb.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		out.bundles = append(out.bundles, bundleRow{b.GetCsvName(), b.GetPackageName(), b.GetChannelName(), b.GetBundlePath(), b.GetVersion()})
	}
	sortRows(out.bundles)
	return out
}

// fromDB reads the same from the database with plain SQL.
// asOPMServe is what opm serve answers for a catalog whose cache is the
// database: GetBundleForChannel gives the head whole, as upstream's opm
// serve does, its csvJson the catalog's CSV without the trailing newline a
// sqlite row keeps.
func asOPMServe(c catalog) catalog {
	for k, h := range c.heads {
		h.csvJSON = strings.TrimSuffix(h.csvJSON, "\n")
		c.heads[k] = h
	}
	return c
}

func fromDB(t *testing.T, path string) catalog {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer func() { _ = db.Close() }()
	out := catalog{pkgs: map[string]pkgInfo{}, heads: map[string]headRow{}}
	each := func(q string, scan func(*sql.Rows) error) {
		rows, err := db.Query(q)
		require.NoError(t, err, q)
		defer func() { _ = rows.Close() }()
		for rows.Next() {
			require.NoError(t, scan(rows), q)
		}
		require.NoError(t, rows.Err(), q)
	}
	each(`SELECT name, default_channel FROM package ORDER BY name`, func(r *sql.Rows) error {
		var name, def string
		err := r.Scan(&name, &def)
		out.packages = append(out.packages, name)
		out.pkgs[name] = pkgInfo{defaultChannel: def, channels: map[string]string{}}
		return err
	})
	each(`SELECT c.package_name, c.name, c.head_operatorbundle_name, COALESCE(b.csv, '')
	      FROM channel c JOIN operatorbundle b ON b.name = c.head_operatorbundle_name`, func(r *sql.Rows) error {
		var pkg, channel string
		var head headRow
		err := r.Scan(&pkg, &channel, &head.csv, &head.csvJSON)
		out.pkgs[pkg].channels[channel] = head.csv
		out.heads[pkg+"/"+channel] = head
		return err
	})
	each(`SELECT DISTINCT e.operatorbundle_name, e.package_name, e.channel_name, COALESCE(b.bundlepath, ''), COALESCE(b.version, '')
	      FROM channel_entry e JOIN operatorbundle b ON b.name = e.operatorbundle_name`, func(r *sql.Rows) error {
		var row bundleRow
		err := r.Scan(&row.csv, &row.pkg, &row.channel, &row.path, &row.version)
		out.bundles = append(out.bundles, row)
		return err
	})
	sortRows(out.bundles)
	return out
}

func csvNames(rows []bundleRow) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range rows {
		if !seen[r.csv] {
			seen[r.csv] = true
			out = append(out, r.csv)
		}
	}
	sort.Strings(out)
	return out
}

func sortRows(rows []bundleRow) {
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.pkg != b.pkg {
			return a.pkg < b.pkg
		}
		if a.channel != b.channel {
			return a.channel < b.channel
		}
		return a.csv < b.csv
	})
}
