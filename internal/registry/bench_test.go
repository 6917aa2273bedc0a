package registry

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/opmkit/opm/internal/registry/api"
)

// The benchmark database: copies of the reference databases under renamed
// packages (see mergeCopies) until it holds at least 5,000 bundles. Built
// once per process, removed by TestMain.
var (
	benchOnce    sync.Once
	benchDir     string
	benchPath    string
	benchBundles int
)

const benchTarget = 5000

func benchDB(b testing.TB) string {
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "opm-registry-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = dir
		benchPath = filepath.Join(dir, "index.db")
		start := time.Now()
		benchBundles = mergeCopies(b, benchPath, referenceSources(b), benchTarget)
		b.Logf("benchmark database: %d bundles, built in %s", benchBundles, time.Since(start).Round(time.Millisecond))
	})
	if benchPath == "" {
		b.Fatal("benchmark database not built")
	}
	return benchPath
}

func init() {
	cleanupBenchFn = func() {
		if benchDir != "" {
			os.RemoveAll(benchDir)
		}
	}
}

// benchKeys are real request arguments drawn from the database.
type benchKeys struct {
	packages []string
	channels [][2]string // package, channel
	bundles  [][3]string // package, channel, bundle (with content or not)
	gvks     []GVK
}

func loadBenchKeys(b *testing.B, path string) benchKeys {
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&immutable=1")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var k benchKeys
	scan := func(q string, fn func(r *sql.Rows) error) {
		rows, err := db.Query(q)
		if err != nil {
			b.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			if err := fn(rows); err != nil {
				b.Fatal(err)
			}
		}
	}
	scan(`SELECT name FROM package ORDER BY name`, func(r *sql.Rows) error {
		var s string
		err := r.Scan(&s)
		k.packages = append(k.packages, s)
		return err
	})
	scan(`SELECT package_name, name FROM channel ORDER BY 1, 2`, func(r *sql.Rows) error {
		var p, c string
		err := r.Scan(&p, &c)
		k.channels = append(k.channels, [2]string{p, c})
		return err
	})
	scan(`SELECT DISTINCT e.package_name, e.channel_name, e.operatorbundle_name FROM channel_entry e JOIN operatorbundle ob ON ob.name = e.operatorbundle_name ORDER BY 1, 2, 3`, func(r *sql.Rows) error {
		var p, c, n string
		err := r.Scan(&p, &c, &n)
		k.bundles = append(k.bundles, [3]string{p, c, n})
		return err
	})
	scan(`SELECT DISTINCT group_name, version, kind FROM api_provider ORDER BY 1, 2, 3`, func(r *sql.Rows) error {
		var g GVK
		err := r.Scan(&g.Group, &g.Version, &g.Kind)
		k.gvks = append(k.gvks, g)
		return err
	})
	return k
}

// drain reads a server stream to its end and returns the messages read.
func drain[T any](stream grpc.ServerStreamingClient[T], err error) (int, error) {
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		if _, err := stream.Recv(); err == io.EOF {
			return n, nil
		} else if err != nil {
			return n, err
		}
		n++
	}
}

