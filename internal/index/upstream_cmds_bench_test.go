package index

import (
	"context"
	"testing"
)

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
