package index

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/bundle"
)

// loadFixtures loads bundle directories of testdata/messages.
func loadFixtures(t *testing.T, dirs ...string) []LoadedBundle {
	t.Helper()
	var out []LoadedBundle
	for _, d := range dirs {
		p := filepath.Join("testdata", "messages", d)
		b, err := bundle.LoadDir(p)
		if err != nil {
			t.Fatalf("load %s: %v", p, err)
		}
		out = append(out, LoadedBundle{Bundle: b, BundlePath: p, Local: true})
	}
	return out
}

func addFixtures(t *testing.T, opts AddOptions, dirs ...string) (*AddResult, error) {
	t.Helper()
	db, _ := newDB(t)
	return db.Add(context.Background(), loadFixtures(t, dirs...), opts)
}

func TestAddMessagesNameTheWrongType(t *testing.T) {
	for _, tc := range []struct{ dir, want, not string }{
		{"version-map", "spec.version is a mapping, not a string", "is empty"},
		{"name-number", "metadata.name is a number (123), not a string", "has no metadata.name"},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			_, err := addFixtures(t, AddOptions{}, tc.dir)
			if !errors.Is(err, ErrInvalidBundle) {
				t.Fatalf("want an invalid-bundle error, got %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tc.not) {
				t.Errorf("got %q, want %q and not %q", err, tc.want, tc.not)
			}
		})
	}
}

func TestReplacesModeWithoutReplacesIsOneErrorWithTheHint(t *testing.T) {
	_, err := addFixtures(t, AddOptions{}, "no-replaces/v1", "no-replaces/v2", "no-replaces/v3", "no-replaces/v4")
	errs := Errors(err)
	if len(errs) != 1 {
		t.Fatalf("want one error, got %d: %v", len(errs), err)
	}
	if !errors.Is(err, ErrTwoHeads) || !strings.Contains(err.Error(), "--mode semver") || !strings.Contains(err.Error(), "stable (4 bundles)") {
		t.Errorf("got %v", err)
	}
	// The hint is right: semver mode adds them.
	res, err := addFixtures(t, AddOptions{Mode: ModeSemver}, "no-replaces/v1", "no-replaces/v2", "no-replaces/v3", "no-replaces/v4")
	if err != nil || len(res.Added) != 4 {
		t.Fatalf("semver mode: %v", err)
	}
}

func TestPackageWithTwoProblemsShowsBoth(t *testing.T) {
	_, err := addFixtures(t, AddOptions{}, "two-problems/v1", "two-problems/v2", "two-problems/v3")
	msg := err.Error()
	if !errors.Is(err, ErrBadVersion) {
		t.Errorf("the bad version of tools.v1.0.0 is not reported: %v", err)
	}
	if !strings.Contains(msg, "bundle tools.v3.0.0") || !strings.Contains(msg, "tools.v2.5.0, which is not in the index") {
		t.Errorf("the second problem (tools.v3.0.0 replaces a bundle nobody gave) is not reported: %v", err)
	}
	if strings.Contains(msg, "names tools.v1.0.0, which is not in the index nor among the bundles being added") {
		t.Errorf("tools.v1.0.0 was given: %v", err)
	}
	if !strings.Contains(msg, "names tools.v1.0.0, which is among the bundles given but could not be added") {
		t.Errorf("the follow-on does not name its cause: %v", err)
	}

	// --permissive skips the bad bundle and the one that needs it, says why,
	// and adds nothing else that is broken.
	res, err := addFixtures(t, AddOptions{Permissive: true}, "two-problems/v1", "two-problems/v2", "two-problems/v3")
	if err != nil {
		t.Fatalf("permissive: %v", err)
	}
	var skipped []string
	for _, s := range res.Skipped {
		skipped = append(skipped, s.Bundle.Name+": "+s.Message)
	}
	all := strings.Join(skipped, "\n")
	if len(res.Skipped) != 3 || !strings.Contains(all, "could not be added") {
		t.Errorf("skipped:\n%s", all)
	}
}
