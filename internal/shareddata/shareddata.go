// Package shareddata finds ../shared, the optional data some tests read,
// placed beside the checkout: corpus/ (real operator bundles from public
// catalogs, and edge cases) and reference/ (outputs of upstream opm
// v1.73.0 and operator-sdk to compare against). It is not part of the
// repository. Tests that need it skip, saying why, when it is absent, and
// fail when it is absent under CI=true, so that CI never passes by
// skipping them.
package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

// Root is the absolute path of ../shared beside the checkout: the
// directory holding the module's go.mod, found from the working directory
// (a test runs in its package's directory), then ../shared. It may not
// exist; "" when no go.mod is found.
func Root() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(dir), "shared")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Path is Root joined with elem; it may not exist.
func Path(elem ...string) string {
	return filepath.Join(append([]string{Root()}, elem...)...)
}

// Require returns Path(elem...) when it exists. When it does not, the
// test skips with the reason, or fails under CI=true.
func Require(t testing.TB, elem ...string) string {
	t.Helper()
	p := Path(elem...)
	if _, err := os.Stat(p); err != nil {
		const why = "../shared (real bundles and upstream reference outputs, placed beside the checkout; see CONTRIBUTING.md) is not available"
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s under CI=true: %v", why, err)
		}
		t.Skipf("skipping: %s: %v", why, err)
	}
	return p
}
