package diff_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
)

// gateCatalog writes a catalog of package p (bundles p.vN, version N.0.0,
// each replacing the one before on channel stable, in the order given) and,
// unless fragment, of package q.
func gateCatalog(t *testing.T, fragment bool, versions ...int) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(`{"schema":"olm.package","name":"p","defaultChannel":"stable"}` + "\n")
	var entries []string
	for i, v := range versions {
		e := `{"name":"p.v` + itoa(v) + `"`
		if i > 0 {
			e += `,"replaces":"p.v` + itoa(versions[i-1]) + `"`
		}
		entries = append(entries, e+"}")
	}
	b.WriteString(`{"schema":"olm.channel","name":"stable","package":"p","entries":[` + strings.Join(entries, ",") + "]}\n")
	for _, v := range versions {
		b.WriteString(`{"schema":"olm.bundle","name":"p.v` + itoa(v) + `","package":"p","image":"example.com/p:` + itoa(v) + `","properties":[{"type":"olm.package","value":{"packageName":"p","version":"` + itoa(v) + `.0.0"}}]}` + "\n")
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "p"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p", "catalog.json"), []byte(b.String()), 0o644))
	if !fragment {
		q := `{"schema":"olm.package","name":"q","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"q","entries":[{"name":"q.v1"}]}
{"schema":"olm.bundle","name":"q.v1","package":"q","image":"example.com/q:1","properties":[{"type":"olm.package","value":{"packageName":"q","version":"1.0.0"}}]}
`
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "q"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "q", "catalog.json"), []byte(q), 0o644))
	}
	return dir
}

func itoa(v int) string { return string(rune('0' + v)) }

// TestDiffReleaseGates (issue 31, item 3): --fail-on removed fails a
// release that drops a bundle, entry or edge and passes one that only
// adds; heads-moved-back fails a head at a lower version; --fragment
// compares only the fragment's packages, as Konflux's pruning check.
func TestDiffReleaseGates(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	old := gateCatalog(t, false, 1, 2)
	gates := "removed,heads-moved-back"

	added := gateCatalog(t, false, 1, 2, 3)
	r := o.Run("diff", old, added, "--fail-on", gates)
	assert.Equal(t, exit.OK, r.Code, "an addition passes: %s", r.ErrOut)
	assert.NotContains(t, r.ErrOut, "--fail-on")

	dropped := gateCatalog(t, false, 2)
	r = o.Run("diff", old, dropped, "--fail-on", "removed")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	for _, want := range []string{
		"error: --fail-on removed: p: bundle p.v1 (1.0.0) removed\n",
		"error: --fail-on removed: p channel stable: entry p.v1 removed from the channel\n",
		"error: --fail-on removed: p channel stable: upgrade edge lost: p.v1 → p.v2 (replaces)\n",
	} {
		assert.Contains(t, r.ErrOut, want)
	}
	assert.Contains(t, r.Out, "- p.v1 1.0.0 example.com/p:1", "the diff is printed all the same")

	back := gateCatalog(t, false, 1)
	r = o.Run("diff", old, back, "--fail-on", "heads-moved-back")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "error: --fail-on heads-moved-back: p channel stable: head moved back from p.v2 (2.0.0) to p.v1 (1.0.0)\n")
	assert.NotContains(t, r.ErrOut, "--fail-on removed", "only the gates asked for")

	// A fragment holding only p: q is not removed, it is not the
	// fragment's business.
	fragment := gateCatalog(t, true, 1, 2, 3)
	r = o.Run("diff", old, fragment, "--fail-on", gates)
	assert.Equal(t, exit.Failed, r.Code, "without --fragment q is removed")
	assert.Contains(t, r.ErrOut, "error: --fail-on removed: q: package removed, with its 1 bundle\n")
	r = o.Run("diff", old, fragment, "--fail-on", gates, "--fragment", "-o", "json")
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)
	var doc struct {
		FailOn     []string          `json:"failOn"`
		Violations []json.RawMessage `json:"violations"`
		Packages   []struct{ Name string }
	}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &doc))
	assert.Equal(t, []string{"removed", "heads-moved-back"}, doc.FailOn)
	assert.Empty(t, doc.Violations)
	require.Len(t, doc.Packages, 1)
	assert.Equal(t, "p", doc.Packages[0].Name)

	pruned := gateCatalog(t, true, 2)
	r = o.Run("diff", old, pruned, "--fail-on", gates, "--fragment", "-o", "markdown")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "#### Release gates\n\n- ❌ `removed`: 3 violations\n  - `p`: bundle p.v1 (1.0.0) removed\n")
	assert.Contains(t, r.Out, "- ✅ `heads-moved-back`: passed\n")

	r = o.Run("diff", old, added, "--fail-on", "gone")
	assert.Equal(t, exit.Usage, r.Code)
	assert.Contains(t, r.ErrOut, `unknown gate "gone": want one of removed, heads-moved-back, any`)

	r = o.Run("diff", old, added, "--fail-on", "any")
	assert.Equal(t, exit.Failed, r.Code)
	assert.Contains(t, r.ErrOut, "error: --fail-on any: the catalogs differ: ")
	r = o.Run("diff", old, old, "--fail-on", "any")
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)
}
