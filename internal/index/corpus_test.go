package index

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
)

// TestWholeCorpusOneDatabase loads every corpus package, each in the mode its
// ci.yaml names, into one database.
func TestWholeCorpusOneDatabase(t *testing.T) {
	needShared(t)
	db, _ := newDB(t)
	ctx := context.Background()
	total := 0
	for _, pkg := range corpusPackages(t) {
		lbs := corpusBundles(t, pkg)
		mode := ciMode(t, pkg)
		res, err := db.Add(ctx, lbs, AddOptions{Mode: mode})
		if pkg == "community-windows-machine-config-operator" {
			// Upstream refused it too: seven bundles of channel preview
			// are reachable only through olm.skipRange.
			if !errors.Is(err, ErrPrune) {
				t.Fatalf("%s: want a prune error, got %v", pkg, err)
			}
			for _, e := range Errors(err) {
				t.Logf("%s: %v", pkg, e)
			}
			res, err = db.Add(ctx, lbs, AddOptions{Mode: mode, Permissive: true})
			if err != nil {
				t.Fatalf("%s permissive: %v", pkg, err)
			}
			var skipped []string
			for _, s := range res.Skipped {
				skipped = append(skipped, strings.TrimPrefix(s.Bundle.Name, pkg+".")+"")
				if !errors.Is(s.Reason, ErrPrune) {
					t.Errorf("skipped %s for %v, want a prune error", s.Bundle.Name, s.Reason)
				}
			}
			sort.Strings(skipped)
			if got, want := strings.Join(skipped, " "), "v2.0.0 v2.0.1 v2.0.2 v3.0.0 v3.1.0 v3.1.1 v4.0.1"; got != want {
				t.Errorf("skipped %s, want %s", got, want)
			}
		} else if err != nil {
			t.Fatalf("%s (%s): %v", pkg, mode, err)
		}
		for _, w := range res.Warnings {
			t.Logf("%s: warning: %s", pkg, w)
		}
		total += len(res.Added)
	}
	if total != 181-7 {
		t.Errorf("added %d bundles, want %d", total, 181-7)
	}
	idx, err := db.Inspect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.Packages) != 13 {
		t.Errorf("%d packages, want 13", len(idx.Packages))
	}
	for _, p := range idx.Packages {
		if p.DefaultChannel == "" {
			t.Errorf("package %s has no default channel", p.Name)
		}
	}
}
