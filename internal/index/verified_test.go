package index

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A file opm checked and then changed only through sqlite is recorded; one
// changed behind opm's back is checked again (and, damaged, refused).
func TestVerifiedLogSkipsRecheckOfUnchangedFile(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "cache", "verified.json")
	path := filepath.Join(dir, "index.db")
	db, err := Create(path)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	require.False(t, isVerified(log, path), "nothing is recorded before a check")
	db, err = OpenWith(path, OpenOptions{VerifiedLog: log})
	require.NoError(t, err)
	_, err = db.sql.ExecContext(context.Background(), `INSERT INTO deprecated(operatorbundle_name) VALUES ('x')`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	require.True(t, isVerified(log, path), "a checked file, changed through sqlite, is recorded as opm left it")

	// Changed by something else: the identity differs, so the next open
	// checks again, finds the damage and forgets the file.
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	pageSize := int(data[16])<<8 | int(data[17])
	if pageSize == 1 {
		pageSize = 65536
	}
	require.Greater(t, len(data), 2*pageSize)
	for i := pageSize; i < 2*pageSize; i++ {
		data[i] = 0xff
	}
	require.NoError(t, os.WriteFile(path, data, 0o644))
	require.False(t, isVerified(log, path), "a file changed outside opm is not verified")
	_, err = OpenWith(path, OpenOptions{VerifiedLog: log})
	require.ErrorIs(t, err, ErrCorrupt)
	require.False(t, isVerified(log, path))
}

func TestVerifiedLogTrustsOnlyWhatItRecorded(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "verified.json")
	path := filepath.Join(dir, "index.db")
	db, err := Create(path)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	// A damaged file never checked before is refused even with a log.
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	pageSize := int(data[16])<<8 | int(data[17])
	for i := pageSize; i < 2*pageSize && i < len(data); i++ {
		data[i] = 0xff
	}
	require.NoError(t, os.WriteFile(path, data, 0o644))
	_, err = OpenWith(path, OpenOptions{VerifiedLog: log})
	require.ErrorIs(t, err, ErrCorrupt)

	// A damaged log is no log.
	require.NoError(t, os.WriteFile(log, []byte("{not json"), 0o644))
	require.False(t, isVerified(log, path))
}

// Damage written in place with the file's size, mtime and header counters
// kept (a forgery, or a tool that restores times) used to skip the check:
// the identity now holds the status-change time, which cannot be set back,
// so the file is checked again and refused. (Damage that bypasses the file
// system, a disk fault, is still not looked for: that is the trade the log
// makes, and why it holds only files opm itself checked and wrote.)
func TestVerifiedLogSeesDamageWithTimesRestored(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "verified.json")
	path := filepath.Join(dir, "index.db")
	db, err := Create(path)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	db, err = OpenWith(path, OpenOptions{VerifiedLog: log})
	require.NoError(t, err)
	// Rows enough for leaf pages that opening never reads.
	_, err = db.sql.ExecContext(context.Background(), `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 3000)
		INSERT INTO deprecated(operatorbundle_name) SELECT printf('bundle-%05d-padding-padding-padding', i) FROM n`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	st, err := os.Stat(path)
	require.NoError(t, err)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	hdr := make([]byte, 18)
	_, err = f.ReadAt(hdr, 0)
	require.NoError(t, err)
	pageSize := int64(hdr[16])<<8 | int64(hdr[17])
	junk := make([]byte, pageSize)
	for i := range junk {
		junk[i] = 0xff
	}
	// The last page: a table's or index's, not read to open the file.
	_, err = f.WriteAt(junk, st.Size()-pageSize)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.Chtimes(path, st.ModTime(), st.ModTime()))

	require.False(t, isVerified(log, path), "the damaged file keeps its recorded identity")
	_, err = OpenWith(path, OpenOptions{VerifiedLog: log})
	require.ErrorIs(t, err, ErrCorrupt, "the check runs again and finds the damage")
}

// Entries of databases that are gone (temporary ones) leave the log.
func TestVerifiedLogForgetsRemovedFiles(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "verified.json")
	for _, name := range []string{"tmp.db", "kept.db"} {
		path := filepath.Join(dir, name)
		db, err := Create(path)
		require.NoError(t, err)
		require.NoError(t, db.Close())
		db, err = OpenWith(path, OpenOptions{VerifiedLog: log})
		require.NoError(t, err)
		require.NoError(t, db.Close())
		if name == "tmp.db" {
			require.NoError(t, os.Remove(path))
		}
	}
	m := readVerified(log)
	require.Len(t, m, 1, "%v", m)
	abs, _ := filepath.Abs(filepath.Join(dir, "kept.db"))
	require.Contains(t, m, abs)
}
