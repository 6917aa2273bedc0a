package bundle

import (
	"path/filepath"
	"testing"
)

func corpusBundles(tb testing.TB) []string {
	dirs, _ := filepath.Glob("../../../shared/corpus/real/*/*")
	var out []string
	for _, d := range dirs {
		if isDirPath(d) {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		tb.Skip("../shared/corpus/real not present: skipping corpus benchmark")
	}
	return out
}

func BenchmarkLoadCorpus(b *testing.B) {
	dirs := corpusBundles(b)
	b.ResetTimer()
	for range b.N {
		for _, d := range dirs {
			if _, err := LoadDir(d); err != nil {
				b.Fatal(err)
			}
		}
	}
}
