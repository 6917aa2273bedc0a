package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// CheckInside refuses target, a path a command writes under base (a
// repository, an output directory), when it resolves outside base: when
// one of its parts below base, target itself included, is a symbolic link
// that leads out of base (or leads nowhere, so that where it would lead
// cannot be told). A link that stays inside base is followed. The error
// names the link, where it leads, and base. base itself may be a link:
// the user named it.
func CheckInside(base, target string) error {
	absBase, err := filepath.Abs(base)
	if err != nil {
		return err
	}
	absTarget, err := filepath.Abs(target)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(absBase, absTarget)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s is outside %s: opm writes only inside it", target, base)
	}
	realBase, err := resolve(absBase)
	if err != nil {
		return err
	}
	cur := absBase
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." || part == "" {
			continue
		}
		cur = filepath.Join(cur, part)
		st, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // the rest does not exist yet: opm makes it, as directories
		}
		if err != nil {
			return err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		dest, _ := os.Readlink(cur)
		real, err := filepath.EvalSymlinks(cur)
		if err != nil {
			return fmt.Errorf("%s is a symbolic link to %s, which does not resolve (%v): opm writes only inside %s; remove the link or make it a directory", cur, dest, err, base)
		}
		if real, err = filepath.Abs(real); err != nil {
			return err
		}
		if !within(real, realBase) {
			return fmt.Errorf("%s is a symbolic link to %s, outside %s: opm writes only inside it; replace the link with a directory (or a file) of its own", cur, dest, base)
		}
	}
	return nil
}
