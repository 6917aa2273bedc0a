package validate

import (
	"fmt"
	"os"
	"path/filepath"
)

// BundleDirsOf maps files (as a pre-commit hook or `git diff --name-only`
// lists them) to the bundle directories that hold them: for each file, the
// nearest directory at or above it that holds both manifests/ and
// metadata/. Relative paths are never followed above the current
// directory. Files in no bundle are left out; each bundle appears once, in
// the order its first file came.
func BundleDirsOf(files []string) []string {
	var dirs []string
	seen := map[string]bool{}
	for _, f := range files {
		f = filepath.Clean(f)
		d := filepath.Dir(f)
		if st, err := os.Stat(f); err == nil && st.IsDir() {
			d = f
		}
		for {
			if isBundleDir(d) {
				if !seen[d] {
					seen[d] = true
					dirs = append(dirs, d)
				}
				break
			}
			parent := filepath.Dir(d)
			if parent == d || d == "." {
				break
			}
			d = parent
		}
	}
	return dirs
}

// isBundleDir reports whether dir holds manifests/ and metadata/
// directories.
func isBundleDir(dir string) bool {
	for _, sub := range []string{"manifests", "metadata"} {
		st, err := os.Stat(filepath.Join(dir, sub))
		if err != nil || !st.IsDir() {
			return false
		}
	}
	return true
}

// noBundlesReport is the -o json report of a --from-files run whose files
// are in no bundle: the shape of every validate report, with no bundles.
type noBundlesReport struct {
	Passed  bool  `json:"passed"`
	Bundles []any `json:"bundles"`
}

func filesAre(n int) string {
	if n == 1 {
		return "the file given is"
	}
	return fmt.Sprintf("the %d files given are", n)
}
