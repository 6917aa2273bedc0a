package index

import (
	"context"
	"io"
	"testing"
)

// BenchmarkListBundles5000 lists every bundle row of the synthetic
// 5,000-bundle database (`alpha list bundles`).
func BenchmarkListBundles5000(b *testing.B) {
	db, err := OpenReadOnly(syntheticDB(b))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rows, err := db.ListBundles(context.Background(), "")
		if err != nil || len(rows) == 0 {
			b.Fatalf("%v, %d rows", err, len(rows))
		}
	}
	b.ReportMetric(float64(synthBundles), "bundles-in-db")
}

// BenchmarkRenderGraph5000 draws the mermaid graph of the synthetic database
// (`alpha render-graph`).
func BenchmarkRenderGraph5000(b *testing.B) {
	db, err := OpenReadOnly(syntheticDB(b))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := db.RenderGraph(context.Background(), io.Discard, GraphOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(synthBundles), "bundles-in-db")
}

// BenchmarkPruneTo1Of5000 keeps one package of a fresh copy of the synthetic
// database (`index prune -p`).
func BenchmarkPruneTo1Of5000(b *testing.B) {
	benchOnFreshCopy(b, func(db *DB) {
		res, err := db.Prune(context.Background(), []string{"etcd-c1"})
		if err != nil || len(res.Kept) != 1 {
			b.Fatalf("%v %+v", err, res)
		}
	})
}
