package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Temporary siblings of a target P are named ".P.opm-tmp-PID-*" (being
// built) and ".P.opm-old-PID-*" (the old content, moved aside): the PID
// tells a later run whether the process that made one still runs.
const (
	KindTmp = "tmp"
	KindOld = "old"
)

// TempPattern is the os.MkdirTemp / os.CreateTemp pattern for a temporary
// sibling of path, of kind KindTmp or KindOld, made by this process.
func TempPattern(path, kind string) string {
	return "." + filepath.Base(path) + ".opm-" + kind + "-" + strconv.Itoa(os.Getpid()) + "-*"
}

// ReplaceDir moves the directory src into place at dst, which exists, and
// removes the old tree. Where the system can exchange two paths in one step
// (Linux's renameat2 RENAME_EXCHANGE) there is no moment without dst.
// Elsewhere (other systems, file systems without the call) the fallback
// moves dst aside to ".dst.opm-old-PID-*" and then src into place; a kill
// between the two leaves no dst but the old tree beside it, which
// CleanStale, run by the next writer of dst, moves back.
func ReplaceDir(src, dst string) error {
	err := exchange(src, dst)
	if err == nil {
		// src now holds the old tree.
		return os.RemoveAll(src)
	}
	if !errors.Is(err, errNoExchange) {
		return err
	}
	old, err := os.MkdirTemp(filepath.Dir(dst), TempPattern(dst, KindOld))
	if err != nil {
		return err
	}
	if err := os.Remove(old); err != nil {
		return err
	}
	if err := os.Rename(dst, old); err != nil {
		return fmt.Errorf("move the old %s aside: %w", dst, err)
	}
	if err := os.Rename(src, dst); err != nil {
		if rerr := os.Rename(old, dst); rerr != nil {
			return fmt.Errorf("%w (and restoring the old content from %s failed: %v)", err, old, rerr)
		}
		return err
	}
	return os.RemoveAll(old)
}

// staleAge is how old a temporary sibling without a PID in its name (made
// by an opm before PIDs were recorded) must be to be taken as abandoned.
const staleAge = time.Hour

// CleanStale removes the temporary siblings of path that opm processes no
// longer running left behind (killed mid-write), and, when path itself is
// missing, first moves back the old content such a process had moved
// aside. It returns what it removed or restored. Siblings of running
// processes are left alone.
func CleanStale(path string) ([]string, error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var done []string
	_, statErr := os.Lstat(path)
	missing := errors.Is(statErr, os.ErrNotExist)
	for _, kind := range []string{KindOld, KindTmp} {
		prefix := "." + base + ".opm-" + kind + "-"
		for _, e := range entries {
			name := e.Name()
			if !strings.HasPrefix(name, prefix) || !abandoned(filepath.Join(dir, name), strings.TrimPrefix(name, prefix)) {
				continue
			}
			full := filepath.Join(dir, name)
			if kind == KindOld && missing {
				if err := os.Rename(full, path); err != nil {
					return done, fmt.Errorf("restore %s from %s: %w", path, full, err)
				}
				missing = false
				done = append(done, "restored "+path+" from "+name)
				continue
			}
			if err := os.RemoveAll(full); err != nil {
				return done, err
			}
			done = append(done, "removed "+full)
		}
	}
	return done, nil
}

// abandoned says whether a sibling whose name ends in rest ("PID-random",
// or only "random" from older opm) belongs to no running process.
func abandoned(full, rest string) bool {
	pidStr, _, ok := strings.Cut(rest, "-")
	if pid, err := strconv.Atoi(pidStr); ok && err == nil && pid > 0 {
		if pid == os.Getpid() {
			return false
		}
		return !processRuns(pid)
	}
	st, err := os.Lstat(full)
	return err == nil && time.Since(st.ModTime()) > staleAge
}

// processRuns reports whether a process with this pid exists.
func processRuns(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
