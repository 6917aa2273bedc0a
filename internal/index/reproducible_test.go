package index

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// buildIndex creates a database in dir from the same bundles every time: an
// add, a removal and a compaction, as the image path does.
func buildIndex(t *testing.T, dir string) []byte {
	t.Helper()
	path := filepath.Join(dir, "index.db")
	db, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for _, pkg := range []string{"etcd", "skupper-operator", "aqua"} {
		if _, err := db.Add(ctx, corpusBundles(t, pkg), AddOptions{Mode: ciMode(t, pkg)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.RemovePackages(ctx, []string{"skupper-operator"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// nextSecond waits until the wall clock enters a new second, so that a
// clock-derived value would differ between two builds.
func nextSecond() {
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + 10*time.Millisecond).Sub(now))
}

func TestSameBundlesSameDatabaseBytes(t *testing.T) {
	needShared(t)
	t.Setenv("SOURCE_DATE_EPOCH", "")
	os.Unsetenv("SOURCE_DATE_EPOCH")
	a := buildIndex(t, t.TempDir())
	nextSecond()
	b := buildIndex(t, t.TempDir())
	if !bytes.Equal(a, b) {
		t.Fatalf("two builds of the same bundles differ: sha256 %x (%d bytes) vs %x (%d bytes)", sha256.Sum256(a), len(a), sha256.Sum256(b), len(b))
	}
}

func TestMigrationTimestamp(t *testing.T) {
	for _, c := range []struct{ env, want string }{
		{"", fixedTimestamp},
		{"1700000000", "2023-11-14 22:13:20"},
		{"not-a-number", fixedTimestamp},
		{"-5", fixedTimestamp},
	} {
		t.Run("epoch="+c.env, func(t *testing.T) {
			t.Setenv("SOURCE_DATE_EPOCH", c.env)
			db, path := newDB(t)
			db.Close()
			ref := openRef(t, path)
			var got string
			if err := ref.QueryRow(`SELECT CAST(timestamp AS TEXT) FROM schema_migrations`).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("SOURCE_DATE_EPOCH=%q: timestamp %q, want %q", c.env, got, c.want)
			}
		})
	}
}

func TestNewDatabaseMode(t *testing.T) {
	_, path := newDB(t)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Errorf("new database mode %v, want 0644", st.Mode().Perm())
	}
}