// BenchmarkMethods measures every api.Registry method through a gRPC client
// on loopback against the 5,000-bundle database, with requests spread over
// its packages, channels, bundles and APIs. Besides ns/op it reports the
// latency percentiles p50-ms and p99-ms.
func BenchmarkMethods(b *testing.B) {
	path := benchDB(b)
	keys := loadBenchKeys(b, path)
	srv := startServer(b, Options{DB: path})
	c := api.NewRegistryClient(srv.conn)
	ctx := context.Background()
	// A prime stride walks the keys in an order unrelated to their sorting.
	pick := func(i, n int) int { return (i * 7919) % n }
	methods := []struct {
		name string
		call func(i int) error
	}{
		{"ListPackages", func(int) error {
			_, err := drain(c.ListPackages(ctx, &api.ListPackageRequest{}))
			return err
		}},
		{"GetPackage", func(i int) error {
			_, err := c.GetPackage(ctx, &api.GetPackageRequest{Name: keys.packages[pick(i, len(keys.packages))]})
			return err
		}},
		{"GetBundle", func(i int) error {
			k := keys.bundles[pick(i, len(keys.bundles))]
			_, err := c.GetBundle(ctx, &api.GetBundleRequest{PkgName: k[0], ChannelName: k[1], CsvName: k[2]})
			return err
		}},
		{"GetBundleForChannel", func(i int) error {
			k := keys.channels[pick(i, len(keys.channels))]
			_, err := c.GetBundleForChannel(ctx, //nolint:staticcheck // the deprecated method is measured on purpose
				&api.GetBundleInChannelRequest{PkgName: k[0], ChannelName: k[1]})
			return err
		}},
		{"GetChannelEntriesThatReplace", func(i int) error {
			k := keys.bundles[pick(i, len(keys.bundles))]
			_, err := drain(c.GetChannelEntriesThatReplace(ctx, &api.GetAllReplacementsRequest{CsvName: k[2]}))
			return ignoreNotFound(err)
		}},
		{"GetBundleThatReplaces", func(i int) error {
			k := keys.bundles[pick(i, len(keys.bundles))]
			_, err := c.GetBundleThatReplaces(ctx, &api.GetReplacementRequest{CsvName: k[2], PkgName: k[0], ChannelName: k[1]})
			return ignoreNotFound(err)
		}},
		{"GetChannelEntriesThatProvide", func(i int) error {
			g := keys.gvks[pick(i, len(keys.gvks))]
			_, err := drain(c.GetChannelEntriesThatProvide(ctx, &api.GetAllProvidersRequest{Group: g.Group, Version: g.Version, Kind: g.Kind}))
			return err
		}},
		{"GetLatestChannelEntriesThatProvide", func(i int) error {
			g := keys.gvks[pick(i, len(keys.gvks))]
			_, err := drain(c.GetLatestChannelEntriesThatProvide(ctx, &api.GetLatestProvidersRequest{Group: g.Group, Version: g.Version, Kind: g.Kind}))
			return err
		}},
		{"GetDefaultBundleThatProvides", func(i int) error {
			g := keys.gvks[pick(i, len(keys.gvks))]
			_, err := c.GetDefaultBundleThatProvides(ctx, &api.GetDefaultProviderRequest{Group: g.Group, Version: g.Version, Kind: g.Kind})
			return ignoreNotFound(err)
		}},
		{"ListBundles", func(int) error {
			n, err := drain(c.ListBundles(ctx, &api.ListBundlesRequest{}))
			if err == nil && n < benchTarget {
				err = fmt.Errorf("ListBundles sent %d bundles", n)
			}
			return err
		}},
	}
	for _, m := range methods {
		b.Run(m.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if err := m.call(i); err != nil {
					b.Fatalf("%s: %v", m.name, err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			reportPercentiles(b, lat)
		})
	}
}

// ignoreNotFound: some requests rightly find nothing (a channel head has no
// replacement); the benchmark measures them all the same.
func ignoreNotFound(err error) error {
	if err != nil && strings.Contains(err.Error(), "code = Unknown desc = no ") {
		return nil
	}
	return err
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	at := func(q float64) float64 {
		i := int(float64(len(lat))*q+0.999999) - 1
		i = min(max(i, 0), len(lat)-1)
		return float64(lat[i]) / float64(time.Millisecond)
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// BenchmarkStartup is the time from calling Serve to the health service
// answering SERVING (open and check the database, read its lookups, count,
// listen), over the 5,000-bundle database.
func BenchmarkStartup(b *testing.B) {
	path := benchDB(b)
	var took []time.Duration
	for i := 0; i < b.N; i++ {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		ready := make(chan struct{})
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			done <- Serve(ctx, Options{DB: path, Listener: lis, Logger: discardLogger, OnServing: func(net.Addr) { close(ready) }})
		}()
		select {
		case <-ready:
		case err := <-done:
			b.Fatal(err)
		}
		if err := Probe(context.Background(), ProbeOptions{Addr: lis.Addr().String()}); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
		b.StopTimer()
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	b.ReportMetric(float64(took[len(took)/2])/float64(time.Millisecond), "p50-ms-to-serving")
	b.ReportMetric(float64(benchBundles), "bundles")
}

// serveHelperEnv makes the test binary a server process: it serves the
// database named by the variable on 127.0.0.1, prints its address on stdout,
// and serves until SIGTERM or SIGINT.
const serveHelperEnv = "OPM_REGISTRY_SERVE_HELPER"

// serverProcess is the test binary serving a database in a child process.
type serverProcess struct {
	cmd    *exec.Cmd
	addr   string
	stderr *syncBuffer
}

func startServerProcess(t testing.TB, db string) *serverProcess {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &serverProcess{cmd: exec.Command(self), stderr: &syncBuffer{}}
	p.cmd.Env = append(os.Environ(), serveHelperEnv+"="+db)
	p.cmd.Stderr = p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
		t.Fatalf("server process: %v\n%s", err, p.stderr.String())
	}
	p.addr = strings.TrimSpace(line)
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	return p
}

// peakRSS is the process's peak resident set (VmHWM) in MiB.
func (p *serverProcess) peakRSS(t testing.TB) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb / 1024
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// terminate sends SIGTERM and waits for the process to exit.
func (p *serverProcess) terminate(t testing.TB) error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	return p.cmd.Wait()
}

// BenchmarkListBundlesPeakRSS streams ListBundles of the 5,000-bundle
// database from a server in its own process and reports that process's peak
// RSS (peak-RSS-MB, after all runs) and the bundles per second received.
func BenchmarkListBundlesPeakRSS(b *testing.B) {
	path := benchDB(b)
	p := startServerProcess(b, path)
	conn, err := newClient(p.addr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	c := api.NewRegistryClient(conn)
	b.ResetTimer()
	total := 0
	for i := 0; i < b.N; i++ {
		n, err := drain(c.ListBundles(context.Background(), &api.ListBundlesRequest{}))
		if err != nil {
			b.Fatal(err)
		}
		total += n
	}
	elapsed := b.Elapsed()
	b.StopTimer()
	b.ReportMetric(p.peakRSS(b), "peak-RSS-MB")
	b.ReportMetric(float64(total)/elapsed.Seconds(), "bundles/s")
	if err := p.terminate(b); err != nil {
		b.Fatalf("server process: %v\n%s", err, p.stderr.String())
	}
}
