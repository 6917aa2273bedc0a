package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckInside: a path under base is refused when a link among its
// parts (itself included) leads out of base, or leads nowhere; the error
// names the link. Links that stay inside, parts not made yet, and a base
// that is itself a link pass.
func TestCheckInside(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(repo, "catalogs", "real"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(repo, name)); err != nil {
			t.Fatal(err)
		}
	}
	link(outside, "catalogs/v4.16")
	link("real", "catalogs/v4.17")
	link("../../outside", "catalogs/relative")
	link(filepath.Join(outside, "gone"), "catalogs/dangling")
	link(filepath.Join(outside, "f.yaml"), "catalogs/real/file.yaml")
	repoLink := filepath.Join(root, "repo-link")
	if err := os.Symlink(repo, repoLink); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		base, target string
		link         string // "" when it passes
	}{
		{repo, filepath.Join(repo, "catalogs", "v4.16", "pkg", "catalog.yaml"), filepath.Join(repo, "catalogs", "v4.16")},
		{repo, filepath.Join(repo, "catalogs", "relative", "pkg"), filepath.Join(repo, "catalogs", "relative")},
		{repo, filepath.Join(repo, "catalogs", "dangling", "pkg"), filepath.Join(repo, "catalogs", "dangling")},
		{repo, filepath.Join(repo, "catalogs", "real", "file.yaml"), filepath.Join(repo, "catalogs", "real", "file.yaml")},
		{repoLink, filepath.Join(repoLink, "catalogs", "v4.16", "pkg"), filepath.Join(repoLink, "catalogs", "v4.16")},
		{repo, filepath.Join(repo, "catalogs", "v4.17", "pkg", "catalog.yaml"), ""},
		{repo, filepath.Join(repo, "catalogs", "new", "pkg", "catalog.yaml"), ""},
		{repoLink, filepath.Join(repoLink, "catalogs", "v4.17", "pkg"), ""},
	} {
		err := CheckInside(tc.base, tc.target)
		switch {
		case tc.link == "" && err != nil:
			t.Errorf("%s: %v", tc.target, err)
		case tc.link != "" && err == nil:
			t.Errorf("%s: passed, want the link %s refused", tc.target, tc.link)
		case tc.link != "" && !strings.Contains(err.Error(), tc.link+" is a symbolic link to "):
			t.Errorf("%s: the error does not name the link %s: %v", tc.target, tc.link, err)
		}
	}
	if err := CheckInside(repo, filepath.Join(root, "elsewhere")); err == nil {
		t.Error("a target outside base passed")
	}
}
