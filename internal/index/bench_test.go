package index

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if synthDir != "" {
		os.RemoveAll(synthDir)
	}
	for _, d := range largeDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// resetPeakRSS returns what the set-up freed to the system and restarts the
// kernel's count of peak RSS (VmHWM) from the current RSS, so that a later
// vmStatus("VmHWM") covers only what ran since. It returns that RSS in MB.
func resetPeakRSS(b *testing.B) float64 {
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Logf("peak RSS not reset (%v): the figure includes the set-up", err)
	}
	return vmStatus("VmRSS")
}

// vmStatus reads a memory figure of this process from /proc/self/status,
// in MB (0 where there is none).
func vmStatus(key string) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			var kb float64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%f kB", &kb); err == nil {
				return kb / 1024
			}
		}
	}
	return 0
}

func reportMaxRSS(b *testing.B) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB")
	}
}

// loadCorpusInto adds every corpus package in its ci.yaml mode.
func loadCorpusInto(b testing.TB, db *DB, bundles map[string][]LoadedBundle) int {
	n := 0
	for _, pkg := range corpusPackages(b) {
		res, err := db.Add(context.Background(), bundles[pkg], AddOptions{Mode: ciMode(b, pkg), Permissive: true})
		if err != nil {
			b.Fatal(err)
		}
		n += len(res.Added)
	}
	return n
}

