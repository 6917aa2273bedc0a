package validate

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkValidateRealBundles validates real bundles in one process as
// `opm bundle validate DIR...` does, and reports the CPU each bundle costs
// (user+system of the whole process, every goroutine) and its manifest
// bytes: real catalogs carry large icons, descriptions and CRD schemas
// that renamed copies of a small corpus under-represent. The bundles are
// the shared corpus's real ones, or those under the directories in
// OPM_BENCH_BUNDLES (colon-separated; each a bundle directory or a tree
// holding them, such as a catalog repository's operators/). bench/validate-real.sh
// runs it with a CPU profile.
func BenchmarkValidateRealBundles(b *testing.B) {
	var dirs []string
	if env := os.Getenv("OPM_BENCH_BUNDLES"); env != "" {
		for _, root := range strings.Split(env, ":") {
			dirs = append(dirs, bundleDirsUnder(b, root)...)
		}
	} else {
		dirs = realBundles(b, sharedDir(b))
	}
	if len(dirs) == 0 {
		b.Fatal("no bundle directories (a bundle directory holds manifests/)")
	}
	var size int64
	for _, d := range dirs {
		_ = filepath.WalkDir(filepath.Join(d, "manifests"), func(_ string, e fs.DirEntry, err error) error {
			if err == nil && e.Type().IsRegular() {
				if info, err := e.Info(); err == nil {
					size += info.Size()
				}
			}
			return nil
		})
	}
	in := dirInputs(dirs)
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		Run(context.Background(), in, Options{})
	}
	b.StopTimer()
	perBundle := (cpuTime() - cpu0).Seconds() * 1000 / float64(b.N*len(dirs))
	b.ReportMetric(float64(len(dirs)), "bundles")
	b.ReportMetric(perBundle, "ms-CPU/bundle")
	b.ReportMetric(float64(size)/float64(len(dirs))/1024, "KB-manifests/bundle")
	b.ReportMetric(perBundle*1024*1024/(float64(size)/float64(len(dirs))), "ms-CPU/MB")
	b.ReportMetric(0, "ns/op")
}

// bundleDirsUnder lists the bundle directories (holding manifests/) at or
// under root.
func bundleDirsUnder(b *testing.B, root string) []string {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if st, err := os.Stat(filepath.Join(p, "manifests")); err == nil && st.IsDir() {
			dirs = append(dirs, p)
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return dirs
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
