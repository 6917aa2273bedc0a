package index

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// growTarget is the size the large database of BenchmarkDatabaseAdd grows
// to: OPM_BENCH_DB_SIZE bytes (e.g. 1073741824), default 256 MiB.
func growTarget() int64 {
	if v, err := strconv.ParseInt(os.Getenv("OPM_BENCH_DB_SIZE"), 10, 64); err == nil && v > 0 {
		return v
	}
	return 256 << 20
}

// doubleDB copies every package of the database under new names (suffix
// "-dN") with SQL alone, doubling its size in seconds rather than the
// minutes that adding bundles takes.
func doubleDB(path string, gen int) error {
	sdb, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=0")
	if err != nil {
		return err
	}
	defer sdb.Close()
	sdb.SetMaxOpenConns(1)
	s := fmt.Sprintf("-d%d", gen)
	var off int64
	if err := sdb.QueryRow(`SELECT IFNULL(MAX(entry_id), 0) FROM channel_entry`).Scan(&off); err != nil {
		return err
	}
	stmts := []string{
		`INSERT INTO operatorbundle SELECT name||?1, csv, bundle, bundlepath||?1, skiprange, version, CASE WHEN replaces IS NULL OR replaces = '' THEN replaces ELSE replaces||?1 END, skips, substitutesfor FROM operatorbundle WHERE name NOT LIKE '%-d' || ?2 || '%'`,
		`INSERT INTO package SELECT name||?1, default_channel FROM package WHERE name NOT LIKE '%-d' || ?2 || '%'`,
		`INSERT INTO channel SELECT name, package_name||?1, head_operatorbundle_name||?1 FROM channel WHERE package_name NOT LIKE '%-d' || ?2 || '%'`,
		`INSERT INTO channel_entry SELECT entry_id+?3, channel_name, package_name||?1, operatorbundle_name||?1, replaces+?3, depth FROM channel_entry WHERE entry_id <= ?3`,
		`INSERT INTO related_image SELECT image, operatorbundle_name||?1 FROM related_image WHERE operatorbundle_name NOT LIKE '%-d' || ?2 || '%'`,
		`INSERT INTO api_provider SELECT group_name, version, kind, operatorbundle_name||?1, operatorbundle_version, operatorbundle_path||?1 FROM api_provider WHERE operatorbundle_name NOT LIKE '%-d' || ?2 || '%'`,
		`INSERT INTO api_requirer SELECT group_name, version, kind, operatorbundle_name||?1, operatorbundle_version, operatorbundle_path||?1 FROM api_requirer WHERE operatorbundle_name NOT LIKE '%-d' || ?2 || '%'`,
		`INSERT INTO dependencies SELECT type, value, operatorbundle_name||?1, operatorbundle_version, operatorbundle_path||?1 FROM dependencies WHERE operatorbundle_name NOT LIKE '%-d' || ?2 || '%'`,
		`INSERT INTO properties SELECT type, value, operatorbundle_name||?1, operatorbundle_version, operatorbundle_path||?1 FROM properties WHERE operatorbundle_name NOT LIKE '%-d' || ?2 || '%'`,
		`INSERT INTO deprecated SELECT operatorbundle_name||?1 FROM deprecated WHERE operatorbundle_name NOT LIKE '%-d' || ?2 || '%'`,
	}
	tx, err := sdb.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, q := range stmts {
		// ?2 is a generation that does not exist yet: every row is copied.
		if _, err := tx.Exec(q, s, strconv.Itoa(gen+1000), off); err != nil {
			return fmt.Errorf("%s: %w", q[:40], err)
		}
	}
	return tx.Commit()
}

var largeDB struct {
	path    string
	bundles int
	size    int64
}

// largeSyntheticDB grows a copy of the synthetic database by doubling until
// it reaches growTarget.
func largeSyntheticDB(b *testing.B) string {
	if largeDB.path != "" {
		return largeDB.path
	}
	dir, err := os.MkdirTemp("", "opm-index-large-")
	if err != nil {
		b.Fatal(err)
	}
	largeDirs = append(largeDirs, dir)
	// OPM_BENCH_DB_KEEP names a file that keeps the grown database between
	// runs (it takes a minute to build); each run adds to a copy of it.
	keep := os.Getenv("OPM_BENCH_DB_KEEP")
	if keep != "" {
		if st, err := os.Stat(keep); err == nil && st.Size() >= growTarget() {
			path := filepath.Join(dir, "index.db")
			copyFile(b, keep, path)
			largeDB.path, largeDB.size = path, st.Size()
			return path
		}
	}
	src := syntheticDB(b)
	path := filepath.Join(dir, "index.db")
	copyFile(b, src, path)
	start := time.Now()
	for gen := 1; ; gen++ {
		st, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		if st.Size() >= growTarget() {
			largeDB.size = st.Size()
			break
		}
		if err := doubleDB(path, gen); err != nil {
			b.Fatal(err)
		}
	}
	ref := openRef(b, path)
	if err := ref.QueryRow(`SELECT COUNT(*) FROM operatorbundle`).Scan(&largeDB.bundles); err != nil {
		b.Fatal(err)
	}
	b.Logf("large database: %d bundles, %d MiB, grown in %s", largeDB.bundles, largeDB.size>>20, time.Since(start).Round(time.Millisecond))
	if keep != "" {
		copyFile(b, path, keep)
	}
	largeDB.path = path
	return path
}

var largeDirs []string

// BenchmarkDatabaseAdd is `opm index add --database` of one new bundle, minus
// process start and bundle loading: open the file (with its checks), add,
// close. "empty" adds into a new database, "large" into the synthetic one
// grown to OPM_BENCH_DB_SIZE. Each iteration adds a new version to the same
// package, so the package grows by b.N bundles in both.
//
// "samepkg" adds each bundle as a new version of one package (from the
// second add on, an existing package is rebuilt); "newpkg" adds each to a
// package of its own. Both open with OpenOptions.SkipQuickCheck; "check"
// is samepkg opened with Open (whole-file quick_check).
func BenchmarkDatabaseAdd(b *testing.B) {
	for _, run := range []string{"empty/samepkg", "large/samepkg", "empty/newpkg", "large/newpkg", "empty/check", "large/check"} {
		which, kind := path.Dir(run), path.Base(run)
		check := kind == "check"
		b.Run(run, func(b *testing.B) {
			var dbPath string
			if which == "empty" {
				dbPath = filepath.Join(b.TempDir(), "index.db")
				db, err := Create(dbPath)
				if err != nil {
					b.Fatal(err)
				}
				db.Close()
			} else {
				dbPath = largeSyntheticDB(b)
			}
			pkg := fmt.Sprintf("bench-add-%d", time.Now().UnixNano())
			bundles := make([]LoadedBundle, b.N)
			prev := ""
			for i := range bundles {
				v := fmt.Sprintf("1.0.%d", i)
				if kind == "newpkg" {
					bundles[i] = spec{pkg: fmt.Sprintf("%s-%d", pkg, i), version: v, channels: "stable"}.load(b)
					continue
				}
				bundles[i] = spec{pkg: pkg, version: v, replaces: prev, channels: "stable"}.load(b)
				prev = pkg + ".v" + v
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				db, err := OpenWith(dbPath, OpenOptions{SkipQuickCheck: !check})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := db.Add(context.Background(), bundles[i:i+1], AddOptions{}); err != nil {
					b.Fatal(err)
				}
				if err := db.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			st, _ := os.Stat(dbPath)
			b.ReportMetric(float64(st.Size())/(1<<20), "db-MiB")
			reportMaxRSS(b)
		})
	}
}