// BenchmarkLoadCorpus: the 181 real bundles (parsed beforehand) into an
// empty database, one Add per package.
func BenchmarkLoadCorpus(b *testing.B) {
	needShared(b)
	bundles := map[string][]LoadedBundle{}
	for _, pkg := range corpusPackages(b) {
		bundles[pkg] = corpusBundles(b, pkg)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, _ := newDB(b)
		b.StartTimer()
		if n := loadCorpusInto(b, db, bundles); n != 174 {
			b.Fatalf("added %d", n)
		}
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
	reportMaxRSS(b)
}

// BenchmarkLoadCorpusFromDisk is BenchmarkLoadCorpus with parsing the bundle
// directories included.
func BenchmarkLoadCorpusFromDisk(b *testing.B) {
	needShared(b)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, _ := newDB(b)
		loadCache = map[string][]LoadedBundle{}
		b.StartTimer()
		bundles := map[string][]LoadedBundle{}
		for _, pkg := range corpusPackages(b) {
			bundles[pkg] = corpusBundles(b, pkg)
		}
		loadCorpusInto(b, db, bundles)
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
	reportMaxRSS(b)
}

// The synthetic database: copies of the corpus under renamed packages (every
// string of a bundle's rows renamed, so names, APIs and images are distinct),
// until it holds at least 5,000 bundles. Built once per process.
var (
	synthOnce    sync.Once
	synthDir     string
	synthPath    string
	synthBundles int
	synthErr     error
)

const synthTarget = 5000

func syntheticDB(b *testing.B) string {
	needShared(b)
	synthOnce.Do(func() {
		start := time.Now()
		synthDir, synthErr = os.MkdirTemp("", "opm-index-bench-")
		if synthErr != nil {
			return
		}
		synthPath = filepath.Join(synthDir, "index.db")
		db, err := Create(synthPath)
		if err != nil {
			synthErr = err
			return
		}
		defer db.Close()
		parsed := map[string][]*rows{}
		for _, pkg := range corpusPackages(b) {
			for _, lb := range corpusBundles(b, pkg) {
				r, e := bundleRows(lb)
				if e != nil {
					synthErr = e
					return
				}
				parsed[pkg] = append(parsed[pkg], r)
			}
		}
		for c := 1; synthBundles < synthTarget; c++ {
			for _, pkg := range corpusPackages(b) {
				var rs []*rows
				for _, r := range parsed[pkg] {
					rs = append(rs, renameRows(r, pkg, fmt.Sprintf("%s-c%d", pkg, c)))
				}
				res, err := db.addRows(context.Background(), rs, &AddResult{}, nil, AddOptions{Mode: ciMode(b, pkg), Permissive: true})
				if err != nil {
					synthErr = err
					return
				}
				synthBundles += len(res.Added)
			}
		}
		b.Logf("synthetic database: %d bundles, built in %s", synthBundles, time.Since(start).Round(time.Millisecond))
	})
	if synthErr != nil {
		b.Fatal(synthErr)
	}
	return synthPath
}

func renameRows(r *rows, from, to string) *rows {
	s := func(x string) string { return strings.ReplaceAll(x, from, to) }
	c := *r
	c.Name, c.Package, c.Replaces, c.Path, c.Default = s(r.Name), to, s(r.Replaces), s(r.Path)+"-"+to, r.Default
	c.Skips = nil
	for _, k := range r.Skips {
		c.Skips = append(c.Skips, s(k))
	}
	c.CSV = bytes.ReplaceAll(r.CSV, []byte(from), []byte(to))
	c.Objects = bytes.ReplaceAll(r.Objects, []byte(from), []byte(to))
	c.Images = nil
	for _, im := range r.Images {
		c.Images = append(c.Images, s(im))
	}
	c.Provided, c.Required = nil, nil
	for _, a := range r.Provided {
		c.Provided = append(c.Provided, apiKey{s(a.Group), a.Version, a.Kind, a.Plural})
	}
	for _, a := range r.Required {
		c.Required = append(c.Required, apiKey{s(a.Group), a.Version, a.Kind, a.Plural})
	}
	c.Properties, c.Deps = nil, nil
	for _, p := range r.Properties {
		c.Properties = append(c.Properties, typedValue{p.Type, bytes.ReplaceAll(p.Value, []byte(from), []byte(to))})
	}
	for _, p := range r.Deps {
		c.Deps = append(c.Deps, typedValue{p.Type, bytes.ReplaceAll(p.Value, []byte(from), []byte(to))})
	}
	return &c
}

// The add benchmark's bundles chain on across its runs (b.N grows).
var (
	benchSeq  int
	benchPrev string
)

// BenchmarkAddOneBundleTo5000: one new head for a copy of skupper-operator
// (15 bundles, 7 channels) in the synthetic database.
func BenchmarkAddOneBundleTo5000(b *testing.B) {
	path := syntheticDB(b)
	db, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	pkg := "skupper-operator-c1"
	if benchPrev == "" {
		benchPrev = pkg + ".v1.9.6"
	}
	bundles := make([]LoadedBundle, b.N)
	for i := range bundles {
		v := fmt.Sprintf("2.0.%d", benchSeq)
		benchSeq++
		bundles[i] = spec{pkg: pkg, version: v, replaces: benchPrev, channels: "stable,stable-1"}.load(b)
		benchPrev = pkg + ".v" + v
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := db.Add(context.Background(), bundles[i:i+1], AddOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(synthBundles), "bundles-in-db")
	reportMaxRSS(b)
}

// BenchmarkRemovePackageFrom5000 removes one copy of skupper-operator from a
// fresh copy of the synthetic database.
func BenchmarkRemovePackageFrom5000(b *testing.B) {
	benchOnFreshCopy(b, func(db *DB) {
		res, err := db.RemovePackages(context.Background(), []string{"skupper-operator-c2"})
		if err != nil || len(res.Removed) != 15 {
			b.Fatalf("%v %+v", err, res)
		}
	})
}

// benchOnFreshCopy times op, each iteration on a fresh copy of the
// synthetic database (the copy and open are not timed).
func benchOnFreshCopy(b *testing.B, op func(*DB)) {
	path := syntheticDB(b)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cp := filepath.Join(b.TempDir(), "index.db")
		copyFile(b, path, cp)
		db, err := Open(cp)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		op(db)
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(synthBundles), "bundles-in-db")
	reportMaxRSS(b)
}
