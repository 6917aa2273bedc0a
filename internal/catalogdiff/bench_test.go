package catalogdiff

import (
	"os"
	"testing"

	"github.com/opmkit/opm/internal/fbc"
)

// BenchmarkDiffDirs loads and compares two catalog directories named by
// OPM_BENCH_DIFF_OLD and OPM_BENCH_DIFF_NEW (bench/diff-scale.sh with KEEP=1
// leaves a pair: catalog/ and modified/), reporting the load and the
// comparison apart.
func BenchmarkDiffDirs(b *testing.B) {
	oldDir, newDir := os.Getenv("OPM_BENCH_DIFF_OLD"), os.Getenv("OPM_BENCH_DIFF_NEW")
	if oldDir == "" || newDir == "" {
		b.Skip("set OPM_BENCH_DIFF_OLD and OPM_BENCH_DIFF_NEW to two catalog directories")
	}
	b.Run("load", func(b *testing.B) {
		for b.Loop() {
			if _, err := fbc.LoadDir(oldDir); err != nil {
				b.Fatal(err)
			}
		}
	})
	o, err := fbc.LoadDir(oldDir)
	if err != nil {
		b.Fatal(err)
	}
	n, err := fbc.LoadDir(newDir)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("compare", func(b *testing.B) {
		for b.Loop() {
			if _, err := Diff(o, n, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
