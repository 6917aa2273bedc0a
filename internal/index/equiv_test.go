package index

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEquivalenceWithUpstream loads each corpus package, in every mode for
// which upstream kept a database, and compares normalized content.
func TestEquivalenceWithUpstream(t *testing.T) {
	needShared(t)
	for _, pkg := range corpusPackages(t) {
		for _, mode := range []Mode{ModeReplaces, ModeSemver, ModeSemverSkipPatch} {
			ref := filepath.Join(referenceDir, pkg+"."+string(mode)+".db")
			if _, err := os.Stat(ref); err != nil {
				continue
			}
			stable := ciMode(t, pkg) == mode
			t.Run(pkg+"/"+string(mode), func(t *testing.T) {
				db, _ := newDB(t)
				res, err := db.Add(context.Background(), corpusBundles(t, pkg), AddOptions{Mode: mode})
				if err != nil {
					t.Fatalf("add: %v", err)
				}
				for _, w := range res.Warnings {
					t.Logf("warning: %s", w)
				}
				got := takeSnapshot(t, db.sql)
				want := takeSnapshot(t, openRef(t, ref))
				for _, table := range []string{"version", "package", "channel", "members", "edges", "heads0", "bundle", "api", "provider", "requirer", "image", "property", "dep", "csv", "objects"} {
					onlyGot, onlyWant := diffRows(got[table], want[table])
					if table == "csv" || table == "objects" {
						// Upstream nulls non-heads in semver modes: compare
						// only the bundles upstream kept.
						onlyGot = keepNames(onlyGot, want[table])
					}
					if len(onlyGot)+len(onlyWant) == 0 {
						continue
					}
					report := t.Errorf
					if !stable && (table == "package" || table == "channel" || table == "members" || table == "edges" || table == "heads0") {
						report = t.Logf // one random sample of upstream's
					}
					for _, r := range onlyGot {
						report("%s: only ours:     %s", table, short(r))
					}
					for _, r := range onlyWant {
						report("%s: only upstream: %s", table, short(r))
					}
				}
			})
		}
	}
}

// keepNames keeps the rows whose first column names a bundle of ref.
func keepNames(rows, ref []string) []string {
	names := map[string]bool{}
	for _, r := range ref {
		names[strings.SplitN(r, " | ", 2)[0]] = true
	}
	var out []string
	for _, r := range rows {
		if names[strings.SplitN(r, " | ", 2)[0]] {
			out = append(out, r)
		}
	}
	return out
}
