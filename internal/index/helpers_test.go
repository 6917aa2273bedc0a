package index

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/bundle"

	"github.com/opmkit/opm/internal/shareddata"
)

var (
	corpusDir    = shareddata.Path("corpus", "real")
	referenceDir = shareddata.Path("reference", "index")
)

// needShared skips when the reference indexes or the corpus are absent
// (fails under CI=true).
func needShared(t testing.TB) {
	t.Helper()
	shareddata.Require(t, "reference", "index", "README.md")
	shareddata.Require(t, "corpus", "real")
}

// corpusPackages lists the packages of the real corpus.
func corpusPackages(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// ciMode is the mode a package's ci.yaml names.
func ciMode(t testing.TB, pkg string) Mode {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpusDir, pkg, "ci.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "updateGraph:") && strings.Contains(l, "semver-mode") {
			return ModeSemver
		}
	}
	return ModeReplaces
}

var refsCache map[string]string

// bundleRef is the image reference upstream's reference run used for a
// bundle directory (bundle-refs.tsv), so bundlepath columns compare equal.
func bundleRef(t testing.TB, pkg, dir string) string {
	t.Helper()
	if refsCache == nil {
		refsCache = map[string]string{}
		f, err := os.Open(filepath.Join(referenceDir, "bundle-refs.tsv"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			parts := strings.Split(sc.Text(), "\t")
			if len(parts) >= 3 {
				refsCache[parts[0]+"/"+parts[1]] = parts[2]
			}
		}
	}
	ref, ok := refsCache[pkg+"/"+dir]
	if !ok {
		t.Fatalf("no reference for %s/%s", pkg, dir)
	}
	return ref
}

var loadCache = map[string][]LoadedBundle{}

// corpusBundles loads every bundle of a corpus package, with upstream's
// bundle references as paths.
func corpusBundles(t testing.TB, pkg string) []LoadedBundle {
	t.Helper()
	if lbs, ok := loadCache[pkg]; ok {
		return append([]LoadedBundle{}, lbs...)
	}
	entries, err := os.ReadDir(filepath.Join(corpusDir, pkg))
	if err != nil {
		t.Fatal(err)
	}
	var out []LoadedBundle
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		b, err := bundle.LoadDir(filepath.Join(corpusDir, pkg, e.Name()))
		if err != nil {
			t.Fatalf("load %s/%s: %v", pkg, e.Name(), err)
		}
		out = append(out, LoadedBundle{Bundle: b, BundlePath: bundleRef(t, pkg, e.Name())})
	}
	loadCache[pkg] = out
	return append([]LoadedBundle{}, out...)
}

func newDB(t testing.TB) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "index.db")
	db, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// openRef opens a reference database read-only, without touching its
// directory.
func openRef(t testing.TB, path string) *sql.DB {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+abs+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// snapshot is a database's content normalized for comparison: per table a
// sorted, de-duplicated list of rows; channel entries as graph edges.
type snapshot map[string][]string

var snapshotQueries = map[string]string{
	"package":  `SELECT name, IFNULL(default_channel, '<null>') FROM package`,
	"channel":  `SELECT package_name, name, head_operatorbundle_name FROM channel`,
	"members":  `SELECT DISTINCT package_name, channel_name, operatorbundle_name FROM channel_entry`,
	"edges":    `SELECT DISTINCT e.package_name, e.channel_name, e.operatorbundle_name, r.operatorbundle_name FROM channel_entry e JOIN channel_entry r ON r.entry_id = e.replaces`,
	"heads0":   `SELECT DISTINCT package_name, channel_name, operatorbundle_name FROM channel_entry WHERE depth = 0`,
	"bundle":   `SELECT name, IFNULL(bundlepath, '<null>'), IFNULL(skiprange, '<null>'), IFNULL(version, '<null>'), IFNULL(replaces, '<null>'), IFNULL(skips, '<null>'), IFNULL(substitutesfor, '<null>') FROM operatorbundle`,
	"api":      `SELECT group_name, version, kind, plural FROM api`,
	"provider": `SELECT group_name, version, kind, operatorbundle_name, operatorbundle_version, operatorbundle_path FROM api_provider`,
	"requirer": `SELECT group_name, version, kind, operatorbundle_name, operatorbundle_version, operatorbundle_path FROM api_requirer`,
	"image":    `SELECT image, operatorbundle_name FROM related_image`,
	"property": `SELECT DISTINCT type, CAST(value AS TEXT), operatorbundle_name, operatorbundle_version, operatorbundle_path FROM properties`,
	"dep":      `SELECT DISTINCT type, CAST(value AS TEXT), operatorbundle_name, operatorbundle_version, operatorbundle_path FROM dependencies`,
	"version":  `SELECT version FROM schema_migrations`,
	// csv and bundle where both are stored (upstream nulls them in semver
	// modes for non-head bundles): compared as text.
	"csv":     `SELECT name, CAST(csv AS TEXT) FROM operatorbundle WHERE csv IS NOT NULL`,
	"objects": `SELECT name, CAST(bundle AS TEXT) FROM operatorbundle WHERE bundle IS NOT NULL`,
}

func takeSnapshot(t testing.TB, db *sql.DB) snapshot {
	t.Helper()
	s := snapshot{}
	for k, q := range snapshotQueries {
		rows, err := db.QueryContext(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		cols, _ := rows.Columns()
		seen := map[string]bool{}
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, v := range vals {
				parts = append(parts, v.String)
			}
			line := strings.Join(parts, " | ")
			if !seen[line] {
				seen[line] = true
				s[k] = append(s[k], line)
			}
		}
		rows.Close()
		sort.Strings(s[k])
	}
	return s
}

// diffRows returns the rows only in a and only in b.
func diffRows(a, b []string) (onlyA, onlyB []string) {
	ma, mb := map[string]bool{}, map[string]bool{}
	for _, x := range a {
		ma[x] = true
	}
	for _, x := range b {
		mb[x] = true
	}
	for _, x := range a {
		if !mb[x] {
			onlyA = append(onlyA, x)
		}
	}
	for _, x := range b {
		if !ma[x] {
			onlyB = append(onlyB, x)
		}
	}
	return
}

func short(s string) string {
	if len(s) > 300 {
		return s[:300] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}

func openRW(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=1")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	return db
}
