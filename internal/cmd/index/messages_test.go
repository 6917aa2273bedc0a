package index_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
)

// An empty index says so, in text; in JSON its lists are [].
func TestIndexInspectEmpty(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	db := filepath.Join(t.TempDir(), "index.db")
	r := o.Run("index", "add", "--database", db, "--bundles", validBundle)
	require.Equal(t, 0, r.Code, r.ErrOut)
	r = o.Run("index", "rm", "--database", db, "--operators", "example-operator")
	require.Equal(t, 0, r.Code, r.ErrOut)

	r = o.Run("index", "inspect", db)
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Empty(t, r.Out)
	assert.Contains(t, r.ErrOut, db+": no packages")

	r = o.Run("index", "inspect", db, "-o", "json")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.JSONEq(t, `{"schemaVersion": 13, "packages": []}`, r.Out)
	assert.Empty(t, r.ErrOut)

	r = o.Run("index", "export", "--index", db, "-f", filepath.Join(t.TempDir(), "out"), "--output", "json")
	require.Equal(t, 0, r.Code, r.ErrOut)
	var exp map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.Out), &exp))
	assert.Equal(t, []any{}, exp["packages"])
}

// index export -o json says what was exported, from where to where.
func TestIndexExportJSON(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	db := filepath.Join(t.TempDir(), "index.db")
	out := filepath.Join(t.TempDir(), "out")
	r := o.Run("index", "add", "--database", db, "--bundles", validBundle)
	require.Equal(t, 0, r.Code, r.ErrOut)
	r = o.Run("index", "export", "--index", db, "-f", out, "--output", "json")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Empty(t, r.ErrOut)
	assert.JSONEq(t, `{"index": "`+db+`", "folder": "`+out+`", "packages": ["example-operator"], "bundles": 1, "fetched": 0}`, r.Out)
}

// A bundle image that cannot be opened is not a bundle to validate: the
// advice is to check the reference; a broken directory gets
// `opm bundle validate` with its path.
func TestIndexAddLoadFailureAdvice(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "index.db")
	img := "oci:" + filepath.Join(dir, "no-layout") + ":1"

	r := o.Run("index", "add", "--database", db, "--bundles", img)
	require.Equal(t, 1, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "nothing was added; check that each image reference exists and can be pulled")
	assert.NotContains(t, r.ErrOut, "opm bundle validate")

	r = o.Run("index", "add", "--database", db, "--bundles", img+","+syntaxBundle)
	require.Equal(t, 1, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "check that each image reference exists")
	assert.Contains(t, r.ErrOut, "`opm bundle validate "+syntaxBundle+"` shows every problem with its fix")
}
