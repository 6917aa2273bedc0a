package olmclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/operator-framework/operator-registry/pkg/api"
	"github.com/operator-framework/operator-registry/pkg/client"
)

const tags = "containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub"

// opmBinary is built once per test run from the checkout this module sits in.
var opmBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "olmclient-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	opmBinary = filepath.Join(dir, "opm")
	build := exec.Command("go", "build", "-tags", tags, "-o", opmBinary, "./cmd/opm")
	build.Dir = "../.."
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build opm: %v\n%s", err, out)
		os.Exit(2)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// reference finds ../shared/reference beside the checkout: absent, the test
// skips saying why, except under CI=true, where it is a failure.
func reference(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../../../shared/reference")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "grpc")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the shared reference data is missing (%s); CI always has it", dir)
		}
		t.Skipf("no shared reference data at %s: these tests compare with upstream's recorded answers", dir)
	}
	return dir
}

// recording is one reference/grpc file: upstream's answers over one database.
type recording struct {
	DB      string `json:"db"`
	Queries []struct {
		Method   string            `json:"method"`
		Request  map[string]string `json:"request"`
		OK       bool              `json:"ok"`
		Response []json.RawMessage `json:"response"`
		Error    string            `json:"error"`
	} `json:"queries"`
}

type recordedBundle struct {
	CSVName     string `json:"csvName"`
	PackageName string `json:"packageName"`
	ChannelName string `json:"channelName"`
	BundlePath  string `json:"bundlePath"`
	Version     string `json:"version"`
}

