package registry

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/index"
)

// source is one reference database to copy and the package it holds.
type source struct{ db, pkg string }

// referenceSources lists one reference database per package, in the mode
// upstream built deterministically where there is a choice.
func referenceSources(t testing.TB) []source {
	t.Helper()
	dir := filepath.Join(sharedDir(t), "reference", "index")
	var out []source
	seen := map[string]bool{}
	for _, mode := range []string{"replaces", "semver", "semver-skippatch"} {
		files, err := filepath.Glob(filepath.Join(dir, "*."+mode+".db"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			pkg := strings.TrimSuffix(filepath.Base(f), "."+mode+".db")
			if !seen[pkg] {
				seen[pkg] = true
				out = append(out, source{f, pkg})
			}
		}
	}
	return out
}

// mergeCopies writes a database at path holding copies of the sources: copy
// c of package P is package "P-c<c>", every string naming P renamed (bundle
// names, paths, manifests, property values, and API groups that contain the
// name), until it holds at least minBundles bundles (one copy of each source
// at least). It returns the number of bundles.
func mergeCopies(t testing.TB, path string, sources []source, minBundles int) int {
	t.Helper()
	idx, err := index.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	idx.Close()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`PRAGMA journal_mode = OFF`)
	exec(`PRAGMA synchronous = OFF`)
	perCopy := 0
	for _, s := range sources {
		var n int
		src, err := sql.Open("sqlite3", "file:"+s.db+"?mode=ro&immutable=1")
		if err != nil {
			t.Fatal(err)
		}
		err = src.QueryRow(`SELECT COUNT(*) FROM operatorbundle`).Scan(&n)
		src.Close()
		if err != nil {
			t.Fatal(err)
		}
		perCopy += n
	}
	copies := max(1, (minBundles+perCopy-1)/perCopy)
	// Sources outer, copies inner: a database attaches and detaches outside
	// a transaction.
	for _, s := range sources {
		exec(`ATTACH DATABASE ? AS src`, "file:"+s.db+"?mode=ro&immutable=1")
		exec(`BEGIN`)
		for c := 1; c <= copies; c++ {
			to := fmt.Sprintf("%s-c%d", s.pkg, c)
			var off int64
			if err := db.QueryRow(`SELECT COALESCE(MAX(entry_id), 0) FROM main.channel_entry`).Scan(&off); err != nil {
				t.Fatal(err)
			}
			r := func(col string) string { return fmt.Sprintf("replace(%s, '%s', '%s')", col, s.pkg, to) }
			exec(`INSERT OR IGNORE INTO main.api SELECT ` + r("group_name") + `, version, kind, plural FROM src.api`)
			exec(`INSERT INTO main.operatorbundle SELECT ` + strings.Join([]string{r("name"), r("csv"), r("bundle"), r("bundlepath"), "skiprange", "version", r("replaces"), r("skips"), r("substitutesfor")}, ", ") + ` FROM src.operatorbundle`)
			exec(`INSERT INTO main.package SELECT ` + r("name") + `, default_channel FROM src.package`)
			exec(`INSERT INTO main.channel SELECT name, ` + r("package_name") + `, ` + r("head_operatorbundle_name") + ` FROM src.channel`)
			exec(`INSERT INTO main.channel_entry SELECT entry_id + ?, channel_name, `+r("package_name")+`, `+r("operatorbundle_name")+`, replaces + ?, depth FROM src.channel_entry`, off, off)
			exec(`INSERT INTO main.related_image SELECT ` + r("image") + `, ` + r("operatorbundle_name") + ` FROM src.related_image`)
			for _, tbl := range []string{"api_provider", "api_requirer"} {
				exec(`INSERT INTO main.` + tbl + ` SELECT ` + r("group_name") + `, version, kind, ` + r("operatorbundle_name") + `, operatorbundle_version, ` + r("operatorbundle_path") + ` FROM src.` + tbl)
			}
			for _, tbl := range []string{"properties", "dependencies"} {
				exec(`INSERT INTO main.` + tbl + ` SELECT type, ` + r("value") + `, ` + r("operatorbundle_name") + `, operatorbundle_version, ` + r("operatorbundle_path") + ` FROM src.` + tbl)
			}
			exec(`INSERT INTO main.deprecated SELECT ` + r("operatorbundle_name") + ` FROM src.deprecated`)
		}
		exec(`COMMIT`)
		exec(`DETACH DATABASE src`)
	}
	var bundles int
	if err := db.QueryRow(`SELECT COUNT(*) FROM operatorbundle`).Scan(&bundles); err != nil {
		t.Fatal(err)
	}
	return bundles
}
