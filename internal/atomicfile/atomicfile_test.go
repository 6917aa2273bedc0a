package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteReplacesOrLeavesAlone(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	require.NoError(t, WriteFile(p, []byte("one")))
	require.NoError(t, WriteFile(p, []byte("two")))
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "two", string(got))
	st, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())

	boom := errors.New("boom")
	err = Write(p, func(w io.Writer) error {
		_, _ = w.Write([]byte("half"))
		return boom
	})
	assert.ErrorIs(t, err, boom)
	got, _ = os.ReadFile(p)
	assert.Equal(t, "two", string(got), "a failed write leaves the old content")
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "no temporary file is left")
}
