package root_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
)

// TestServeTimeoutExits124: --timeout stops a server as it stops every
// command, with GNU timeout's 124 (README, docs/output.md), not 0; upstream's
// --timeout-seconds of registry serve is a planned stop and keeps 0.
func TestServeTimeoutExits124(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "index.db")
	r := o.Run("index", "add", "--database", db, "--bundles", validBundle)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	catalog := filepath.Join(dir, "catalog")
	r = o.Run("migrate", db, catalog)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	_, err := os.Stat(catalog)
	require.NoError(t, err)

	r = o.Run("serve", catalog, "-p", "127.0.0.1:0", "-t", "", "--timeout", "300ms")
	assert.Equal(t, exit.TimedOut, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "stopped after 300ms (--timeout)")
	r = o.Run("registry", "serve", "-d", db, "-p", "127.0.0.1:0", "-t", "", "--timeout", "300ms")
	assert.Equal(t, exit.TimedOut, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "stopped after 300ms (--timeout)")

	r = o.Run("registry", "serve", "-d", db, "-p", "127.0.0.1:0", "-t", "", "--timeout-seconds", "1")
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)
}
