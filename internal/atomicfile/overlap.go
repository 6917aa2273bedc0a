package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// CheckApart refuses to write dst when it overlaps one of sources (local
// paths a command reads; one that does not exist, an image reference say,
// is skipped). A dst that is a source or holds one would lose the source
// when replaced; a dst inside a source would become part of what it was
// made from. Paths are compared with symbolic links resolved, so a link
// to the parent is caught too. The error names both paths.
func CheckApart(dst string, sources ...string) error {
	d, err := resolve(dst)
	if err != nil {
		return err
	}
	for _, src := range sources {
		if src == "" {
			continue
		}
		if _, err := os.Lstat(src); err != nil {
			continue
		}
		s, err := resolve(src)
		if err != nil {
			return err
		}
		switch {
		case within(s, d):
			return fmt.Errorf("%s holds the source %s (or is it): writing there would replace the source; write to a path outside it", dst, src)
		case within(d, s):
			return fmt.Errorf("%s is inside the source %s: the output would become part of the catalog it was made from; write to a path outside it", dst, src)
		}
	}
	return nil
}

// within reports whether path is dir or below it; both are clean and
// absolute.
func within(path, dir string) bool {
	if path == dir {
		return true
	}
	if dir == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(path, dir+string(filepath.Separator))
}

// resolve makes p absolute with the links of its existing part resolved;
// the part that does not exist yet is kept as written.
func resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for cur := abs; ; {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
