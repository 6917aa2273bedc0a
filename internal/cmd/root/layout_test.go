package root

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxCommandPackageLines bounds each package of internal/cmd (non-test Go
// lines): commands are options, one library call and rendering, and work
// a second command could use belongs in a library package
// (docs/architecture.md).
const maxCommandPackageLines = 300

func TestCommandPackagesStayThin(t *testing.T) {
	t.Parallel()
	lines := map[string]int{}
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines[filepath.Dir(p)] += bytes.Count(b, []byte("\n"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) < 10 {
		t.Fatalf("found only %d command packages under internal/cmd: the walk is looking in the wrong place", len(lines))
	}
	for dir, n := range lines {
		if n > maxCommandPackageLines {
			t.Errorf("internal/cmd/%s holds %d lines of non-test Go (at most %d): move the work a second command could use into a library package under internal/ (docs/architecture.md)",
				strings.TrimPrefix(filepath.ToSlash(dir), "../"), n, maxCommandPackageLines)
		}
	}
}
