package atomicfile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func tree(t *testing.T, dir, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte(content), 0o644))
}

func read(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "f"))
	require.NoError(t, err)
	return string(data)
}

// TestReplaceDirHasNoMomentWithoutDestination: a reader looking at the
// destination all along always finds it, while it is replaced 300 times
// (the old rename-aside-then-in left moments with no directory).
func TestReplaceDirHasNoMomentWithoutDestination(t *testing.T) {
	parent := t.TempDir()
	dst := filepath.Join(parent, "out")
	tree(t, dst, "0")
	if err := exchange(dst, dst); err == errNoExchange {
		t.Skip("the file system of the temporary directory cannot exchange paths: ReplaceDir uses its fallback here")
	}
	var missing, looks atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			looks.Add(1)
			if _, err := os.Stat(filepath.Join(dst, "f")); err != nil {
				missing.Add(1)
			}
		}
	}()
	for i := 1; i <= 300; i++ {
		src, err := os.MkdirTemp(parent, TempPattern(dst, KindTmp))
		require.NoError(t, err)
		tree(t, src, strconv.Itoa(i))
		require.NoError(t, ReplaceDir(src, dst))
	}
	close(stop)
	<-done
	assert.Equal(t, "300", read(t, dst))
	assert.Zero(t, missing.Load(), "the destination was missing in %d of %d looks", missing.Load(), looks.Load())
	left, _ := filepath.Glob(filepath.Join(parent, ".out.opm-*"))
	assert.Empty(t, left)
}

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

// TestCleanStaleRestoresAndRemoves: what a writer killed between the two
// renames of the fallback left (no destination; the old tree aside; the new
// one half-written) is put right by the next run: the old tree back, the
// temporary one removed. Siblings of running processes stay.
func TestCleanStaleRestoresAndRemoves(t *testing.T) {
	parent := t.TempDir()
	dst := filepath.Join(parent, "out")
	dead := strconv.Itoa(deadPID(t))
	old := filepath.Join(parent, ".out.opm-old-"+dead+"-1")
	tmp := filepath.Join(parent, ".out.opm-tmp-"+dead+"-2")
	tmpFile := filepath.Join(parent, ".out.opm-tmp-"+dead+"-3-journal")
	live := filepath.Join(parent, ".out.opm-tmp-"+strconv.Itoa(os.Getppid())+"-4")
	legacy := filepath.Join(parent, ".out.opm-tmp-123456789")
	fresh := filepath.Join(parent, ".out.opm-tmp-987654321")
	other := filepath.Join(parent, ".other.opm-tmp-"+dead+"-5")
	tree(t, old, "old")
	tree(t, tmp, "half")
	require.NoError(t, os.WriteFile(tmpFile, nil, 0o644))
	tree(t, live, "running")
	tree(t, legacy, "legacy")
	tree(t, fresh, "fresh")
	tree(t, other, "other")
	long := time.Now().Add(-2 * staleAge)
	require.NoError(t, os.Chtimes(legacy, long, long))

	done, err := CleanStale(dst)
	require.NoError(t, err)
	assert.Len(t, done, 4, "%v", done)
	assert.Equal(t, "old", read(t, dst), "the old content is back in place")
	for _, gone := range []string{old, tmp, tmpFile, legacy} {
		_, err := os.Lstat(gone)
		assert.True(t, os.IsNotExist(err), "%s left", gone)
	}
	for _, kept := range []string{live, fresh, other} {
		_, err := os.Lstat(kept)
		assert.NoError(t, err, "%s removed", kept)
	}
}
