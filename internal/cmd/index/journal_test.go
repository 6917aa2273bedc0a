package index_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/index/crashtest"
)

// TestReadersOfKilledWritersDatabaseWarn: after a writer was killed before
// its commit, index export, index inspect and alpha list read a rolled-back
// private copy of the database silently, while serve, render and migrate
// warned. They now say so on stderr, in one line: what happened, that the
// copy was rolled back, how to roll the file back.
func TestReadersOfKilledWritersDatabaseWarn(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "index.db")
	v1, v2 := twoVersions(t)
	r := o.Run("index", "add", "--database", path, "--bundles", v1+","+v2)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	r = o.Run("index", "inspect", path)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	committed := r.Out
	require.Empty(t, r.ErrOut, "no warning without a journal")

	db, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE filler(x)`)
	require.NoError(t, db.Close())
	require.NoError(t, err)
	crashtest.KilledWriter(t, path, `PRAGMA foreign_keys = OFF;
DELETE FROM package; DELETE FROM channel; DELETE FROM channel_entry; DELETE FROM operatorbundle;
INSERT INTO filler SELECT randomblob(1000) FROM (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 3000) SELECT i FROM c);`)
	journal, err := os.ReadFile(path + "-journal")
	require.NoError(t, err)

	warned := func(what string, r cmdtest.Result) {
		t.Helper()
		require.Equal(t, exit.OK, r.Code, "%s: %s", what, r.ErrOut)
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(r.ErrOut), "\n") {
			if strings.Contains(l, "never committed") {
				lines = append(lines, l)
			}
		}
		require.Len(t, lines, 1, "%s: want one warning line about the killed writer:\n%s", what, r.ErrOut)
		for _, want := range []string{"warning:", path, "rolled back", "sqlite3 " + path} {
			assert.Contains(t, lines[0], want, "%s: the warning does not say %q", what, want)
		}
	}

	r = o.Run("index", "inspect", path)
	warned("index inspect", r)
	assert.Equal(t, committed, r.Out, "inspect shows the committed index")

	r = o.Run("index", "inspect", path, "-o", "json")
	warned("index inspect -o json", r)
	assert.Contains(t, r.Out, `"name": "example-operator"`)

	out := filepath.Join(dir, "exported")
	r = o.Run("index", "export", "--index", path, "--download-folder", out)
	warned("index export", r)
	assert.FileExists(t, filepath.Join(out, "example-operator", "package.yaml"))

	r = o.Run("alpha", "list", "packages", path)
	warned("alpha list packages", r)
	assert.Contains(t, r.Out, "\nexample-operator ")

	// Readers leave the file and its journal as they were.
	after, err := os.ReadFile(path + "-journal")
	require.NoError(t, err)
	assert.Equal(t, journal, after, "a reader changed the journal")
}