type recordedPackage struct {
	Name               string `json:"name"`
	DefaultChannelName string `json:"defaultChannelName"`
	Channels           []struct {
		Name    string `json:"name"`
		CSVName string `json:"csvName"`
	} `json:"channels"`
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

// serve starts opm with args plus a free port and returns the address once
// OLM's client finds it healthy; the process is stopped when the test ends.
func serve(t *testing.T, args ...string) *client.Client {
	t.Helper()
	port := freePort(t)
	var stderr bytes.Buffer
	cmd := exec.Command(opmBinary, append(args, "--port", port)...)
	cmd.Stderr = &stderr
	tmp := t.TempDir()
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { stop(t, cmd, exited, tmp) })
	c, err := client.NewClient("127.0.0.1:" + port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	// Polled: the minutes only bound a server that never serves, however
	// loaded the machine.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		ok, err := c.HealthCheck(ctx, time.Second)
		cancel()
		if ok && err == nil {
			return c
		}
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			t.Fatalf("opm %s exited (%v) before serving:\n%s", strings.Join(args, " "), err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("opm %s never became healthy to OLM's client: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop ends an opm serve as a pod's kubelet does, with SIGTERM: it must
// exit 0 and remove the database it converted into a temporary directory
// under tmp (killed, it would leave an opm-serve-* directory behind). It is
// killed only if still running a minute later.
func stop(t *testing.T, cmd *exec.Cmd, exited chan error, tmp string) {
	t.Helper()
	_ = cmd.Process.Signal(syscall.SIGTERM) // fails only when opm has exited already
	select {
	case err := <-exited:
		if err != nil && !t.Failed() {
			t.Errorf("opm serve: %v after SIGTERM, want exit 0", err)
		}
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		<-exited
		t.Errorf("opm serve still running a minute after SIGTERM: killed")
	}
	if left, err := os.ReadDir(tmp); err != nil || len(left) > 0 {
		t.Errorf("opm serve left temporary files after SIGTERM: %v %v", left, err)
	}
}

// TestOLMClientReadsOpmServers: for every reference database, OLM's client
// finds both opm servers healthy, and every call it makes gives the bundles
// upstream's server gave for the same question (or fails where it failed).
func TestOLMClientReadsOpmServers(t *testing.T) {
	ref := reference(t)
	files, err := filepath.Glob(filepath.Join(ref, "grpc", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings in %s/grpc: %v", ref, err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var rec recording
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &rec); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			db := filepath.Join(ref, "index", rec.DB)
			fbc := filepath.Join(t.TempDir(), "catalog")
			if out, err := exec.Command(opmBinary, "migrate", db, fbc).CombinedOutput(); err != nil {
				t.Fatalf("opm migrate %s: %v\n%s", db, err, out)
			}
			servers := map[string]*client.Client{
				"registry serve": serve(t, "registry", "serve", "--database", db),
				"serve":          serve(t, "serve", fbc),
			}
			for which, c := range servers {
				t.Run(strings.ReplaceAll(which, " ", "-"), func(t *testing.T) {
					checkAgainst(t, c, &rec, which == "serve")
				})
			}
		})
	}
}

// checkAgainst replays rec through OLM's client. With catalog, the server
// is opm serve, which answers as upstream's opm serve: GetBundleForChannel
// gives the whole head bundle (compared by name: the recording, upstream's
// registry serve, holds only csvName and csvJson), and the queries whose
// answers upstream's two servers give differently (by replaced name, by
// API) are left to internal/cmd/serve's TestServeAnswersAsUpstreamServe.
func checkAgainst(t *testing.T, c *client.Client, rec *recording, catalog bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, q := range rec.Queries {
		r := q.Request
		switch q.Method {
		case "api.Registry/ListBundles":
			it, err := c.ListBundles(ctx)
			if err != nil {
				t.Fatalf("ListBundles: %v", err)
			}
			var got []string
			for b := it.Next(); b != nil; b = it.Next() {
				got = append(got, b.CsvName+"/"+b.ChannelName+"/"+b.BundlePath)
			}
			if err := it.Error(); err != nil {
				t.Fatalf("ListBundles: %v", err)
			}
			var want []string
			for _, raw := range q.Response {
				var b recordedBundle
				if err := json.Unmarshal(raw, &b); err != nil {
					t.Fatal(err)
				}
				want = append(want, b.CSVName+"/"+b.ChannelName+"/"+b.BundlePath)
			}
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("ListBundles: got %d bundles, upstream %d\n got: %v\nwant: %v", len(got), len(want), got, want)
			}
		case "api.Registry/GetPackage":
			p, err := c.GetPackage(ctx, r["name"])
			if !sameOutcome(t, q.Method, r, q.OK, err) || !q.OK {
				continue
			}
			var want recordedPackage
			if err := json.Unmarshal(q.Response[0], &want); err != nil {
				t.Fatal(err)
			}
			if p.Name != want.Name || p.DefaultChannelName != want.DefaultChannelName {
				t.Errorf("GetPackage %s: got %s (default %s), upstream %s (default %s)", r["name"], p.Name, p.DefaultChannelName, want.Name, want.DefaultChannelName)
			}
			got := map[string]string{}
			for _, ch := range p.Channels {
				got[ch.Name] = ch.CsvName
			}
			for _, ch := range want.Channels {
				if got[ch.Name] != ch.CSVName {
					t.Errorf("GetPackage %s: channel %s head %q, upstream %q", r["name"], ch.Name, got[ch.Name], ch.CSVName)
				}
			}
			if len(got) != len(want.Channels) {
				t.Errorf("GetPackage %s: %d channels, upstream %d", r["name"], len(got), len(want.Channels))
			}
		case "api.Registry/GetBundleForChannel":
			b, err := c.GetBundleInPackageChannel(ctx, r["pkgName"], r["channelName"])
			if catalog {
				if sameOutcome(t, q.Method, r, q.OK, err) && q.OK {
					var want recordedBundle
					if err := json.Unmarshal(q.Response[0], &want); err != nil {
						t.Fatal(err)
					}
					if b.CsvName != want.CSVName || b.PackageName != r["pkgName"] || b.ChannelName != r["channelName"] {
						t.Errorf("%s %v: got %s/%s/%s, upstream's head %s", q.Method, r, b.PackageName, b.ChannelName, b.CsvName, want.CSVName)
					}
				}
				continue
			}
			sameBundle(t, q.Method, r, q.OK, q.Response, b, err)
		case "api.Registry/GetBundle":
			b, err := c.GetBundle(ctx, r["pkgName"], r["channelName"], r["csvName"])
			sameBundle(t, q.Method, r, q.OK, q.Response, b, err)
		case "api.Registry/GetBundleThatReplaces":
			if catalog {
				continue
			}
			b, err := c.GetReplacementBundleInPackageChannel(ctx, r["csvName"], r["pkgName"], r["channelName"])
			sameBundle(t, q.Method, r, q.OK, q.Response, b, err)
		case "api.Registry/GetDefaultBundleThatProvides":
			if catalog {
				continue
			}
			b, err := c.GetBundleThatProvides(ctx, r["group"], r["version"], r["kind"])
			sameBundle(t, q.Method, r, q.OK, q.Response, b, err)
		}
	}
}

// sameOutcome reports whether the call failed exactly when upstream's did.
func sameOutcome(t *testing.T, method string, req map[string]string, ok bool, err error) bool {
	t.Helper()
	if ok && err != nil {
		t.Errorf("%s %v: %v, upstream answered", method, req, err)
		return false
	}
	if !ok && err == nil {
		t.Errorf("%s %v: answered, upstream failed", method, req)
		return false
	}
	return true
}

func sameBundle(t *testing.T, method string, req map[string]string, ok bool, resp []json.RawMessage, got *api.Bundle, err error) {
	t.Helper()
	if !sameOutcome(t, method, req, ok, err) || !ok {
		return
	}
	var want recordedBundle
	if err := json.Unmarshal(resp[0], &want); err != nil {
		t.Fatal(err)
	}
	if got.CsvName != want.CSVName || got.PackageName != want.PackageName || got.BundlePath != want.BundlePath || got.Version != want.Version {
		t.Errorf("%s %v: got %s/%s %s %s, upstream %s/%s %s %s", method, req,
			got.PackageName, got.CsvName, got.Version, got.BundlePath, want.PackageName, want.CSVName, want.Version, want.BundlePath)
	}
}
