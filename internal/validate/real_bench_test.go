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

	"github.com/opmkit/opm/internal/bundle"
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

// BenchmarkRuleSetsRealBundles splits what one bundle of the shared corpus
// costs into loading it and running the rules, with the default set and
// with every set selected, so that the cost of the opt-in sets is
// measured apart from loading (which does not depend on the selection):
// issue 28 wants a run with every set at most 1.5 times the default's.
// bench/validate-real.sh prints the whole-process figures.
func BenchmarkRuleSetsRealBundles(b *testing.B) {
	dirs := realBundles(b, sharedDir(b))
	loaded := make([]*bundle.Bundle, len(dirs))
	errs := make([]error, len(dirs))
	b.Run("load", func(b *testing.B) {
		for range b.N {
			for i, d := range dirs {
				loaded[i], errs[i] = bundle.LoadDir(d)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(dirs)), "µs/bundle")
		b.ReportMetric(0, "ns/op")
	})
	all := []string{SetDefault}
	for _, s := range Sets {
		if s != SetDefault {
			all = append(all, s)
		}
	}
	for _, sel := range []struct {
		name string
		opts Options
	}{{"check-default", Options{}}, {"check-every-set", Options{Select: all}}} {
		b.Run(sel.name, func(b *testing.B) {
			for range b.N {
				for i, d := range dirs {
					Check(d, loaded[i], errs[i], sel.opts)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(dirs)), "µs/bundle")
			b.ReportMetric(0, "ns/op")
		})
	}
}
