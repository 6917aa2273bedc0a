package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// smallFS mounts a tmpfs of size bytes for the test, or skips when that is
// not possible (only root may mount).
func smallFS(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: cannot mount a size-limited tmpfs to run out of space on")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs to run out of space on: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, 0) })
	return dir
}

// fillUp leaves about spare bytes free on dir's filesystem.
func fillUp(t *testing.T, dir string, spare int64) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if free <= spare {
		return
	}
	if err := os.WriteFile(filepath.Join(dir, "filler"), make([]byte, free-spare), 0o644); err != nil {
		t.Fatal(err)
	}
}

// bigBatch is n synthetic bundles of one package, each with a long related
// image list so that the batch needs far more space than the test leaves.
func bigBatch(t *testing.T, pkg string, n int) []LoadedBundle {
	t.Helper()
	var specs []spec
	prev := ""
	for i := 0; i < n; i++ {
		s := spec{pkg: pkg, version: fmt.Sprintf("1.0.%d", i), replaces: prev}
		for j := 0; j < 40; j++ {
			s.images = append(s.images, fmt.Sprintf("quay.io/test/%s-image-%d-%d-%s@sha256:%064d", pkg, i, j, strings.Repeat("x", 200), j))
		}
		specs = append(specs, s)
		prev = pkg + ".v" + s.version
	}
	return loadAll(t, specs...)
}

// A write that runs out of space fails and leaves the database exactly as it
// was, with no journal beside it: readers must not find a killed writer's
// journal to play back.
func TestDiskFullAddRollsBack(t *testing.T) {
	for _, spare := range []int64{16 << 10, 64 << 10, 256 << 10, 1 << 20} {
		t.Run(strconv.FormatInt(spare>>10, 10)+"KiB", func(t *testing.T) {
			dir := smallFS(t, "16m")
			path := filepath.Join(dir, "index.db")
			seed, err := Create(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := seed.Add(context.Background(), bigBatch(t, "seed", 3), AddOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := seed.Close(); err != nil {
				t.Fatal(err)
			}
			before := fileBytes(t, path)
			fillUp(t, dir, spare)
			db, err := OpenWith(path, OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_, addErr := db.Add(context.Background(), bigBatch(t, "big", 300), AddOptions{})
			if cerr := db.Close(); cerr != nil {
				t.Logf("close: %v", cerr)
			}
			if addErr == nil {
				t.Fatalf("the add fitted in %d spare bytes; the test needs it not to", spare)
			}
			t.Logf("add failed as expected: %v", addErr)
			if fileBytes(t, path) != before {
				t.Error("the database file changed")
			}
			assertOnlyFiles(t, dir, "index.db", "filler")
		})
	}
}
