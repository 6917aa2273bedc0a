package index

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/indeximage"
	"github.com/opmkit/opm/internal/registrytest"
)

// BenchmarkIndexImageAddOne is `opm index add --from-index` of one bundle
// image onto an index image in Debian's docker-registry on loopback: fetch
// the database layer, pull and add the bundle, write the new database layer
// and push, minus process start. The index holds copies of the corpus under
// renamed packages (≥300 and ≥5,000 bundles). Besides time per add it
// reports the bytes the registry served and received per add, the database
// layer, and how much the image grew over all the adds (one database layer:
// the old one is replaced each time). bench/index-image.sh runs it.
func BenchmarkIndexImageAddOne(b *testing.B) {
	for _, size := range []int{300, 5000} {
		b.Run(fmt.Sprintf("bundles=%d", size), func(b *testing.B) {
			var path string
			if size >= synthTarget {
				path = syntheticDB(b)
			} else {
				path = smallSyntheticDB(b, size)
			}
			benchImageAdd(b, path)
		})
	}
}

// smallSyntheticDB builds a database of at least n bundles the way
// syntheticDB does (renamed corpus copies).
func smallSyntheticDB(b *testing.B, n int) string {
	needShared(b)
	path := filepath.Join(b.TempDir(), "index.db")
	db, err := Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	parsed := map[string][]*rows{}
	for _, pkg := range corpusPackages(b) {
		for _, lb := range corpusBundles(b, pkg) {
			r, e := bundleRows(lb)
			if e != nil {
				b.Fatal(e)
			}
			parsed[pkg] = append(parsed[pkg], r)
		}
	}
	total := 0
	for c := 1; total < n; c++ {
		for _, pkg := range corpusPackages(b) {
			var rs []*rows
			for _, r := range parsed[pkg] {
				rs = append(rs, renameRows(r, pkg, fmt.Sprintf("%s-c%d", pkg, c)))
			}
			res, err := db.addRows(context.Background(), rs, &AddResult{}, nil, AddOptions{Mode: ciMode(b, pkg), Permissive: true})
			if err != nil {
				b.Fatal(err)
			}
			total += len(res.Added)
		}
	}
	return path
}

// byteCounter sits in front of the registry and counts request and response bodies.
type byteCounter struct {
	next          http.Handler
	served, taken atomic.Int64
}

type countingRW struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w countingRW) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.n.Add(int64(n))
	return n, err
}

type countingRC struct {
	io.ReadCloser
	n *atomic.Int64
}

func (r countingRC) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.n.Add(int64(n))
	return n, err
}

func (c *byteCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Body != nil {
		r.Body = countingRC{r.Body, &c.taken}
	}
	c.next.ServeHTTP(countingRW{w, &c.served}, r)
}

