package bundle

import (
	"path/filepath"
	"testing"

	"github.com/opmkit/opm/internal/shareddata"
)

func corpusBundles(tb testing.TB) []string {
	dirs, _ := filepath.Glob(filepath.Join(shareddata.Require(tb, "corpus", "real"), "*", "*"))
	var out []string
	for _, d := range dirs {
		if isDirPath(d) {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		tb.Fatal("../shared/corpus/real holds no bundle directories")
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
