package fbc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opmkit/opm/internal/validate"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if synthDir != "" {
		os.RemoveAll(synthDir)
	}
	os.Exit(code)
}

// The synthetic catalog: upstream's renders of the reference packages,
// copied under renamed packages (every occurrence of the package name
// replaced, so packages, bundle names and images are distinct) until it
// holds at least 5,000 bundles; written once per process as a catalog
// directory and as an index database.
var (
	synthOnce sync.Once
	synthDir  string
	synthCat  *Catalog
	synthErr  error
)

const synthTarget = 5000

func syntheticCatalog(b *testing.B) (*Catalog, string, string) {
	synthOnce.Do(func() {
		start := time.Now()
		byPkg := map[string][]byte{}
		for _, db := range referenceDBs(b) {
			pkg := strings.SplitN(filepath.Base(db), ".", 2)[0]
			if _, ok := byPkg[pkg]; ok {
				continue
			}
			data, err := os.ReadFile(strings.TrimSuffix(db, ".db") + ".fbc.json")
			if err != nil {
				synthErr = err
				return
			}
			byPkg[pkg] = data
		}
		synthCat = &Catalog{}
		for c := 1; len(synthCat.Bundles) < synthTarget; c++ {
			for pkg, data := range byPkg {
				renamed := bytes.ReplaceAll(data, []byte(pkg), []byte(fmt.Sprintf("%s-c%d", pkg, c)))
				if err := synthCat.LoadFile(pkg+".json", renamed); err != nil {
					synthErr = err
					return
				}
			}
		}
		if synthDir, synthErr = os.MkdirTemp("", "opm-fbc-bench-"); synthErr != nil {
			return
		}
		if synthErr = WriteDir(filepath.Join(synthDir, "catalog"), synthCat, WriteDirOptions{}); synthErr != nil {
			return
		}
		synthErr = ToIndex(context.Background(), synthCat, filepath.Join(synthDir, "index.db"), ToIndexOptions{})
		var size int64
		_ = filepath.WalkDir(synthDir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
				if st, err := d.Info(); err == nil {
					size += st.Size()
				}
			}
			return nil
		})
		b.Logf("synthetic catalog: %d packages, %d bundles, %.0f MB of JSON, built in %s", len(synthCat.Packages), len(synthCat.Bundles), float64(size)/1e6, time.Since(start).Round(time.Millisecond))
	})
	if synthErr != nil {
		b.Fatal(synthErr)
	}
	return synthCat, filepath.Join(synthDir, "catalog"), filepath.Join(synthDir, "index.db")
}

// BenchmarkLoad5000 loads the catalog directory (one catalog.json per package).
func BenchmarkLoad5000(b *testing.B) {
	cat, dir, _ := syntheticCatalog(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := LoadDir(dir)
		if err != nil || len(c.Bundles) != len(cat.Bundles) {
			b.Fatalf("loaded %d bundles: %v", len(c.Bundles), err)
		}
	}
	b.ReportMetric(float64(len(cat.Bundles)), "bundles")
}

// BenchmarkWriteJSON5000 writes the catalog as upstream prints it.
func BenchmarkWriteJSON5000(b *testing.B) {
	cat, _, _ := syntheticCatalog(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := Write(io.Discard, cat, FormatJSON); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFromIndex5000 renders the 5,000-bundle index database.
func BenchmarkFromIndex5000(b *testing.B) {
	cat, _, dbPath := syntheticCatalog(b)
	db := openRO(b, dbPath)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, _, err := FromIndex(context.Background(), db, RenderOptions{})
		if err != nil || len(c.Bundles) != len(cat.Bundles) {
			b.Fatalf("rendered %d bundles: %v", len(c.Bundles), err)
		}
	}
}

// BenchmarkToIndex5000 converts the catalog to a new index database.
func BenchmarkToIndex5000(b *testing.B) {
	cat, _, _ := syntheticCatalog(b)
	dir := b.TempDir()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := ToIndex(context.Background(), cat, filepath.Join(dir, fmt.Sprintf("index-%d.db", i)), ToIndexOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidate5000 validates the catalog.
func BenchmarkValidate5000(b *testing.B) {
	cat, _, _ := syntheticCatalog(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if fs := Validate(cat); hasErrors(fs) {
			b.Fatalf("findings: %v", fs[0])
		}
	}
}

func hasErrors(fs []validate.Finding) bool {
	for _, f := range fs {
		if f.Severity == validate.Error {
			return true
		}
	}
	return false
}

// The package-at-a-time paths the commands take (see stream_test.go for
// their equality with the whole-catalog ones). The heap they need follows
// the largest package: bench/fbc-scale.sh reports the commands' peak RSS.

// BenchmarkEachIndexPackage5000 renders the database a package at a time
// to a Writer (opm render DB).
func BenchmarkEachIndexPackage5000(b *testing.B) {
	_, _, dbPath := syntheticCatalog(b)
	db := openRO(b, dbPath)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w, err := NewWriter(io.Discard, FormatJSON)
		if err != nil {
			b.Fatal(err)
		}
		if err := EachIndexPackage(context.Background(), db, RenderOptions{}, func(c *Catalog, _ []string) error { return w.Add(c) }); err != nil {
			b.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDirToIndex5000 converts the catalog directory a package at a
// time (opm migrate --to sqlite, opm serve's cache).
func BenchmarkDirToIndex5000(b *testing.B) {
	cat, dir, _ := syntheticCatalog(b)
	out := b.TempDir()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n, err := DirToIndex(context.Background(), dir, filepath.Join(out, fmt.Sprintf("index-%d.db", i)), ToIndexOptions{}, LoadOptions{})
		if err != nil || n.Bundles != len(cat.Bundles) {
			b.Fatalf("converted %d bundles: %v", n.Bundles, err)
		}
	}
}

// BenchmarkValidateDir5000 validates the catalog directory a package at a
// time (opm validate).
func BenchmarkValidateDir5000(b *testing.B) {
	_, dir, _ := syntheticCatalog(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fs, err := ValidateDir(context.Background(), dir, false, LoadOptions{})
		if err != nil || hasErrors(fs) {
			b.Fatalf("findings: %v, %v", fs, err)
		}
	}
}