func benchImageAdd(b *testing.B, dbPath string) {
	ctx := context.Background()
	reg := registrytest.Start(b)
	target, _ := url.Parse(reg.URL())
	counter := &byteCounter{next: httputil.NewSingleHostReverseProxy(target)}
	srv := httptest.NewServer(counter)
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	c, err := image.NewClient(image.Options{UseHTTP: true})
	if err != nil {
		b.Fatal(err)
	}
	bundles := countBundles(b, dbPath)

	// A stand-in binary image (two 1 MiB layers) and the first index image.
	var layers []v1.Layer
	var baseSize int64
	for _, name := range []string{"bin/opm", "etc/passwd"} {
		data := make([]byte, 1<<20)
		_, _ = rand.Read(data)
		lb := image.NewLayerBuilder()
		if err := lb.AddFile(name, data); err != nil {
			b.Fatal(err)
		}
		l, err := lb.Layer()
		if err != nil {
			b.Fatal(err)
		}
		size, _ := l.Size()
		baseSize += size
		layers = append(layers, l)
	}
	base, err := image.NewImage(image.ImageConfig{}, layers...)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Write(ctx, base, mustParse(b, addr+"/opm:fake")); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	// The database cache, as commands keep it (BENCH_DB_CACHE=off: none,
	// every add downloads and decompresses the whole database layer).
	// BENCH_OPM=path runs each add as a whole `opm index add` process
	// with its cache under its own XDG_CACHE_HOME, the same directory.
	xdg := b.TempDir()
	cache := indeximage.CacheIn(func(k string) (string, bool) { return xdg, k == "XDG_CACHE_HOME" })
	if os.Getenv("BENCH_DB_CACHE") == "off" {
		cache = ""
	}
	opm := os.Getenv("BENCH_OPM")
	first := writeIndexImage(b, c, addr+"/opm:fake", dbPath, addr+"/idx:0", cache)
	b.Logf("%d bundles: database %.1f MB, layer %.1f MB, first push %s",
		bundles, float64(fileSize(b, dbPath))/1e6, float64(first.DatabaseLayerSize)/1e6, time.Since(start).Round(time.Millisecond))

	// The bundles to add, one per run, each replacing the previous head
	// of a package copy.
	pkg := "skupper-operator-c1"
	prev := pkg + ".v1.9.6"
	refs := make([]string, b.N)
	for i := range refs {
		v := fmt.Sprintf("2.0.%d", i)
		s := spec{pkg: pkg, name: pkg + ".v" + v, version: v, replaces: prev, channels: "stable,stable-1"}
		fsys := s.files()
		bd, err := bundle.Load(fsys)
		if err != nil {
			b.Fatal(err)
		}
		img, err := image.BuildBundleImage(fsys, bd.Annotations.Values)
		if err != nil {
			b.Fatal(err)
		}
		refs[i] = addr + "/" + pkg + "-bundle:" + v
		if _, err := c.Write(ctx, img, mustParse(b, refs[i])); err != nil {
			b.Fatal(err)
		}
		prev = s.name
	}

	counter.served.Store(0)
	counter.taken.Store(0)
	var last *indeximage.Result
	var phases addPhases
	stopProfile := startBenchProfile(b)
	cpu0 := processCPU()
	rss0 := resetPeakRSS(b)
	b.ResetTimer()
	var procs procFigures
	for i := 0; i < b.N; i++ {
		from, to := addr+fmt.Sprintf("/idx:%d", i), addr+fmt.Sprintf("/idx:%d", i+1)
		if opm != "" {
			procs.run(b, opm, xdg, cache == "", "index", "add", "--bundles", refs[i], "--from-index", from, "--tag", to, "--use-http")
			continue
		}
		last = addOne(b, c, from, refs[i], to, cache, &phases)
	}
	b.StopTimer()
	// The adds' own peak: the process's peak since the reset, less what
	// the set-up still held then (the registry runs in its own process).
	addsPeak := vmStatus("VmHWM") - rss0
	cpu := processCPU() - cpu0
	stopProfile()
	if opm != "" {
		last = lastLayer(b, c, mustParse(b, addr+fmt.Sprintf("/idx:%d", b.N)))
		addsPeak, cpu = procs.peakMB, procs.cpu
	}

	final, err := c.Open(ctx, mustParse(b, addr+fmt.Sprintf("/idx:%d", b.N)))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = final.Close() }()
	var total int64
	for _, l := range final.Layers() {
		total += l.Size
	}
	if len(final.Layers()) != len(layers)+1 {
		b.Fatalf("after %d adds the image has %d layers, want %d", b.N, len(final.Layers()), len(layers)+1)
	}
	b.ReportMetric(float64(bundles), "bundles-in-db")
	b.ReportMetric(float64(counter.served.Load())/float64(b.N)/1e6, "MB-pulled/op")
	b.ReportMetric(float64(counter.taken.Load())/float64(b.N)/1e6, "MB-pushed/op")
	b.ReportMetric(float64(last.DatabaseLayerSize)/1e6, "db-layer-MB")
	b.ReportMetric(float64(total-baseSize-last.DatabaseLayerSize)/1e6, "growth-beyond-one-db-layer-MB")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(phases.fetch.Seconds()/float64(b.N), "fetch-s/op")
	b.ReportMetric(phases.add.Seconds()/float64(b.N), "add-s/op")
	b.ReportMetric(phases.write.Seconds()/float64(b.N), "write-s/op")
	b.ReportMetric(addsPeak, "adds-peak-RSS-MB")
	reportMaxRSS(b)
}

// procFigures sums what whole opm processes used: CPU (user and system)
// and the largest peak RSS of any of them.
type procFigures struct {
	cpu    time.Duration
	peakMB float64
}

// run runs opm with args, its database cache off when noCache, under
// /usr/bin/time, and adds its CPU and peak RSS to p. (The rusage of a
// child of this process would not do: Linux starts a child's peak RSS
// at its parent's RSS when it forks, which for a benchmark holding a
// synthetic database is more than opm's own.)
func (p *procFigures) run(b *testing.B, opm, xdg string, noCache bool, args ...string) {
	timeFile := filepath.Join(b.TempDir(), "time")
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%U %S %M", "-o", timeFile, opm}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+xdg, "NO_COLOR=1")
	if noCache {
		// Without HOME or XDG_CACHE_HOME opm keeps no database cache.
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME=", "HOME=", "NO_COLOR=1")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("%s %s: %v\n%s", opm, strings.Join(args, " "), err, out)
	}
	raw, err := os.ReadFile(timeFile)
	if err != nil {
		b.Fatal(err)
	}
	var user, sys float64
	var kb int64
	if _, err := fmt.Sscanf(string(raw), "%f %f %d", &user, &sys, &kb); err != nil {
		b.Fatalf("/usr/bin/time wrote %q: %v", raw, err)
	}
	p.cpu += time.Duration((user + sys) * float64(time.Second))
	p.peakMB = max(p.peakMB, float64(kb)/1024)
}

// lastLayer reads what the benchmark reports of the last image an opm
// process wrote: its top (database) layer.
func lastLayer(b *testing.B, c *image.Client, ref image.Ref) *indeximage.Result {
	im, err := c.Open(context.Background(), ref)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = im.Close() }()
	ls := im.Layers()
	top := ls[len(ls)-1]
	return &indeximage.Result{DatabaseLayer: top.Digest.String(), DatabaseLayerSize: top.Size}
}

func mustParse(b *testing.B, s string) image.Ref {
	r, err := image.ParseReference(s)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

func fileSize(b *testing.B, p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	return st.Size()
}

func countBundles(b *testing.B, path string) int {
	db, err := OpenReadOnly(path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.sql.QueryRow("SELECT count(*) FROM operatorbundle").Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}

// writeIndexImage writes a new index image holding a copy of the database.
func writeIndexImage(b *testing.B, c *image.Client, base, dbPath, dst, cache string) *indeximage.Result {
	ctx := context.Background()
	bld, err := indeximage.New(c, "")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = bld.Close() }()
	bld.Compression, bld.Cache = benchCompression(b), cache
	if err := bld.Base(ctx, base); err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(dbPath)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(bld.DatabasePath(), data, 0o600); err != nil {
		b.Fatal(err)
	}
	res, err := bld.Write(ctx, dst)
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// addPhases sums the time spent in each phase of the adds: opening the
// base and fetching its database (with the bundle), changing the database,
// and building and pushing the new image.
type addPhases struct{ fetch, add, write time.Duration }

// processCPU is the CPU time (user and system) this process has used: on
// a shared machine a steadier figure than wall time. The registry runs in
// a process of its own and is not in it.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// startBenchProfile writes a CPU profile of the timed loop alone (not of
// building the synthetic database) to $BENCH_CPUPROFILE, when set.
func startBenchProfile(b *testing.B) func() {
	p := os.Getenv("BENCH_CPUPROFILE")
	if p == "" {
		return func() {}
	}
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }
}

// benchCompression is the database layer compression the benchmark
// writes: $BENCH_LAYER_COMPRESSION (gzip or zstd), gzip by default.
func benchCompression(b *testing.B) indeximage.Compression {
	c, err := indeximage.ParseCompression(os.Getenv("BENCH_LAYER_COMPRESSION"))
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// addOne is what `opm index add -b ref -f from -t to` does.
func addOne(b *testing.B, c *image.Client, from, ref, to, cache string, ph *addPhases) *indeximage.Result {
	ctx := context.Background()
	t0 := time.Now()
	bld, err := indeximage.New(c, "")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = bld.Close() }()
	bld.Compression, bld.Cache = benchCompression(b), cache
	if err := bld.FromIndex(ctx, from); err != nil {
		b.Fatal(err)
	}
	fsys, _, err := c.OpenFS(ctx, mustParse(b, ref))
	if err != nil {
		b.Fatal(err)
	}
	bd, err := bundle.Load(fsys)
	_ = fsys.Close()
	if err != nil {
		b.Fatal(err)
	}
	t1 := time.Now()
	// As indexchange.Apply: a database from the cache is not checked again.
	db, err := OpenWith(bld.DatabasePath(), OpenOptions{SkipQuickCheck: bld.FromCache()})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.Add(ctx, []LoadedBundle{{Bundle: bd, BundlePath: ref}}, AddOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Compact(ctx); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	t2 := time.Now()
	res, err := bld.Write(ctx, to)
	if err != nil {
		b.Fatal(err)
	}
	ph.fetch += t1.Sub(t0)
	ph.add += t2.Sub(t1)
	ph.write += time.Since(t2)
	return res
}
